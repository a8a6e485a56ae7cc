"""How the database file is opened, written and read whole: WAL mode, write transactions that
take the write lock before they read, and a table read a batch of rows at a time."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator

# How long opening the database or a write waits for another process's (seconds).
BUSY_TIMEOUT = 10


def use_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Put the database in WAL mode (it stays so), which lets Datasette read while a supervisor
    writes. Switching needs the database to itself and SQLite does not wait for that (its busy
    timeout does not cover it): supervisors opening a new database at once each retry until
    one of them has switched it."""
    deadline = time.monotonic() + timeout
    while conn.execute("pragma journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("pragma journal_mode = wal")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def batches(conn: sqlite3.Connection, table: str, columns: list[str], size: int = 1000) -> Iterator[list[tuple]]:
    """Every row of `table` as (id, *columns), `size` at a time in id order: a table of millions
    is never held whole, and a row the caller writes between batches is not read again."""
    last = 0
    while rows := conn.execute(f'select id, {", ".join(columns)} from "{table}" where id > ? order by id limit ?', [last, size]).fetchall():
        yield rows
        last = rows[-1][0]


class Connection(sqlite3.Connection):
    """Every write transaction takes the write lock before it reads. A deferred one (plain
    `BEGIN`, as sqlite-utils' inserts open theirs) reads the schema first, and if another
    process commits in between, SQLite fails it at once with "database is locked", no busy
    wait: 9 of 10 processes lost their first insert when started together, and 8 of 10 busy
    sessions lost events. `isolation_level` covers the sqlite3 module's own BEGINs."""

    def execute(self, sql, *args):
        if sql.strip().rstrip(";").upper() == "BEGIN":
            sql = "BEGIN IMMEDIATE"
        return super().execute(sql, *args)
