"""A damaged database, said one way wherever it is met: when it opens, in a query of any
command, and by `supervise doctor`; and read past. A query that meets a bad page is answered
again from the rows that can be read (`rows_past`), and the command says, in one line, that
its answer may be incomplete (`take`, `incomplete`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from ..errors import SuperviseError

REPAIR = "supervise doctor --repair"
# SQLite's primary result codes for a damaged file: SQLITE_CORRUPT (and its extended codes), SQLITE_NOTADB.
_DAMAGE_CODES = (11, 26)
# The tables a query may be answered again from, read row by row past a bad page.
TABLES = ("sessions", "events", "contexts", "messages", "log_chunks")
MIN_ROWID, MAX_ROWID = -(2**63), 2**63 - 1
_HINT = f"`{REPAIR}` keeps what is readable, moves the damaged file aside and brings every recording back"
# The databases whose damage a read stepped past in this process, not yet said.
_met: dict[str, None] = {}


def is_damage(exc: BaseException) -> bool:
    """Is `exc` SQLite saying the file is damaged (not busy, locked, read-only or out of space)?"""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    text = str(exc).lower()
    return "locked" not in text and any(w in text for w in ("malformed", "not a database", "disk image", "corrupt"))


def damaged(path: Path) -> SuperviseError:
    """The one line for a damaged database, and its fix."""
    return SuperviseError(f"database {path} is damaged: SQLite cannot read all of it", _HINT)


def incomplete(path: Path | str) -> str:
    """The one line for an answer given past the damage."""
    return f"supervise: database {path} is damaged: this answer may be incomplete (hint: {_HINT})"


def met(path: Path | str) -> None:
    """A read stepped past damage in `path`: the command's answer may be incomplete."""
    _met[str(path)] = None


def take() -> list[str]:
    """The lines for the damage met since the last call (each database once)."""
    lines = [incomplete(p) for p in _met]
    _met.clear()
    return lines


def read(conn: sqlite3.Connection, path: Path, sql: str, params) -> tuple[list[str], list[tuple], bool]:
    """(column names, rows) that `sql` selects, and whether it was read past damage (`rows_past`; said by `take`)."""
    try:
        cursor = conn.execute(sql, params)
        return [d[0] for d in cursor.description], cursor.fetchall(), False
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
    names, rows = rows_past(conn, sql, params)
    met(path)
    return names, rows, True


def rows_past(conn: sqlite3.Connection, sql: str, params) -> tuple[list[str], list[tuple]]:
    """`sql` answered from what can be read: each table it names copied, row by row past its
    bad pages (with its rowids, with no index that could be damaged), into a database in
    memory, where it runs again. Raises the damage again when a table it needs cannot be
    copied (its schema is unreadable, or it is a full-text index). Returns (column names, rows)."""
    words = set(re.findall(r"\w+", sql))
    if any(w.endswith("_fts") for w in words):
        raise sqlite3.DatabaseError("database disk image is malformed")
    memory = sqlite3.connect(":memory:")
    try:
        for table in (t for t in TABLES if t in words):
            columns = [r[1] for r in conn.execute(f'pragma table_info("{table}")').fetchall()]
            listed = ", ".join(f'"{c}"' for c in columns)
            memory.execute(f'create table "{table}" ({listed})')
            memory.executemany(
                f'insert into "{table}" (rowid, {listed}) values ({", ".join("?" * (len(columns) + 1))})',
                readable_rows(conn, table, columns),
            )
        cursor = memory.execute(sql, params)
        names = [d[0] for d in cursor.description or ()]
        return names, cursor.fetchall()
    finally:
        memory.close()


def readable_rows(conn: sqlite3.Connection, table: str, columns: list[str]) -> Iterator[tuple]:
    """(rowid, *columns) of every row of `table` that can be read, in rowid order. A scan that
    meets a bad page goes on from the first rowid past it that can be reached."""
    select = f'select rowid, {", ".join(chr(34) + c + chr(34) for c in columns)} from "{table}"'
    after: int | None = None  # the last rowid read, or the last one known to be past a bad page
    while True:
        try:
            for row in (
                conn.execute(select + " order by rowid")
                if after is None
                else conn.execute(select + " where rowid > ? order by rowid", [after])
            ):
                after = row[0]
                yield row
            return
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
        after = _past_damage(conn, table, MIN_ROWID if after is None else after)
        if after is None:
            return


def _past_damage(conn: sqlite3.Connection, table: str, after: int) -> int | None:
    """The least rowid from which a scan reads again (its next row can be read), looking past
    `after` in growing steps, then back by halves; None when nothing past it can be."""

    def reads_from(rowid: int) -> bool:
        try:
            conn.execute(f'select * from "{table}" where rowid > ? order by rowid limit 1', [rowid]).fetchall()
            return True
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            return False

    bad, step = after, 1
    while not reads_from(min(bad + step, MAX_ROWID)):
        if bad + step >= MAX_ROWID:
            return None
        bad, step = bad + step, step * 2
    good = min(bad + step, MAX_ROWID)
    while good - bad > 1:
        middle = (bad + good) // 2
        bad, good = (bad, middle) if reads_from(middle) else (middle, good)
    return good
