"""The text log in the database, for search: what the log gained since the last chunk, cut
at line ends into chunks of about CHUNK bytes. Run off the terminal's and the detector's
way (the context keeper's thread, and the recorder as it finishes)."""

from __future__ import annotations

from pathlib import Path

from .store import Store

CHUNK = 8192  # bytes: a search hit shows a screenful or so around the word


def index_new(store: Store, session_id: str, log_path: Path, limit: int | None = None) -> int:
    """Add what `log_path` gained since its last chunk (at most `limit` bytes of it: while a
    session runs, indexing a flood in one transaction kept the database locked, and the
    detector's events waited: p99 290 ms at 10 MB/s; the rest follows at the next call);
    returns how many chunks were added."""
    row = store.db.execute("select coalesce(max(\"end\"), 0) from log_chunks where session_id = ?", [session_id]).fetchone()
    start = row[0]
    try:
        with open(log_path, "rb") as fh:
            fh.seek(start)
            data = fh.read(limit if limit is not None else -1)
    except OSError:
        return 0
    data = data[: data.rfind(b"\n") + 1]  # whole lines only; the rest waits for its end
    rows = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", min(pos + CHUNK, len(data)) - 1) + 1 or len(data)
        rows.append({"session_id": session_id, "start": start + pos, "end": start + end,
                     "text": data[pos:end].decode("utf-8", errors="replace")})
        pos = end
    # A search index may lose its last chunks to a power cut (they are indexed again from the
    # log's offset); not waiting for the disk keeps each write's lock short.
    store.db.execute("pragma synchronous = normal")
    for row in rows:  # one short write each: an event being stored meanwhile waits ~1 ms, not the whole batch
        with store.db.conn:
            store.db["log_chunks"].insert(row)
    return len(rows)
