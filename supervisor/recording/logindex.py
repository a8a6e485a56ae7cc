"""The text log in the database, for search: what the log gained since the last chunk, cut
at line ends into chunks of about CHUNK bytes. Run off the terminal's and the detector's
way (the context keeper's thread, and the recorder as it finishes)."""

from __future__ import annotations

from pathlib import Path

from ..store.database import Store

CHUNK = 8192  # bytes: a search hit shows a screenful or so around the word
MAX_CHUNK = 4 * CHUNK  # a very long line is cut into chunks too
BLOCK = 4 << 20  # bytes of the log read at a time
FINISH_MAX = 32 << 20  # bytes indexed as a session ends (see _skip_flood)


def index_new(store: Store, session_id: str, log_path: Path, limit: int | None = None) -> int:
    """Add what `log_path` gained since its last chunk (at most `limit` bytes of it: while a
    session runs, indexing a flood in one transaction kept the database locked, and the
    detector's events waited: p99 290 ms at 10 MB/s; the rest follows at the next call);
    returns how many chunks were added. With no limit (the session's end), the rest, a
    block at a time (a 1 GB log is never read into memory whole; see _skip_flood)."""
    added = 0
    if limit is None:
        added += _skip_flood(store, session_id, log_path)
    while True:
        n = _index_block(store, session_id, log_path, min(limit or BLOCK, BLOCK))
        added += n
        if not n or limit is not None:
            return added


def _skip_flood(store: Store, session_id: str, log_path: Path) -> int:
    """Past FINISH_MAX bytes left to index as the session ends, the rest but its last
    FINISH_MAX goes into the index as one line saying so: the keeper indexes only while the
    output is calm, so this is a flood, and indexing 1 GB of it kept the recorder busy for
    three minutes after the session ended (and doubled the database)."""
    start = _indexed_to(store, session_id)
    try:
        with open(log_path, "rb") as fh:
            size = fh.seek(0, 2)
            if size - start <= FINISH_MAX:
                return 0
            fh.seek(size - FINISH_MAX)
            cut = size - FINISH_MAX + len(fh.readline())
    except OSError:
        return 0
    note = f"[supervise: {(cut - start) / 1e6:.0f} MB of a flood of output not indexed for search; it is in the text log]"
    _insert(store, (session_id, start, cut, note))
    return 1


def _indexed_to(store: Store, session_id: str) -> int:
    row = store.conn.execute('select coalesce(max("end"), 0) from log_chunks where session_id = ?', [session_id]).fetchone()
    return row[0]


def _index_block(store: Store, session_id: str, log_path: Path, limit: int) -> int:
    start = _indexed_to(store, session_id)
    try:
        with open(log_path, "rb") as fh:
            fh.seek(start)
            data = fh.read(limit)
    except OSError:
        return 0
    if len(data) < limit:
        data = data[: data.rfind(b"\n") + 1]  # whole lines only; the rest waits for its end
    elif b"\n" in data:
        data = data[: data.rfind(b"\n") + 1]
    # else: one line longer than a block (a 10 MB line with no newline) is cut where the block ends
    rows = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", min(pos + CHUNK, len(data)) - 1) + 1 or len(data)
        end = min(end, pos + MAX_CHUNK)
        rows.append((session_id, start + pos, start + end, data[pos:end].decode("utf-8", errors="replace")))
        pos = end
    # A search index may lose its last chunks to a power cut (they are indexed again from the
    # log's offset); not waiting for the disk keeps each write's lock short.
    store.conn.execute("pragma synchronous = normal")
    for row in rows:  # one short write each: an event being stored meanwhile waits for one row, not the whole batch
        _insert(store, row)
    return len(rows)


def _insert(store: Store, row: tuple[str, int, int, str]) -> None:
    # (the table's triggers keep its full-text index up to date)
    with store.conn:
        store.conn.execute('insert into log_chunks (session_id, start, "end", text) values (?, ?, ?, ?)', row)
