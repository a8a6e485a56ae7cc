"""Chunks and contexts embedded for search by meaning, once an embeddings endpoint is set:
their passages' masked text (the index holds nothing else) sent to it, the vectors kept
beside them (store/vectors.py).

While a session runs, its recorder's `Embedder` thread embeds what the search index and the
context keeper added, woken by them, never on the terminal's path; what it could not embed
(the endpoint down, the session over before it caught up) waits for `supervise search
--embed`, which embeds whatever any session lacks (`embed_all`)."""

from __future__ import annotations

from collections.abc import Callable

from ..config import Memory
from ..store import searched, vectors
from ..store.database import Store
from ..store.worker import Worker
from . import passages
from .embedclient import Client, Unavailable, client

ROWS = 32  # chunks or contexts read and embedded at a time
PASS_EVERY = 2.0  # seconds between two passes while the session runs
PROBE = "how long are its vectors"  # what `embed_all` asks first
RETRY_AFTER = 60.0  # seconds before the endpoint is asked again after it failed


def embed_session(
    store: Store, client: Client, session_id: str, seen: set[bytes] | None = None, give_way: Callable[[], object] | None = None
) -> int:
    """Every chunk and context of a session that has no vectors of this model, embedded;
    returns how many passages were. `seen`: the passages already embedded (a screen drawn
    again is embedded once). Unavailable when the endpoint fails (what was embedded stays)."""
    conn = store.conn
    model = vectors.embedder(conn, client.name, add=True)
    assert model is not None
    seen = set() if seen is None else seen
    total = 0
    for source in searched.SOURCES:
        while rows := vectors.missing(conn, model, source, session_id, ROWS):
            said = set(seen)  # (what this batch says is `seen` once it is kept: a failed call is asked again whole)
            todo = [(row, text or "", passages.new(text or "", said)) for row, text in rows]
            got = client.embed([text[a:b] for _, text, spans in todo for a, b in spans])
            if got:
                vectors.agreed(conn, model, len(got[0]))
            if give_way is not None:
                give_way()
            with conn:
                at = 0
                for row, _, spans in todo:
                    vectors.put(conn, model, source, row, session_id, spans, got[at : at + len(spans)])
                    at += len(spans)
            seen |= said
            total += len(got)
    return total


def embed_all(store: Store, client: Client, report: Callable[[int, int], None] | None = None) -> int:
    """What every session lacks, embedded, oldest session first; returns how many passages.
    `report(sessions done, sessions)` after each."""
    model = vectors.embedder(store.conn, client.name, add=True)
    assert model is not None
    (probe,) = client.embed([PROBE])  # another model behind the name: its vectors go
    vectors.agreed(store.conn, model, len(probe))
    todo = vectors.behind(store.conn, model)
    total = 0
    for n, sid in enumerate(todo, 1):
        total += embed_session(store, client, sid)
        if report is not None:
            report(n, len(todo))
    return total


def for_session(
    db_path: str, session_id: str, memory: Memory, fail: Callable[[str, BaseException], None], give_way: Callable[[], object]
) -> Embedder | None:
    """A running session's Embedder, started, when an embeddings endpoint is set."""
    made = client(memory)
    if made is None:
        return None
    found = Embedder(db_path, session_id, made, fail, give_way)
    found.start()
    return found


class Embedder(Worker):
    """One running session's new chunks and contexts embedded, on a thread of its own."""

    PART, NAME = "search by meaning", "supervise-embed"

    def __init__(
        self,
        db_path: str,
        session_id: str,
        client: Client,
        fail: Callable[[str, BaseException], None],
        give_way: Callable[[], object] | None = None,
    ):
        super().__init__(db_path, fail)
        self.session_id, self.client, self._give_way = session_id, client, give_way
        self._seen: set[bytes] = set()

    def _run(self, store: Store) -> None:
        up = True
        while not self._stopping.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stopping.is_set():
                break
            up = self._pass(store)
            self._stopping.wait(PASS_EVERY if up else RETRY_AFTER)
        if up:  # (an endpoint that just failed is not waited for again: the session is over)
            self._pass(store)

    def _pass(self, store: Store) -> bool:
        """Whether the endpoint could be asked."""
        try:
            embed_session(store, self.client, self.session_id, self._seen, self._give_way)
        except Unavailable as exc:
            self._fail(self.PART, Unavailable(f"{exc.line}; `supervise search --embed` embeds what it missed"))
            return False
        except Exception as exc:
            self._fail(self.PART, exc)
        return True
