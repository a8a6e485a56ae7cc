"""The text log in the database, for search: what the log gained since the last chunk, cut
at line ends into chunks of about CHUNK bytes.

While a session runs its recorder's indexer thread (`Indexer`) owns the session's chunks: it
wakes when the text log was written, takes whatever whole lines were added, and sleeps
PASS_EVERY before it looks again, so the index keeps up with any program at a cost bounded
per second, not per write. While output is heavy its passes are smaller (the render thread
needs the core more): it falls behind a fast flood and catches up once output calms. Its last
pass, as the session ends, takes the rest and marks the session indexed. A session whose recorder was stopped before that is caught up by the next
one (`catch_up`). Any writer may meet another (a reindex, a catch-up): a chunk goes in only
where the index ends, checked in the write's own transaction, so a stretch is never indexed
twice."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..redact import redact
from ..store import grams
from ..store.database import ACTIVE, Store, supervisor_alive
from ..store.worker import Worker

CHUNK = 8192  # bytes: a search hit shows a screenful or so around the word
MAX_CHUNK = 4 * CHUNK  # a very long line is cut into chunks too
BLOCK = 4 << 20  # bytes of the log read at a time
FINISH_MAX = 32 << 20  # bytes indexed as a session ends (see _skip_flood)
PASS_EVERY = 2.0  # seconds between two passes while the session runs: text is searchable within about this
PASS_MAX = 4 << 20  # bytes one pass takes while the session runs
HEAVY_PASS = 1 << 20  # bytes one pass takes while output is heavy

Row = tuple[str, int, int, str]


def index_new(store: Store, session_id: str, log_path: Path, limit: int | None = None, give_way: Callable[[], object] | None = None) -> int:
    """Add what `log_path` gained since its last chunk (at most `limit` bytes of it; the rest
    follows at the next call); returns how many chunks were added. With no limit (the
    session's end), the rest, a block at a time (a 1 GB log is never read into memory whole;
    see _skip_flood)."""
    added = 0
    if limit is None:
        added += _skip_flood(store, session_id, log_path)
    left = limit
    while left is None or left > 0:
        rows = plan(store, session_id, log_path, min(left or BLOCK, BLOCK))
        n = commit(store, rows, give_way)
        added += n
        if not n:
            return added
        if left is not None:
            left -= rows[-1][2] - rows[0][1]
    return added


def _skip_flood(store: Store, session_id: str, log_path: Path) -> int:
    """Past FINISH_MAX bytes left to index as the session ends, the rest but its last
    FINISH_MAX goes into the index as one line saying so: the indexer could not keep up, so
    this is a flood, and indexing 1 GB of it kept the recorder busy for three minutes after
    the session ended (and doubled the database)."""
    start = indexed_to(store, session_id)
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
    return commit(store, [(session_id, start, cut, note)])


def indexed_to(store: Store, session_id: str) -> int:
    """Where the index of a session's log ends: its last chunk's end, found through the index
    on (session, start) (asked before every chunk written: `max("end")` read them all)."""
    row = store.conn.execute('select "end" from log_chunks where session_id = ? order by start desc limit 1', [session_id]).fetchone()
    return row[0] if row else 0


def plan(store: Store, session_id: str, log_path: Path, limit: int) -> list[Row]:
    """The chunks of the next `limit` bytes of whole lines past the index's end (not written)."""
    start = indexed_to(store, session_id)
    try:
        with open(log_path, "rb") as fh:
            fh.seek(start)
            data = fh.read(limit)
    except OSError:
        return []
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
        # the index holds masked text only: a search for a secret finds nothing
        rows.append((session_id, start + pos, start + end, redact(data[pos:end].decode("utf-8", errors="replace"))))
        pos = end
    return rows


def commit(store: Store, rows: list[Row], give_way: Callable[[], object] | None = None) -> int:
    """Write planned chunks, each only if the index still ends where it begins (another
    writer may have indexed the stretch meanwhile: then the rest is left to the next plan);
    returns how many went in. `give_way` is asked before each write (the recorder's events
    go first)."""
    store.not_waiting_for_disk()  # a chunk lost to a power cut is indexed again from the log's offset
    for n, row in enumerate(rows):  # one short write each: an event being stored meanwhile waits for one row
        if give_way is not None:
            give_way()
        with store.conn:  # (the table's triggers keep its full-text index up to date)
            if indexed_to(store, row[0]) != row[1]:
                return n
            rowid = store.conn.execute('insert into log_chunks (session_id, start, "end", text) values (?, ?, ?, ?)', row).lastrowid
            assert rowid is not None  # an insert always sets it
            grams.add(store.conn, "log_chunks", rowid, row[3])
    return len(rows)


def finish(store: Store, session_id: str, log_path: Path, give_way: Callable[[], object] | None = None) -> int:
    """The rest of a session's log (it has ended), and the session marked indexed."""
    added = index_new(store, session_id, log_path, give_way=give_way)
    with store.conn:
        store.conn.execute("update sessions set log_indexed = 1 where id = ?", [session_id])
    return added


def behind(store: Store) -> list[tuple[str, str]]:
    """(id, text log) of each ended session whose log was never indexed to its end (a read)."""
    rows = store.conn.execute(
        "select id, log_path, status, pid from sessions where log_indexed = 0 and log_path is not null order by started"
    ).fetchall()
    return [(sid, log) for sid, log, status, pid in rows if status != ACTIVE or not supervisor_alive(pid)]


def catch_up(store: Store) -> int:
    """Index the end of every ended session whose recorder did not (it was killed); returns
    how many had text left to index."""
    caught = 0
    for sid, log_path in behind(store):
        path = _log(store, log_path)
        if path.exists() and path.stat().st_size > indexed_to(store, sid):
            caught += 1
        finish(store, sid, path)
    return caught


def short_of_logs(store: Store) -> tuple[int, int]:
    """(sessions, bytes): how much of the ended sessions' text logs the index does not hold
    (a log read by nobody since its recorder was stopped, an index emptied or cut short)."""
    ends = dict(store.conn.execute('select session_id, max("end") from log_chunks group by session_id').fetchall())
    sessions = missing = 0
    for sid, log_path in store.conn.execute("select id, log_path from sessions where status != 'active' and log_path is not null"):
        try:
            left = _log(store, log_path).stat().st_size - (ends.get(sid) or 0)
        except OSError:
            continue  # no log: nothing to index (doctor says so of the recordings)
        if left > 0:
            sessions, missing = sessions + 1, missing + left
    return sessions, missing


def _log(store: Store, log_path: str) -> Path:
    """A text log's path as the database keeps it, where it is now."""
    return Path(store.located(log_path) or log_path)


def unindexed_chunks(store: Store) -> int:
    """Chunks of the logs that the full-text index lacks (it was emptied, or lost rows)."""
    chunks = store.conn.execute("select count(*) from log_chunks").fetchone()[0]
    indexed = store.conn.execute("select count(*) from log_chunks_fts_docsize").fetchone()[0]
    return max(0, chunks - indexed)


class Indexer(Worker):
    """One running session's log into the index, on a thread of its own that sleeps until the
    log is written (`wake`); first it catches up the sessions earlier recorders left behind."""

    PART, NAME = "search index", "supervise-index"

    def __init__(
        self,
        db_path: str,
        session_id: str,
        log_path: str,
        fail: Callable[[str, BaseException], None],
        report: Callable[[str], None],
        give_way: Callable[[], object] | None = None,
        heavy: Callable[[], bool] | None = None,
        indexed: Callable[[], object] | None = None,
    ):
        """`give_way`: asked before each write, and waits while the recorder's events are
        written; `heavy`: whether output is heavy (smaller passes then); `indexed`: told after
        each pass that added chunks."""
        super().__init__(db_path, fail)
        self.session_id, self.log_path = session_id, Path(log_path)
        self._give_way = give_way
        self._heavy = heavy
        self._indexed = indexed or (lambda: None)
        self._report = report

    def _run(self, store: Store) -> None:
        self._caught_up(store)
        while True:
            self._wake.wait()
            if self._stopping.is_set():
                break
            self._wake.clear()
            limit = HEAVY_PASS if self._heavy_now() else PASS_MAX
            self._step(lambda: index_new(store, self.session_id, self.log_path, limit, self._give_way))
            if self._stopping.wait(PASS_EVERY):
                break
        self._step(lambda: finish(store, self.session_id, self.log_path))

    def _heavy_now(self) -> bool:
        """Output is heavy (the renderer says): a full pass now made the render thread fall
        behind and detection late (scripts/bench_detect.py), so a smaller one, and another
        after the next interval, written to or not."""
        if self._heavy is None or not self._heavy():
            return False
        self._wake.set()
        return True

    def _caught_up(self, store: Store) -> None:
        try:
            caught = catch_up(store)
        except Exception as exc:
            return self._fail(self.PART, exc)
        if caught:
            self._report(f"supervise: indexed the end of {caught} earlier session(s) for search (their recorder was stopped)")

    def _step(self, work: Callable[[], object]) -> None:
        try:
            added = work()
        except Exception as exc:
            return self._fail(self.PART, exc)
        if added:
            self._indexed()
