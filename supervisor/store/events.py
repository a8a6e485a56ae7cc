"""The recorder's one event path: every event, from whatever thread saw it, is recorded and
told on one thread of its own, in the order it was handed over.

`emit` (any thread) only queues. The events thread, started once every subscriber is wired,
takes each in turn: the database row (one compaction's sightings joined into one pair:
occurrences.py), its `m` marker in the recording, then the subscribers, in the order they
subscribed. Work that must be ordered with the events (a frame for the agent's states and
the injection rules, a record of the agent's own) is queued the same way (`call`). So a
subscriber hears everything on this one thread, needs no lock, and an event a subscriber
emits is told after the one it heard. The thread sleeps until something is queued.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ..commandline import masked_data
from ..fanout import Fanout
from .database import Event, Store, utcnow
from .occurrences import KINDS, Compactions

LIST_KEYS = ("sources", "patterns")
_STOP = object()


class EventSink:
    def __init__(
        self,
        store: Store | None,
        session_id: str,
        marker: Callable[[float, str], None] | None = None,
        fail: Callable[[str, BaseException], None] | None = None,
        start_monotonic: float | None = None,
        history: bool = False,
    ):
        self.store = store
        self.session_id = session_id
        self.marker = marker
        self.fail = fail or (lambda where, exc: None)
        self.start_monotonic = start_monotonic
        self.compactions = Compactions(history)  # (history: it carries on a session and draws it again)
        self._details: dict[object, dict] = {}  # a compaction event's detail, by id: a later sighting adds to it
        self._subscribers = Fanout(lambda name, exc: self.fail(name, exc))
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._pending = 0  # queued and not yet done (drain waits for none)
        self._writing = 0  # events among them (another writer of the database gives way: `quiet`)
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None

    def subscribe(self, name: str, listener: Callable[[str, float, dict], None]) -> None:
        """Tell `listener` of each new event, after those subscribed before it. If it raises,
        `fail` is told under `name`, each time, and the others still hear it."""
        self._subscribers.subscribe(name, listener)

    # -- any thread ------------------------------------------------------------------------------

    def emit(self, kind: str, t: float, detail: dict, source: str | None, mark: bool = True) -> None:
        """Queue an event. `source`: what saw it (`regex`, `transcript`, `hook`...), None for
        the loop's own events (start, exit, signals), which are marked only if `mark`."""
        self._put((self._record, (kind, t, dict(detail), source, mark), "event store"), event=True)

    def call(self, name: str, work: Callable, *args: Any) -> None:
        """Run `work(*args)` on the events thread, in turn with the events; if it raises,
        `fail` is told under `name`."""
        self._put((work, args, name))

    def _put(self, item: tuple, event: bool = False) -> None:
        with self._idle:
            self._pending += 1
            self._writing += event
        self._queue.put((*item, event))

    def start(self) -> None:
        """Begin telling: once every subscriber is wired (what was queued before waits)."""
        self._thread = threading.Thread(target=self._work, name="supervise-events", daemon=True)
        self._thread.start()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything queued so far has been recorded and told, and what that
        queued in turn (a subscriber's event)."""
        if self._thread is None:
            self._run_queued()
            return True
        with self._idle:
            return self._idle.wait_for(lambda: not self._pending, timeout)

    def quiet(self, timeout: float) -> None:
        """Wait (at most `timeout`) until no event waits to be written: the search indexer
        asks before each write, so an event never queues behind the index for the database."""
        with self._idle:
            self._idle.wait_for(lambda: not self._writing, timeout)

    def close(self, timeout: float | None = None) -> None:
        """Record and tell what is queued, then stop the thread."""
        if self._thread is None:
            self._run_queued()
            return
        self._queue.put(_STOP)
        self._thread.join(timeout)

    # -- the events thread -------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            self._run(item)

    def _run_queued(self) -> None:
        """Without a thread (a sink never started): on the caller's."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                self._run(item)

    def _run(self, item: tuple) -> None:
        work, args, name, event = item
        try:
            work(*args)
        except Exception as exc:
            self.fail(name, exc)
        finally:
            with self._idle:
                self._pending -= 1
                self._writing -= event
                if not self._pending or not self._writing:
                    self._idle.notify_all()

    def _record(self, kind: str, t: float, detail: dict, source: str | None, mark: bool) -> None:
        detail = masked_data(detail)  # as stored, so as every subscriber (telemetry) hears it
        if source is not None:
            detail.setdefault("sources", [source])
            if self.start_monotonic is not None:
                detail["latency_ms"] = round((time.monotonic() - self.start_monotonic - t) * 1000, 2)
        if kind == "injection" and source == "typed":  # (what a door is given changes nothing on screen)
            self.compactions.given()
        if kind not in KINDS or source is None:
            self._new(kind, t, detail, mark)
            return
        decision = self.compactions.sight(kind, t, source)
        if decision.join is not None:
            self._join(self.compactions.joined(decision), detail)
            return
        made = []
        for recorded in decision.record:
            own = detail if recorded == kind else {"sources": [source], "inferred_from": kind}
            made.append(self._new(recorded, decision.at, own, mark))
        self.compactions.keys(decision, made)

    def _new(self, kind: str, t: float, detail: dict, mark: bool) -> object:
        event_id = self._write(self._insert, kind, t, detail)
        if kind in KINDS:
            self._details[event_id] = detail
        if mark and self.marker is not None:
            self.marker(t, kind)
        self._subscribers.tell(kind, t, detail)
        return event_id

    def _join(self, event_id: object, detail: dict) -> None:
        """One more witness of a recorded event: its sources and patterns join the event's."""
        current = self._details.get(event_id)
        if current is None:
            return
        for key in LIST_KEYS:
            merged = current.setdefault(key, [])
            merged += [v for v in detail.get(key, []) if v not in merged]
        for key, value in detail.items():
            current.setdefault(key, value)
        if self.store is not None and event_id is not None:
            self._write(self.store.update_event_detail, event_id, current, masked=True)

    # -- the events thread's writes (a subscriber on it calls these) -------------------------------

    def set_agent_session_id(self, agent_session_id: str) -> None:
        if self.store is not None:
            self._write(self.store.update_session, self.session_id, agent_session_id=agent_session_id)

    def set_state(self, state: str, since: str, detail: dict) -> None:
        """What the agent is doing now (status/states.py), for `supervise ps`."""
        if self.store is not None:
            self._write(self.store.set_state, self.session_id, state, since, detail)

    def _write(self, write: Callable, *args, **kwargs) -> Any:
        """What `write` returned, or None: a failing database must not stop detection."""
        try:
            return write(*args, **kwargs)
        except Exception as exc:
            self.fail("event store", exc)
            return None

    def _insert(self, kind: str, t: float, detail: dict) -> int | None:
        if self.store is None:
            return None
        return self.store.add_event(self.session_id, Event(kind, detail, t, utcnow()), masked=True)
