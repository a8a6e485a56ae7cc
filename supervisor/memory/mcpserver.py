"""What `supervise mcp` (mcpentry.py) answers: the memory tools over the store, for an agent
to look things up in what supervise recorded. Read-only (the database is opened so that it cannot be
written), each call within DEADLINE or a clear error, every answer made by answers.py.

It answers for its own project (the folder it is started for): what an agent asks of
another (all_projects, another project's session, another folder's brief) is refused,
unless the user's [memory] mcp_all_projects widens it; an agent's arguments never do. A
refusal, or arguments that are not the tool's, is one line of ours, marked as an error.

Its name is `supervise`; an agent sees its tools as search, session, excerpt and brief
(an agent may prefix them with the server's name)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import SuperviseError
from ..store import damage
from ..store import projects
from ..store.database import Store
from . import answers, query, search as searching, similar
from .embedclient import Client

DEADLINE = 2.0  # seconds a call may take
PROGRESS_STEPS = 10_000  # SQLite virtual-machine steps between two looks at the clock


class Memory:
    """The tools' work, outside the protocol: what each call answers (text), for the project
    of the folder `project` (its default; its only one unless `everywhere`)."""

    def __init__(
        self,
        db_path: Path,
        project: str | None,
        session_id: str | None = None,
        counted: Callable[[str], None] | None = None,
        everywhere: bool = False,
        embeddings: Client | None = None,
    ):
        self.db_path = db_path
        self.project = project  # None: no default project (`supervise mcp --all`)
        self.everywhere = everywhere  # the user's [memory] mcp_all_projects
        self.session_id = session_id  # the session the asking agent runs in (left out of its brief)
        self.counted = counted or (lambda tool: None)  # told each call's tool (telemetry)
        self.embeddings = embeddings  # the user's embeddings endpoint: search by meaning too

    def _store(self, deadline: float) -> Store:
        if not self.db_path.exists():
            raise answers.Refused("supervise has recorded no session yet")
        try:
            store = Store(self.db_path, never=True)
        except SuperviseError as exc:
            raise answers.Refused(exc.message) from None
        store.conn.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
        return store

    def call(self, tool: str, work: Callable[[Store], str]) -> str:
        self.counted(tool)
        deadline = time.monotonic() + DEADLINE
        try:
            store = self._store(deadline)
        except answers.Refused as exc:
            return f"supervise: {exc}"
        try:
            answer = work(store)
            # an answer given past a damaged page says so, as the commands do (store/damage.py)
            return f"{answer}\n{damage.incomplete(self.db_path)}" if store.incomplete else answer
        except answers.Refused as exc:
            return f"supervise: {exc}"
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                return f"supervise: the lookup took longer than {DEADLINE:.0f} s and was stopped; use rarer words or fewer of them"
            return f"supervise: the store could not be read ({answers.clean(str(exc), 200)}); `supervise doctor` checks it"
        except sqlite3.DatabaseError as exc:
            if not damage.is_damage(exc):
                raise
            return f"supervise: {damage.damaged(self.db_path)}"
        finally:
            store.close()

    def search(self, text: str, agent: str | None = None, since: str | None = None, all_projects: bool = False, limit: int = 8) -> str:
        def work(store: Store) -> str:
            try:
                when = query.since(since) if since else None
            except query.BadQuery as exc:
                raise answers.Refused(str(exc)) from None
            key = self._within(store)
            if all_projects and key is not None:
                raise answers.Refused(f"all_projects is refused: {answers.only(store, key)}")
            if key is None and not all_projects and self.project is not None:
                key = self._key(store, self.project)  # widened: its own project is still the default
            scope = searching.Scope(project=key, agent=agent or None, since=when)
            notes: list[str] = []
            meaning = similar.prepared(store, self.embeddings, text, notes.append, DEADLINE / 2)
            answer = answers.search(store, text, scope, max(1, min(limit, 20)), meaning)
            return "\n".join([answer, *(f"supervise: {answers.clean(n, 300)}" for n in notes)])

        return self.call("search", work)

    def session(self, session_id: str) -> str:
        return self.call("session", lambda store: answers.session(store, session_id, self._within(store)))

    def excerpt(self, hit_id: str, around: int | None = None, lines: int = answers.EXCERPT_LINES) -> str:
        return self.call("excerpt", lambda store: answers.excerpt(store, hit_id, around, lines, self._within(store)))

    def brief(self, project: str | None = None) -> str:
        from ..project import root

        def work(store: Store) -> str:
            where = root(project) if project else self.project
            if where is None:
                raise answers.Refused('brief needs project (this server has none of its own), e.g. brief(project="/path/to/repo")')
            key, within = self._key(store, where), self._within(store)
            if within is not None and key != within:
                raise answers.Refused(f"a brief of {answers.clean(project or '', 200)!r} is refused: {answers.only(store, within)}")
            return answers.brief(store, key, self.session_id)

        return self.call("brief", work)

    def _within(self, store: Store) -> str | None:
        """The project the answers are kept to (its key), None for every project."""
        if self.everywhere:
            return None
        if self.project is None:
            raise answers.Refused("this server has no project of its own; start it in a project's folder or with --project DIR")
        return self._key(store, self.project)

    @staticmethod
    def _key(store: Store, folder: str) -> str:
        """What the project of `folder` is known by (a folder that is gone: as it was recorded)."""
        return projects.key_for(store, folder) or folder
