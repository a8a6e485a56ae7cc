"""Where detections become events: the database, `m` markers in the recording, and a
message to the supervisor. Lives in the recorder process; thread-safe.

One compaction often shows up more than once: Claude Code prints both "Conversation
compacted" and "⎿ Compacted" after /compact, and its transcript records the same
compaction again. Within a short window, and with no new compaction begun in between, such
sightings are merged into the first event: its detail gains the other sources and patterns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

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
    then the listeners (the context keeper, the injection rules, the note to the loop)."""

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
        self._subscribers: list[tuple[str, Callable[[str, float, dict], None]]] = []  # told of each new event

    def subscribe(self, name: str, listener: Callable[[str, float, dict], None]) -> None:
        """Tell `listener` of each new event, after those subscribed before it. If it raises,
        `fail` is told under `name` (the recorder says it once) and the others still hear it."""
        self._subscribers.append((name, listener))

    def emit(self, kind: str, t: float, detail: dict, source: str | None, mark: bool = True) -> int | None:
        """Record an event; returns its id (the id it was merged into, if it was). `source`:
        what saw it (`regex`, `transcript`, `hook`...), None for the loop's own events (start,
        exit, signals), which are stored as they come and marked only if `mark`."""
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
                for key in LIST_KEYS:
                    merged = current.detail.get(key, [])
                    merged += [v for v in detail.get(key, []) if v not in merged]
                    current.detail[key] = merged
                for key, value in detail.items():
                    current.detail.setdefault(key, value)
                self._update(current)
                return current.event_id
            event_id = self._insert(kind, t, detail)
            if kind in MERGE:
                self._open[kind] = Open(event_id, t, detail)
        if mark and self.marker is not None:
            self.marker(t, kind)
        for name, listener in self._subscribers:
            try:
                listener(kind, t, detail)
            except Exception as exc:
                self.fail(name, exc)
        return event_id

    def set_agent_session_id(self, agent_session_id: str) -> None:
        if self.store is None:
            return
        with self._lock:
            try:
                self.store.update_session(self.session_id, agent_session_id=agent_session_id)
            except Exception as exc:
                self.fail("event store", exc)

    def set_state(self, state: str, since: str, detail: dict) -> None:
        """What the agent is doing now (status/states.py), for `supervise ps`."""
        if self.store is None:
            return
        with self._lock:
            try:
                self.store.set_state(self.session_id, state, since, detail)
            except Exception as exc:
                self.fail("event store", exc)

    def _insert(self, kind: str, t: float, detail: dict) -> int | None:
        if self.store is None:
            return None
        try:
            return self.store.add_event(self.session_id, Event(kind, detail, t, utcnow()))
        except Exception as exc:  # a failing database must not stop detection
            self.fail("event store", exc)
            return None

    def _update(self, current: Open) -> None:
        if self.store is None or current.event_id is None:
            return
        try:
            self.store.update_event_detail(current.event_id, current.detail)
        except Exception as exc:
            self.fail("event store", exc)
