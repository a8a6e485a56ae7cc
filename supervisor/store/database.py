"""The SQLite store: sessions and their events.

The schema is the ordered, named migrations in `migrations.py`, applied whenever the
database opens, so a database written by an older supervise is upgraded in place. WAL mode
lets Datasette read while a supervisor writes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..plaintext import quoted
from ..commandline import masked_data
from ..redact import redact, redact_data
from ..errors import SuperviseError
from . import damage, grams, readonly
from .connection import BUSY_TIMEOUT, Connection, use_wal
from .damage import damaged, is_damage
from .migrations import apply as _apply_migrations

if TYPE_CHECKING:
    import sqlite_utils

# Lower-case letters and digits without the look-alikes 0/o, 1/l/i: easy to read aloud and type.
ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ID_LENGTH = 6

ACTIVE, COMPLETED, FAILED, INTERRUPTED = "active", "completed", "failed", "interrupted"
# A session's files, kept relative to the database's folder (paths.stored), read where they are now.
FILE_COLUMNS = ("cast_path", "log_path")
# Longer than any id this or an older supervise made: not an id (and not a LIKE pattern to run).
MAX_ID_LENGTH = 32


def utcnow() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def new_id() -> str:
    # os.urandom with rejection, as secrets.choice does (importing secrets slows every command's start)
    while True:
        picks = [b for b in os.urandom(ID_LENGTH * 2) if b < 256 // len(ID_ALPHABET) * len(ID_ALPHABET)]
        if len(picks) >= ID_LENGTH:
            return "".join(ID_ALPHABET[b % len(ID_ALPHABET)] for b in picks[:ID_LENGTH])


@dataclass(frozen=True)
class Event:
    """One recorded event."""

    kind: str
    detail: Mapping[str, Any]
    offset: float
    time: str


class Store:
    """One connection to the database. Use one Store per thread (sqlite3 connections are not shared).

    Its own queries are plain sqlite3: sqlite-utils (`self.db`, for the modules that build
    rows with it) is loaded on first use, as its import costs 40-45 ms of every command."""

    def __init__(self, path: Path, write: bool = True, never: bool = False):
        """`write=False`: a command that only reads, which opens the database read-only where
        it cannot be written (nothing is created, migrated or made private then); `never`:
        read-only wherever it is (a reader beside running sessions, such as the MCP server)."""
        self.path = Path(path)
        self.home = self.path.parent  # the session files it names are kept relative to it
        self.read_only = never or (not write and readonly.cannot_write(self.path))
        try:
            if self.read_only:
                self.conn = readonly.connect(self.path, BUSY_TIMEOUT, check_same_thread=False, factory=Connection)
            else:
                self.conn = self._open_to_write()
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):  # not a database, or a damaged one: left as it is for `doctor --repair`
                raise damaged(self.path) from exc
            # locked, read-only, out of disk: the file is fine
            raise SuperviseError(
                f"cannot open database {self.path}: {exc}",
                "another program holds it locked: close that and run again" if "locked" in str(exc) else None,
            ) from exc
        self._db: sqlite_utils.Database | None = None
        self.incomplete = False  # a read stepped past damage: what it answered may be incomplete
        self._read_past = False  # the last read did

    def _open_to_write(self) -> sqlite3.Connection:
        paths.ensure_private_dir(self.path.parent)
        existed = self.path.exists()
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level="IMMEDIATE", factory=Connection)
        try:
            if not existed:
                os.chmod(self.path, 0o600)
            use_wal(conn, BUSY_TIMEOUT)
            _apply_migrations(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @classmethod
    def open_default(cls, env: Mapping[str, str] | None = None, write: bool = True) -> "Store":
        return cls(paths.db_path(env), write)

    def located(self, stored: str | None) -> str | None:
        """A path this database keeps (a session's recording, its text log), where it is now."""
        return paths.resolved(stored, self.home)

    @property
    def db(self) -> "sqlite_utils.Database":
        """sqlite-utils over the same connection."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    def close(self) -> None:
        self.conn.close()

    def not_waiting_for_disk(self) -> None:
        """Its commits no longer wait for the disk (WAL's `synchronous = normal`): a power cut
        may take the last of them back, never the database's soundness. For writes that are
        made again from files: the search index from the logs, a session's row from its
        folder (`doctor --repair`)."""
        self.conn.execute("pragma synchronous = normal")

    def _rows(self, sql: str, params: Any = ()) -> list[dict]:
        """The rows `sql` selects; where it meets a bad page, those it selects of what can be read."""
        names, rows, self._read_past = damage.read(self.conn, self.path, sql, params)
        self.incomplete = self.incomplete or self._read_past
        return [dict(zip(names, row)) for row in rows]

    def _none(self, error: SuperviseError) -> SuperviseError:
        """What to say when a read found nothing: `error`, or the damage that may have hidden it."""
        return damaged(self.path) if self._read_past else error

    def _insert(self, table: str, record: Mapping[str, Any]) -> int:
        with self.conn:
            return self._insert_now(table, record)

    def _insert_now(self, table: str, record: Mapping[str, Any]) -> int:
        """The insert within the transaction that is open."""
        columns = ", ".join(f'"{k}"' for k in record)
        rowid = self.conn.execute(
            f'insert into "{table}" ({columns}) values ({", ".join("?" * len(record))})', list(record.values())
        ).lastrowid
        assert rowid is not None  # an insert always sets it
        return rowid

    def _update(self, table: str, key: Any, fields: Mapping[str, Any]) -> None:
        if not fields:
            return
        assignments = ", ".join(f'"{k}" = ?' for k in fields)
        with self.conn:
            self.conn.execute(f'update "{table}" set {assignments} where id = ?', [*fields.values(), key])

    # -- sessions ---------------------------------------------------------------------------

    def create_session(self, session_id: str | None = None, **fields: Any) -> dict:
        """A new session row; `session_id` if one was chosen beforehand (the agent already
        runs with it in its environment), else a new one."""
        record = {"id": session_id or self.free_id(), "started": utcnow(), "status": ACTIVE, **self._kept(fields)}
        if isinstance(record.get("argv"), (list, tuple)):
            record["argv"] = json.dumps(list(record["argv"]))
        if isinstance(record.get("options"), dict):
            record["options"] = json.dumps(record["options"])
        self._insert("sessions", record)
        return self.get_session(record["id"])

    def free_id(self) -> str:
        """An id no session has yet."""
        candidate = new_id()
        for _ in range(19):
            if not self.conn.execute("select 1 from sessions where id = ?", [candidate]).fetchone():
                break
            candidate = new_id()
        return candidate

    def update_session(self, session_id: str, **fields: Any) -> None:
        self._update("sessions", session_id, self._kept(fields))

    def _kept(self, fields: Mapping[str, Any]) -> dict:
        """A session's fields as stored: its files' paths relative to the database's folder."""
        return {k: paths.stored(v, self.home) if k in FILE_COLUMNS and v else v for k, v in fields.items()}

    def finish_session(self, session_id: str, status: str, exit_code: int | None) -> None:
        self.update_session(session_id, status=status, exit_code=exit_code, ended=utcnow())

    def get_session(self, session_id: str) -> dict:
        rows = self._rows("select * from sessions where id = ?", [session_id])
        if not rows:
            raise self._none(SuperviseError(f"no session {session_id}", "run `supervise sessions` to list ids"))
        return _decode_session(rows[0], self.home)

    def sessions(self, limit: int | None = None, project: str | None = None) -> list[dict]:
        """The newest `limit` sessions (all with None), newest first; of one project (its key) if given."""
        self.mark_dead_sessions()
        where = "where project_key = ? " if project is not None else ""
        rows = self._rows(
            f"select * from sessions {where}order by started desc, rowid desc limit ?",
            [*([project] if project is not None else []), -1 if limit is None else limit],
        )
        return [_decode_session(r, self.home) for r in rows]

    def count_sessions(self, project: str | None = None) -> int:
        if project is not None:
            return self._rows("select count(*) as n from sessions where project_key = ?", [project])[0]["n"]
        return self._rows("select count(*) as n from sessions")[0]["n"]

    def resolve(self, prefix: str) -> dict:
        """Find a session by any unique prefix of its id."""
        prefix = prefix.strip().lower()
        if not prefix:
            raise SuperviseError("empty session id", "run `supervise sessions` to list ids")
        if len(prefix) > MAX_ID_LENGTH:
            raise SuperviseError(
                f"'{quoted(prefix)}' is not a session id: ids are {ID_LENGTH} letters and digits", "run `supervise sessions` to list ids"
            )
        rows = self._rows(
            "select id from sessions where id like ? escape '\\' order by started desc",
            [prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"],
        )
        if not rows:
            raise self._none(SuperviseError(f"no session matches '{quoted(prefix)}'", "run `supervise sessions` to list ids"))
        if len(rows) > 1 and not any(r["id"] == prefix for r in rows):
            ids = ", ".join(r["id"] for r in rows[:5])
            raise SuperviseError(
                f"'{quoted(prefix)}' is ambiguous: it matches {len(rows)} sessions ({ids})",
                "type more characters of the id",
            )
        self.mark_dead_sessions()
        return self.get_session(rows[0]["id"] if len(rows) == 1 else prefix)

    def latest(self) -> dict:
        self.mark_dead_sessions()
        rows = self._rows("select id from sessions order by started desc, rowid desc limit 1")
        if not rows:
            raise self._none(SuperviseError("there are no sessions yet", "start one with `supervise -- CMD`"))
        return self.get_session(rows[0]["id"])

    def children(self, session_id: str) -> list[dict]:
        return [
            _decode_session(r, self.home) for r in self._rows("select * from sessions where parent_id = ? order by started", [session_id])
        ]

    def mark_dead_sessions(self) -> None:
        """A session whose supervisor process is gone (killed, crashed) is `interrupted`, not `active`
        (said when the database can be written; read-only, it stays as it reads)."""
        if self.read_only:
            return
        for row in self._rows("select id, pid from sessions where status = ?", [ACTIVE]):
            if not supervisor_alive(row["pid"]):
                self.update_session(row["id"], status=INTERRUPTED)

    def set_state(self, session_id: str, state: str, since: str, detail: Mapping[str, Any]) -> None:
        self.update_session(session_id, state=state, state_since=since, state_detail=json.dumps(dict(detail), ensure_ascii=False))

    def running(self) -> list[dict]:
        """The sessions whose supervisor is alive, newest first."""
        self.mark_dead_sessions()
        rows = self._rows("select * from sessions where status = ? order by started desc, rowid desc", [ACTIVE])
        if self.read_only:  # (not marked: looked at)
            rows = [r for r in rows if supervisor_alive(r["pid"])]
        return [_decode_session(r, self.home) for r in rows]

    # -- events -----------------------------------------------------------------------------

    def add_event(self, session_id: str, event: Event, masked: bool = False) -> int:
        """`masked`: its detail has been masked already (the events thread masks once for the
        store and its subscribers alike)."""
        return self._insert("events", _event_row(session_id, event, masked))

    def update_event_detail(self, event_id: int, detail: Mapping[str, Any], masked: bool = False) -> None:
        self._update("events", event_id, {"detail": _detail_json(detail, masked)})

    # -- contexts -------------------------------------------------------------------------------

    def add_context(self, session_id: str, render: Callable[[int], str], **fields: Any) -> dict:
        """Store a context as the session's next round (1, 2, ...); `render(round)` gives its
        prompt. Round and prompt are decided in one write transaction, so two processes
        making a round of one session at once (a `resume` during the session-end context)
        each get their own round and each prompt names its own."""
        with self.conn:
            self.conn.execute("begin immediate")  # the round is ours until the commit (a select alone opens no transaction)
            row = self.conn.execute("select coalesce(max(round), 0) + 1 from contexts where session_id = ?", [session_id]).fetchone()
            record = {"session_id": session_id, "round": row[0], "created": utcnow(), **fields, "prompt": redact(render(row[0]))}
            context = record.get("context")
            record["context"] = redact(context) if isinstance(context, str) else json.dumps(redact_data(context), ensure_ascii=False)
            if record.get("error"):
                record["error"] = redact(record["error"])
            rowid = self._insert_now("contexts", record)
            grams.add(self.conn, "contexts", rowid, record["prompt"])
        context = self.latest_context(session_id)
        assert context is not None  # the round inserted above
        return context

    def latest_context(self, session_id: str) -> dict | None:
        rows = self._rows("select * from contexts where session_id = ? order by round desc limit 1", [session_id])
        return _decode_context(rows[0]) if rows else None

    def contexts(self, session_id: str) -> list[dict]:
        return [_decode_context(r) for r in self._rows("select * from contexts where session_id = ? order by round", [session_id])]

    def prompts(self, session_id: str, last: int) -> list[tuple[str, dict]]:
        """(prompt, context) of the session's latest `last` rounds, oldest first."""
        rows = self._rows("select prompt, context from contexts where session_id = ? order by round desc limit ?", [session_id, last])
        return [(r["prompt"], json.loads(r["context"]) if r["context"] else {}) for r in reversed(rows)]

    def events(self, session_id: str, kind: str | None = None) -> list[dict]:
        """The session's events in order (of one kind, if given)."""
        out = []
        where, params = ("session_id = ? and kind = ?", [session_id, kind]) if kind else ("session_id = ?", [session_id])
        for row in self._rows(f"select * from events where {where} order by offset, id", params):
            row["detail"] = json.loads(row["detail"]) if row["detail"] else {}
            out.append(row)
        return out


def _detail_json(detail: Mapping[str, Any], masked: bool) -> str:
    return json.dumps(dict(detail) if masked else masked_data(dict(detail)), ensure_ascii=False)


def _event_row(session_id: str, e: Event, masked: bool = False) -> dict:
    return {
        "session_id": session_id,
        "time": e.time,
        "offset": round(e.offset, 6),
        "kind": e.kind,
        "detail": _detail_json(e.detail, masked),
    }


def _decode_context(row: Mapping[str, Any]) -> dict:
    out = dict(row)
    out["context"] = json.loads(out["context"]) if out.get("context") else {}
    return out


def _decode_session(row: Mapping[str, Any], home: Path) -> dict:
    out = dict(row)
    out.update({key: paths.resolved(out[key], home) for key in FILE_COLUMNS if key in out})
    try:
        out["argv"] = json.loads(out["argv"]) if out.get("argv") else []
    except ValueError:
        out["argv"] = []
    for key in ("options", "state_detail"):
        try:
            out[key] = json.loads(out[key]) if out.get(key) else {}
        except ValueError:
            out[key] = {}
    return out


def supervisor_alive(pid: int | None) -> bool:
    """Is `pid` a live supervise process? A reused pid that runs something else counts as dead."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc (macOS): trust kill(0)
    # A zombie has an empty cmdline: dead for our purposes.
    return b"supervis" in cmdline
