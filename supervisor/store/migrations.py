"""The database's schema: ordered, named migrations, applied whenever it opens (database.py),
so a database written by an older supervise is upgraded in place. A change to the schema is
a new migration at the end; a released one is never edited.

They run through sqlite-utils' migrations (its `_sqlite_migrations` table records them), but
whether any is pending is one plain query: importing sqlite-utils costs 40-45 ms, a third of
a `supervise` command's time, and is needed only when the schema changes.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import sqlite_utils

SET = "supervise"
# The full-text indexes, the columns each covers, and how their words are split and stemmed.
FTS = {"log_chunks": ["text"], "events": ["kind", "detail"], "contexts": ["prompt"]}
TOKENIZER = "porter unicode61"
REINDEX_SAID = 50_000_000  # characters of logs past which re-making the index is said (~2 s)
MASKED_PER_SECOND = 5e6  # characters the masks go through a second (docs/benchmarks.md: secret masking)
STEPS: list[Callable[[sqlite_utils.Database], None]] = []


def migrations() -> Callable:
    """Register the function below as the next migration (named after it)."""

    def register(fn: Callable) -> Callable:
        STEPS.append(fn)
        return fn

    return register


@migrations()
def m001_sessions_and_events(db: sqlite_utils.Database) -> None:
    db.table("sessions").create(
        {
            "id": str,
            "name": str,
            "command": str,
            "argv": str,
            "agent": str,
            "cwd": str,
            "started": str,
            "ended": str,
            "exit_code": int,
            "status": str,
            "pid": int,
            "child_pid": int,
            "cast_path": str,
            "log_path": str,
            "parent_id": str,
        },
        pk="id",
        not_null={"command", "argv", "cwd", "started", "status"},
        foreign_keys=[("parent_id", "sessions", "id")],
    )
    db.table("sessions").create_index(["started"])
    db.table("sessions").create_index(["status"])
    db.table("events").create(
        {"id": int, "session_id": str, "time": str, "offset": float, "kind": str, "detail": str},
        pk="id",
        not_null={"session_id", "time", "kind"},
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db.table("events").create_index(["session_id", "offset"])
    db.table("events").create_index(["kind"])


@migrations()
def m002_agent_session_id(db: sqlite_utils.Database) -> None:
    # The agent's own id for the session (its transcript's session uuid), needed to resume it.
    db.table("sessions").add_column("agent_session_id", str)


@migrations()
def m003_contexts(db: sqlite_utils.Database) -> None:
    db.table("contexts").create(
        {
            "id": int,
            "session_id": str,
            "round": int,
            "created": str,
            "trigger": str,
            "source": str,  # model | heuristic
            "model": str,
            "error": str,  # why the model was not used, when it was not
            "digest_tokens": int,
            "input_tokens": int,
            "output_tokens": int,
            "cost_usd": float,
            "context": str,  # JSON
            "prompt": str,
        },
        pk="id",
        not_null={"session_id", "round", "created", "trigger", "source", "context", "prompt"},
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db.table("contexts").create_index(["session_id", "round"], unique=True)


@migrations()
def m004_session_options(db: sqlite_utils.Database) -> None:
    # How the session was run (pattern files, emulator, injection...), JSON: resume runs it alike.
    db.table("sessions").add_column("options", str)


@migrations()
def m005_context_offsets(db: sqlite_utils.Database) -> None:
    # How far into the text log and the transcript (bytes) a round has read: the next round
    # digests only what came since, chained with this one (a round costs the same at hour 5);
    # and how long the round took to make.
    db.table("contexts").add_column("log_offset", int)
    db.table("contexts").add_column("transcript_offset", int)
    db.table("contexts").add_column("duration_ms", int)


@migrations()
def m006_agent_messages(db: sqlite_utils.Database) -> None:
    # `supervise agent`'s conversation, message by message, in the order it happened.
    db.table("messages").create(
        {
            "id": int,
            "session_id": str,
            "seq": int,
            "role": str,  # user | assistant | tool (a tool result; sent to the model in a user turn)
            "content": str,  # JSON: the message's content blocks
            "tokens": int,  # estimate
            "usage": str,  # JSON: the step's usage from the API (assistant messages)
            "interrupted": int,  # a partial answer kept when the user pressed Ctrl-C
            "compacted": int,
            "pruned": int,
            "created": str,
        },
        pk="id",
        not_null={"session_id", "seq", "role", "content", "created"},
        defaults={"interrupted": 0, "compacted": 0, "pruned": 0},
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db.table("messages").create_index(["session_id", "seq"], unique=True)


@migrations()
def m007_search(db: sqlite_utils.Database) -> None:
    # The text logs, in chunks of whole lines, for full-text search (Datasette's search box):
    # added as sessions run and when they end. Events and context prompts are searchable too.
    db.table("log_chunks").create(
        {"id": int, "session_id": str, "start": int, "end": int, "text": str},
        pk="id",
        not_null={"session_id", "start", "end", "text"},
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db.table("log_chunks").create_index(["session_id", "start"], unique=True)
    db.table("log_chunks").enable_fts(["text"], create_triggers=True)
    db.table("events").enable_fts(["kind", "detail"], create_triggers=True)
    db.table("contexts").enable_fts(["prompt"], create_triggers=True)


@migrations()
def m008_context_backend(db: sqlite_utils.Database) -> None:
    # Who was asked for the context: api, an agent CLI by name (on the user's login; one that
    # cannot summarize answers why), or heuristic (nobody).
    # `source` still says what the context is (model or heuristic): a CLI call that hit
    # a usage limit is backend that CLI, source heuristic, with the reason in `error`.
    db.table("contexts").add_column("backend", str)


@migrations()
def m009_session_state(db: sqlite_utils.Database) -> None:
    # What a running session's agent is doing, as its screen shows it (status/states.py): written by
    # the recorder when it changes, read by `supervise ps`.
    db.table("sessions").add_column("state", str)
    db.table("sessions").add_column("state_since", str)  # ISO 8601, UTC
    db.table("sessions").add_column("state_detail", str)  # JSON: reset_at, context_left, ...


@migrations()
def m010_projects_and_stemmed_search(db: sqlite_utils.Database) -> None:
    # Each session's project (the git top-level of its folder, else the folder; project.py)
    # and branch: the default scope of search, the MCP server and the brief. Sessions
    # recorded before are given theirs from their folder as it is now.
    from .. import project

    db.table("sessions").add_column("project", str)
    db.table("sessions").add_column("branch", str)
    db.table("sessions").create_index(["project", "started"])
    for (cwd,) in db.execute("select distinct cwd from sessions").fetchall():
        db.execute("update sessions set project = ? where cwd = ?", [project.root(cwd), cwd])
    # Search matches other forms of a word (fix, fixed, fixing): the indexes are made again
    # with the Porter stemmer, which takes a while on a large database: said, not silent.
    size = db.execute("select coalesce(sum(length(text)), 0) from log_chunks").fetchone()[0]
    if size > REINDEX_SAID:
        print(
            f"supervise: making the search index again with stemming, once: {size / 1e6:,.0f} MB of logs ...", file=sys.stderr, flush=True
        )
    for table, columns in FTS.items():
        db.table(table).enable_fts(columns, create_triggers=True, tokenize=TOKENIZER, replace=True)


@migrations()
def m011_paths_relative_to_the_database(db: sqlite_utils.Database) -> None:
    # A session's recording and text log are kept relative to the database's folder, so the
    # folder can be moved or copied whole. An absolute path inside it is made relative; so is
    # one that is gone whose sessions/ID/FILE is here (the folder was moved before this ran).
    # A path elsewhere stays as it is.
    from .. import paths

    home = home_of(db)
    if home is None:
        return
    rows = db.execute("select id, cast_path, log_path from sessions where cast_path is not null or log_path is not null").fetchall()
    for sid, *files in rows:
        kept = [paths.stored(paths.resolved(f, home) or f, home) if f else f for f in files]
        if kept != files:
            db.execute("update sessions set cast_path = ?, log_path = ? where id = ?", [*kept, sid])


@migrations()
def m012_project_keys(db: sqlite_utils.Database) -> None:
    # What a session's project is known by, whatever its folder is called or wherever it is
    # now (project.py): a git repository's root commit, else its origin, else the folder.
    # Sessions recorded before get theirs from their folder as it is now; one that is gone
    # keeps its folder's path.
    from .. import project

    db.table("sessions").add_column("project_key", str)
    db.table("sessions").create_index(["project_key", "started"])
    known: list[str] = []
    rows = db.execute("select distinct cwd, project from sessions order by started").fetchall()
    for cwd, root in rows:
        there = next((f for f in (cwd, root) if f and os.path.isdir(f)), None)
        key = project.identify(project.of(there), known=known) if there else root or cwd
        if key.startswith(project.GIT) and key not in known:
            known.insert(0, key)
        db.execute("update sessions set project_key = ? where cwd is ? and project is ?", [key, cwd, root])


def home_of(db: sqlite_utils.Database) -> Path | None:
    """The folder of the database `db` is open on (None: one in memory)."""
    for _, name, file in db.execute("pragma database_list").fetchall():
        if name == "main" and file:
            return Path(file).parent
    return None


@migrations()
def m013_log_indexed(db: sqlite_utils.Database) -> None:
    # Whether a session's text log was indexed to its end (its recorder's last pass). Sessions
    # recorded before are looked at once, by the next recorder or search (recording/logindex.py).
    from .. import paths

    db.table("sessions").add_column("log_indexed", int, not_null_default=0)
    home = home_of(db) or Path.cwd()
    ended = db.execute(
        """select id, log_path, (select coalesce(max("end"), 0) from log_chunks c where c.session_id = s.id)
        from sessions s where status != 'active'"""
    ).fetchall()
    for sid, log_path, indexed in ended:
        try:
            whole = not log_path or os.stat(paths.resolved(log_path, home) or log_path).st_size <= indexed
        except OSError:
            whole = True  # no log to index
        if whole:
            db.execute("update sessions set log_indexed = 1 where id = ?", [sid])
    # every recorder and search asks which sessions are not: a read of a few rows, not of all
    db.execute("create index if not exists idx_sessions_log_behind on sessions(started) where log_indexed = 0")


@migrations()
def m014_secrets_masked(db: sqlite_utils.Database) -> None:
    # What the database holds is what its doors show (Datasette's SQL included), so it holds
    # it masked: command lines, names, events, contexts, conversations and the search index.
    # The raw record is the sessions' files; the command as run is kept in each session's
    # folder first (`resume` runs it).
    import json

    from .. import commandline, paths
    from ..redact import redact
    from . import remask

    size = db.execute("select coalesce(sum(length(text)), 0) from log_chunks").fetchone()[0]
    if size:
        took = f" (about {size / MASKED_PER_SECOND / 60:.0f} min)" if size > 60 * MASKED_PER_SECOND else ""
        said = f"supervise: masking secrets in the database and its search index, once: {size / 1e6:,.1f} MB{took} ..."
        print(said, file=sys.stderr, flush=True)
    home = home_of(db)
    for sid, argv_text, command, name, cast in db.execute("select id, argv, command, name, cast_path from sessions").fetchall():
        try:
            argv = json.loads(argv_text) if argv_text else []
        except ValueError:
            argv = []
        argv = [a for a in argv if isinstance(a, str)] if isinstance(argv, list) else []
        folder = Path(paths.resolved(cast, home) or "").parent if cast and home else None
        if argv and folder is not None and folder.is_dir() and not (folder / commandline.KEPT).exists():
            commandline.keep(folder, argv)
        shown = commandline.shown(argv) if argv else redact(command or "")
        db.execute(
            "update sessions set argv = ?, command = ?, name = ? where id = ?",
            [json.dumps(commandline.masked(argv)), shown, redact(name) if name else name, sid],
        )
    remask.rows(db, "events", ["detail"], remask.json_masked)
    remask.rows(db, "contexts", ["prompt", "context", "error"], remask.json_masked)
    remask.rows(db, "messages", ["content"], remask.json_masked)
    remask.rows(db, "log_chunks", ["text"], redact)


@migrations()
def m015_every_script_searched(db: sqlite_utils.Database) -> None:
    # Text in scripts written without spaces (Chinese, Japanese, Thai, ...) is found by any
    # stretch of it: a second index of such rows, as pairs of characters (store/grams.py).
    from . import grams

    grams.create(db.conn)
    for table in grams.TABLES:
        grams.fill(db.conn, table)


@migrations()
def m016_search_by_meaning(db: sqlite_utils.Database) -> None:
    # With an embeddings endpoint set, each chunk and context as the vectors of its passages
    # (store/vectors.py); empty until then.
    from . import vectors

    vectors.create(db.conn)


def applied(conn: sqlite3.Connection) -> list[str]:
    """The names of the migrations this database has had, in the order they ran."""
    try:
        rows = conn.execute("select name from _sqlite_migrations where migration_set = ? order by id", [SET]).fetchall()
    except sqlite3.OperationalError:  # a new database: no table yet
        return []
    return [name for (name,) in rows]


def pending(conn: sqlite3.Connection) -> list[str]:
    """The migrations this database has yet to have (a database opened read-only cannot have them)."""
    done = set(applied(conn))
    return [fn.__name__ for fn in STEPS if fn.__name__ not in done]


def apply(conn: sqlite3.Connection) -> None:
    """Bring the database up to date. The steps run in one write transaction (its BEGIN is
    IMMEDIATE, database.py) that decides what is pending once it holds the lock: supervisors
    opening one database at once (`supervise -- AGENT` and a `supervise ps` beside it) wait
    for each other, and none runs a step another has just run ("duplicate column name")."""
    if not pending(conn):
        return
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    steps = sqlite_utils.Migrations(SET)
    for fn in STEPS:
        steps()(fn)
    with db.atomic():  # each step nests in it as a savepoint
        steps.apply(db)


def apply_apart(path: Path) -> None:
    """The database at `path` brought up to date in a short process of its own, if it must be: a
    session's processes never hold sqlite-utils. What fails there, the caller's open says."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            todo = bool(pending(conn))
        finally:
            conn.close()
    except sqlite3.Error:  # no database yet (or one the caller's open will tell about)
        todo = True
    if todo:
        import subprocess

        subprocess.run([sys.executable, "-P", "-m", __name__, str(path)], stdout=subprocess.DEVNULL)


def _main(path: str) -> int:
    from .database import Store

    try:
        Store(Path(path)).close()
        return 0
    except Exception:  # said by the caller's own open
        return 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1]))
