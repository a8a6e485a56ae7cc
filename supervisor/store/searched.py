"""The rows search reads, by source: the logs' chunks and the contexts. Each source's table, the
column that holds its text, and where a row stands: a chunk's byte offset in its session's
text log, a context's round. The word index, the second index (grams.py) and the vectors
(vectors.py) are each kept over these rows."""

from __future__ import annotations

import sqlite3

# source: (table, text column, where a row stands)
SOURCES = {"log": ("log_chunks", "text", "start"), "context": ("contexts", "prompt", "round")}


def text_of(conn: sqlite3.Connection, source: str, row: int) -> tuple[str, int] | None:
    """A row's text and where it stands; None once it is gone (a session deleted meanwhile)."""
    table, column, place = SOURCES[source]
    found = conn.execute(f"select {column}, {place} from {table} where id = ?", [row]).fetchone()
    return (found[0], found[1]) if found is not None else None
