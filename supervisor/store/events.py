"""Where detections become events: the database, `m` markers in the recording, and a
message to the supervisor. Lives in the recorder process; thread-safe.

One compaction often shows up more than once: an agent may print two lines for it (a
banner and a result line after /compact), and its transcript records the same compaction
again. Within a short window, and with no new compaction begun in between, such
sightings are merged into the first event: its detail gains the other sources and patterns.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..fanout import Fanout
from .database import Event, Store, utcnow

# kind -> (seconds within which a repeat is the same occurrence, kinds that end the occurrence)
MERGE = {
    "compaction_started": (120.0, {"compaction_finished", "compaction_failed"}),
    "compaction_finished": (60.0, {"compaction_started"}),
    "compaction_failed": (30.0, {"compaction_started"}),
}
LIST_KEYS = ("sources", "patterns")


@dataclass
class Open:
    event_id: int | None
    t: float
    detail: dict


class EventSink:
    """The one way events are written: the database row, the `m` marker in the recording,
    then the subscribers (the context keeper, the injection rules, the note to the loop), on
    the thread that emitted. An event a subscriber emits while it hears one waits until every
    subscriber has heard that one: no emit from inside the fan-out, and each subscriber hears
    events in the order they were recorded. The lock is held for the database write alone."""

    def __init__(
        self,
        store: Store | None,
        session_id: str,
        marker: Callable[[float, str], None] | None = None,
        fail: Callable[[str, BaseException], None] | None = None,
        start_monotonic: float | None = None,
    ):
        self.store = store
        self.session_id = session_id
        self.marker = marker
        self.fail = fail or (lambda where, exc: None)
        self.start_monotonic = start_monotonic
        self._lock = threading.Lock()
        self._open: dict[str, Open] = {}
        self._subscribers = Fanout(lambda name, exc: self.fail(name, exc))
        self._telling = threading.local()  # this thread's emits that wait for its fan-out to end

    def subscribe(self, name: str, listener: Callable[[str, float, dict], None]) -> None:
        """Tell `listener` of each new event, after those subscribed before it. If it raises,
        `fail` is told under `name` (the recorder says it once) and the others still hear it."""
        self._subscribers.subscribe(name, listener)

    def emit(self, kind: str, t: float, detail: dict, source: str | None, mark: bool = True) -> int | None:
        """Record an event and tell the subscribers; returns its id (the id it was merged
        into, if it was; None if a subscriber emitted it, as it waits). `source`: what saw it
        (`regex`, `transcript`, `hook`...), None for the loop's own events (start, exit,
        signals), which are stored as they come and marked only if `mark`."""
        waiting = getattr(self._telling, "queue", None)
        if waiting is not None:  # from a subscriber, during a fan-out on this thread
            waiting.append((kind, t, dict(detail), source, mark))
            return None
        self._telling.queue = waiting = deque()
        try:
            event_id = self._emit(kind, t, detail, source, mark)
            while waiting:
                self._emit(*waiting.popleft())
        finally:
            self._telling.queue = None
        return event_id

    def _emit(self, kind: str, t: float, detail: dict, source: str | None, mark: bool) -> int | None:
        detail = dict(detail)
        if source is not None:
            detail.setdefault("sources", [source])
            if self.start_monotonic is not None:
                detail["latency_ms"] = round((time.monotonic() - self.start_monotonic - t) * 1000, 2)
        with self._lock:
            for other, (_, enders) in MERGE.items():
                if kind in enders:
                    self._open.pop(other, None)
            current = self._open.get(kind)
            window = MERGE.get(kind, (0.0, set()))[0]
            if current is not None and abs(t - current.t) <= window:
                merging = True
                for key in LIST_KEYS:
                    merged = current.detail.get(key, [])
                    merged += [v for v in detail.get(key, []) if v not in merged]
                    current.detail[key] = merged
                for key, value in detail.items():
                    current.detail.setdefault(key, value)
                event_id, failed = current.event_id, self._write(self._update, current)[1]
            else:
                merging = False
                event_id, failed = self._write(self._insert, kind, t, detail)
                if kind in MERGE:
                    self._open[kind] = Open(event_id, t, detail)
        if failed is not None:  # told outside the lock
            self.fail("event store", failed)
        if merging:
            return event_id
        if mark and self.marker is not None:
            self.marker(t, kind)
        self._subscribers.tell(kind, t, detail)
        return event_id

    def set_agent_session_id(self, agent_session_id: str) -> None:
        self._locked_write(lambda store: store.update_session(self.session_id, agent_session_id=agent_session_id))

    def set_state(self, state: str, since: str, detail: dict) -> None:
        """What the agent is doing now (status/states.py), for `supervise ps`."""
        self._locked_write(lambda store: store.set_state(self.session_id, state, since, detail))

    def _locked_write(self, write: Callable[[Store], object]) -> None:
        if self.store is None:
            return
        with self._lock:
            _, failed = self._write(write, self.store)
        if failed is not None:
            self.fail("event store", failed)

    @staticmethod
    def _write(write: Callable, *args) -> tuple[Any, BaseException | None]:
        """(what `write` returned, None), or (None, why it failed): a failing database must not
        stop detection, and it is told once the lock is released."""
        try:
            return write(*args), None
        except Exception as exc:
            return None, exc

    def _insert(self, kind: str, t: float, detail: dict) -> int | None:
        if self.store is None:
            return None
        return self.store.add_event(self.session_id, Event(kind, detail, t, utcnow()))

    def _update(self, current: Open) -> None:
        if self.store is not None and current.event_id is not None:
            self.store.update_event_detail(current.event_id, current.detail)
