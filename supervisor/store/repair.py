"""Repairing a damaged database: what can be read of it goes into a fresh one, and the damaged
file is kept aside. Python's sqlite3 has no `.recover`, so each table is read row by row in
rowid order, stepping over the rows a bad page holds (`damage.readable_rows`).

Also what the session folders hold that the database does not (`unlisted`): the recordings
whose row was lost; recording/reimport.py brings them back.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..errors import SuperviseError
from . import grams
from .damage import is_damage, readable_rows
from .database import ACTIVE, Store, supervisor_alive
from .readonly import schema_read

# What is copied, parents first. The search tables (`*_fts`) are not: the fresh database's
# triggers index the rows again as they go in.
TABLES = ("sessions", "events", "contexts", "messages", "log_chunks", "embedders", "passage_vectors")
# A session folder's name is its id (any supervise's: at most 32 letters and digits).
FOLDER_ID = re.compile(r"[0-9a-z]{1,32}")


@dataclass
class Kept:
    """What was copied from a damaged database."""

    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied


def is_sound(path: Path) -> bool:
    """Does the database pass SQLite's integrity check? (A missing one is sound: there is nothing to lose.)"""
    if not path.exists():
        return True
    try:
        conn = _reader(path)
        try:
            return [r[0] for r in conn.execute("pragma integrity_check").fetchall()] == ["ok"]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            return False
        raise SuperviseError(f"cannot read database {path}: {exc}", "run again once nothing else holds it") from exc


def refuse_if_running(path: Path) -> None:
    """A session still being recorded writes to this file: it is not moved from under it."""
    try:
        conn = _reader(path)
    except sqlite3.DatabaseError:
        return
    try:
        for _, session_id, status, pid in readable_rows(conn, "sessions", ["id", "status", "pid"]):
            if status == ACTIVE and supervisor_alive(pid):
                raise SuperviseError(
                    f"session {session_id} is still running (pid {pid}): its database is not repaired under it",
                    f"let it end (or `kill {pid}`), then run `supervise doctor --repair` again",
                )
    finally:
        conn.close()


def rebuild(path: Path, now: float | None = None) -> tuple[Path, Kept]:
    """Put a fresh database, holding what could be read of the damaged one, where it was;
    returns where the damaged file went (with its -wal and -shm) and what was kept. The
    fresh one is made beside it first: a repair that stops half way has moved nothing."""
    fresh = path.with_name(path.name + ".repairing")
    for suffix in ("", "-wal", "-shm"):  # left by a repair that was stopped
        Path(f"{fresh}{suffix}").unlink(missing_ok=True)
    store = Store(fresh)
    try:
        kept = salvage(path, store)
    finally:
        store.close()
    aside = move_aside(path, now)
    for suffix in ("-wal", "-shm", ""):
        if Path(f"{fresh}{suffix}").exists():
            os.rename(f"{fresh}{suffix}", f"{path}{suffix}")
    return aside, kept


def move_aside(path: Path, now: float | None = None) -> Path:
    """Rename the database and its -wal and -shm to `NAME.damaged-YYYYmmdd-HHMMSS` (-wal, -shm):
    SQLite finds a log by its database's name, so the copy reads as the file did."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while any(Path(f"{aside}{s}").exists() for s in ("", "-wal", "-shm")):
        n += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    try:
        for suffix in ("-wal", "-shm", ""):  # the database last: until it moves, it stays whole where it was
            if Path(f"{path}{suffix}").exists():
                os.rename(f"{path}{suffix}", f"{aside}{suffix}")
    except OSError as exc:
        raise SuperviseError(
            f"cannot move the damaged database {path} aside: {exc.strerror or exc}",
            f"make {path.parent} writable, then run `supervise doctor --repair` again",
        ) from exc
    return aside


def salvage(damaged: Path, store: Store) -> Kept:
    """Copy every readable row of `damaged` into `store` (fresh), ids kept."""
    kept = Kept()
    try:
        source = _reader(damaged)
    except sqlite3.DatabaseError:  # not even its first page: nothing to keep
        return kept
    try:
        for table in TABLES:
            kept.rows[table] = _copy(source, store.conn, table)
        with store.conn:
            for table in grams.TABLES:
                grams.fill(store.conn, table)
    finally:
        source.close()
    return kept


def _copy(source: sqlite3.Connection, target: sqlite3.Connection, table: str) -> int:
    try:
        theirs = [r[1] for r in source.execute(f'pragma table_info("{table}")').fetchall()]
    except sqlite3.DatabaseError:  # its schema is unreadable
        return 0
    info = target.execute(f'pragma table_info("{table}")').fetchall()
    columns = [r[1] for r in info if r[1] in theirs]
    if not columns:
        return 0
    # An INTEGER PRIMARY KEY is the rowid: kept as the id. Otherwise (sessions) the rowid is
    # copied too, as `sessions` orders by it among sessions started at once.
    with_rowid = not any(r[5] == 1 and r[2].upper() == "INTEGER" for r in info)
    names = (["rowid"] if with_rowid else []) + columns
    insert = f'insert or ignore into "{table}" ({", ".join(names)}) values ({", ".join("?" * len(names))})'
    count = 0
    with target:
        for row in readable_rows(source, table, columns):
            target.execute(insert, row if with_rowid else row[1:])
            count += 1
    return count


def stored(path: Path) -> str:
    """A file of a session's folder as a repair gives it to its row (the store keeps it as it keeps every path)."""
    return str(path)


def recording(store: Store, stored_path: str) -> Path:
    """The file a row's stored path names, where it is now (the one place a repair reads one)."""
    return Path(store.located(stored_path) or stored_path)


def without_events(store: Store) -> list[dict]:
    """The sessions over, with a recording, that have no events (every run has its start):
    after a repair, those whose events were on a bad page."""
    return [
        dict(zip(("id", "cast_path", "exit_code", "cwd"), row))
        for row in store.conn.execute(
            "select id, cast_path, exit_code, cwd from sessions where status != ? and coalesce(cast_path, '') != '' "
            "and not exists (select 1 from events where events.session_id = sessions.id) order by started",
            [ACTIVE],
        )
        if recording(store, row[1]).is_file()
    ]


def unlisted(store: Store, sessions_dir: Path) -> list[Path]:
    """The session folders holding a recording whose session is not in the database, oldest first."""
    try:
        folders = [f for f in sessions_dir.iterdir() if FOLDER_ID.fullmatch(f.name) and (f / "session.cast").is_file()]
    except OSError:  # no sessions yet
        return []
    known = {row[0] for row in store.conn.execute("select id from sessions")}
    return sorted((f for f in folders if f.name not in known), key=lambda f: ((f / "session.cast").stat().st_mtime, f.name))


def _reader(path: Path) -> sqlite3.Connection:
    """A connection that reads `path` and never writes it (the damaged file is kept as it is)."""
    return schema_read(sqlite3.connect("file:" + quote(str(path.resolve())) + "?mode=ro", uri=True, timeout=10))
