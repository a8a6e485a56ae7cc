"""How many lines of each session a search found match it: the "… 97 more" of a session
whose hits show three. Counted in its log's chunks through the index that found them (a
range query over the session's own chunks), in its contexts, and its name; a session with
more than COUNTED matching chunks is counted in the first of them ("at least")."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from . import query
from .query import OPEN

if TYPE_CHECKING:
    from .search import Index

COUNTED = 40  # matching chunks of one session whose lines are counted (about 320 KB of its log)


def matching_lines(conn: sqlite3.Connection, indexes: list[Index], session_id: str) -> tuple[int, bool]:
    """(lines of the session's log and contexts that match, whether there are more than that)."""
    span = conn.execute("select min(id), max(id) from log_chunks where session_id = ?", [session_id]).fetchone()
    seen: set[tuple[str, int]] = set()  # a row two indexes found is counted once
    count, more = 0, False
    for index in indexes:
        found = _contexts(conn, index, session_id)
        if span[0] is not None:
            chunks = _chunks(conn, index, session_id, span)
            more = more or len(chunks) > COUNTED
            found += chunks[:COUNTED]
        for key, marked in found:
            if key not in seen:
                seen.add(key)
                count += sum(OPEN in line for line in marked.split("\n"))
    return count, more


def _chunks(conn: sqlite3.Connection, index: Index, session_id: str, span: tuple[int, int]) -> list[tuple[tuple[str, int], str]]:
    # the range of the session's ids first (the index reads only that stretch), its own among them
    mine = f"join log_chunks c on c.id = f.rowid where {index.logs} match :q and f.rowid between :lo and :hi and c.session_id = :sid"
    params = {"q": index.expression, "lo": span[0], "hi": span[1], "sid": session_id, "n": COUNTED + 1}
    if index.words is None:
        rows = conn.execute(
            f"select f.rowid, highlight({index.logs}, 0, char(1), char(2)) from {index.logs} f {mine} order by f.rowid limit :n", params
        ).fetchall()
        return [(("log", rowid), marked) for rowid, marked in rows]
    rows = conn.execute(f"select f.rowid, c.text from {index.logs} f {mine} order by f.rowid limit :n", params).fetchall()
    return [(("log", rowid), query.marked(text, index.words)) for rowid, text in rows]


def _contexts(conn: sqlite3.Connection, index: Index, session_id: str) -> list[tuple[tuple[str, int], str]]:
    mine = "rowid in (select id from contexts where session_id = :sid)"
    params = {"q": index.expression, "sid": session_id}
    if index.words is None:
        rows = conn.execute(
            f"select rowid, highlight({index.contexts}, 0, char(1), char(2)) from {index.contexts} where {index.contexts} match :q and {mine}",
            params,
        ).fetchall()
        return [(("context", rowid), marked) for rowid, marked in rows]
    rows = conn.execute(
        f"select c.id, c.prompt from contexts c where c.id in (select rowid from {index.contexts} where {index.contexts} match :q and {mine})",
        params,
    ).fetchall()
    return [(("context", rowid), query.marked(prompt or "", index.words)) for rowid, prompt in rows]
