"""The search index's second index: the rows of the logs' chunks and of the contexts that hold
text in a script written without spaces (bigrams.py), as pairs of characters, found where
the word index finds such a run only whole. Kept beside each row as it goes in (the table's
own triggers cannot: they run in SQL, the pairs are made here), made again with the word
index. It holds no text of its own (FTS5 contentless): the rowid is the row's."""

from __future__ import annotations

import sqlite3
import sys

from .. import bigrams
from .connection import batches
from .searched import SOURCES

# Each searched table's second index (named for it), and the column it covers.
TABLES = {table: (f"{table}_grams", column) for table, column, _ in SOURCES.values()}
SAID = 50_000_000  # characters past which filling it is said, not silent


def create(conn: sqlite3.Connection) -> None:
    for name, _ in TABLES.values():
        columns = ", ".join(bigrams.COLUMNS)
        conn.execute(f"create virtual table if not exists {name} using fts5({columns}, content='', tokenize=\"{bigrams.TOKENIZER}\")")


def add(conn: sqlite3.Connection, table: str, rowid: int, text: str | None) -> bool:
    """A row just written (in the caller's transaction), if its text holds such a script; whether it did."""
    if not (text and bigrams.holds(text)):
        return False
    conn.execute(f"insert into {TABLES[table][0]}(rowid, text, ends) values (?, ?, ?)", [rowid, *bigrams.indexed(text)])
    return True


def fill(conn: sqlite3.Connection, table: str) -> int:
    """Made again from every row of `table`; returns how many rows it holds."""
    name, column = TABLES[table]
    conn.execute(f"insert into {name}({name}) values ('delete-all')")
    size = conn.execute(f"select coalesce(sum(length({column})), 0) from {table}").fetchone()[0]
    if size > SAID:
        print(
            f"supervise: indexing text in every script for search, once: {size / 1e6:,.0f} MB of {table} ...", file=sys.stderr, flush=True
        )
    return sum(add(conn, table, rowid, text) for rows in batches(conn, table, [column]) for rowid, text in rows)
