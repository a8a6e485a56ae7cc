"""The search index kept whole: the end of sessions whose recorder stopped before it indexed
them, and the whole index made again from the text logs and contexts (the logs are the
record; the index is made from them)."""

from __future__ import annotations

from pathlib import Path

from ..recording import logindex
from ..store import grams, vectors
from ..store.database import Store


def caught_up(store: Store) -> int:
    """The end of each session whose recorder was stopped before it indexed it, indexed now
    (where the data folder can be written); how many."""
    if store.read_only or not logindex.behind(store):
        return 0
    return logindex.catch_up(store)


def reindex(store: Store, report=None) -> tuple[int, int]:
    """The search index made again from every session's text log (a running one's up to
    where it is: its recorder adds the rest) and every context: for an index lost or damaged
    (the logs are the record; the index is made from them). Returns (sessions, chunks)."""
    conn = store.conn
    store.mark_dead_sessions()
    with conn:
        # made to match its chunks first: deleting them from an index that lost them fails
        conn.execute("insert into log_chunks_fts(log_chunks_fts) values ('rebuild')")
        conn.execute("delete from log_chunks")
        vectors.forget(conn, "log")  # (the chunks' ids change)
        conn.execute("insert into log_chunks_fts(log_chunks_fts) values ('rebuild')")
        conn.execute("insert into contexts_fts(contexts_fts) values ('rebuild')")
        grams.fill(conn, "contexts")
        grams.fill(conn, "log_chunks")  # (empty: the chunks go in again below, each with its pairs)
    sessions = chunks = 0
    for sid, log_path, status in conn.execute(
        "select id, log_path, status from sessions where log_path is not null order by started"
    ).fetchall():
        path = Path(store.located(log_path) or log_path)
        if not path.exists():
            continue
        index = logindex.index_new if status == "active" else logindex.finish
        chunks += index(store, sid, path)
        sessions += 1
        if report is not None:
            report(sessions)
    return sessions, chunks
