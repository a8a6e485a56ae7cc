"""Waiting out a usage limit (`--on-limit wait`): when to type a continue, and when not to.

A limit is waited out when its reset can be read and lies ahead (limits.waitable), and fewer
than `max_continues` continues were typed in this session. The continue is due at the reset
plus the margin, by the wall clock (a laptop that slept through the reset continues when it
wakes); a reset shown to the minute counts from that minute's end. It is typed through the
same confirmed channel as a context, once the agent is idle at its prompt with no dialog up;
exactly one per limit. It is called off when the user types
anything, when the agent works again by itself (an agent may continue on its own at the
reset), or when the session ends. A limit reached again waits again.

Pure: events and a wall clock in, decisions out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime

from ..config import Limits
from ..detection import limits


@dataclass(frozen=True)
class Wait:
    """A usage limit waited out: when it resets."""

    id: int
    reset_at: datetime
    due: float  # wall-clock seconds: the reset (the latest it can be) plus the margin

    def title(self, name: str | None) -> str:
        """What the terminal's title says meanwhile."""
        local = datetime.fromtimestamp(self.due).astimezone()
        return f"supervise{f' {name}' if name else ''}: usage limit until {self.reset_at.astimezone():%H:%M}, continue at {local:%H:%M}"


class LimitWait:
    def __init__(self, settings: Limits):
        self.settings = settings
        self.pending: Wait | None = None  # waiting for its time
        self.typing: Wait | None = None  # handed over to be typed
        self.typed = 0
        self._ids = itertools.count(1)

    def reached(self, detail: dict, now: datetime) -> tuple[Wait | None, str | None]:
        """A limit was reached (`detail`: the event's). The wait that now runs (None if none),
        and why there is none."""
        if self.settings.on_limit != "wait":
            return None, None
        if self.typed >= self.settings.max_continues:
            return None, f"{self.typed} continues typed in this session already (the most: [limits] max_continues)"
        at = limits.parse_time(detail.get("reset_at"))
        why = limits.waitable(at, now)
        if why:
            return None, why
        assert at is not None  # waitable() says why when it is None
        by = limits.parse_time(detail.get("reset_by")) or at
        self.pending = Wait(next(self._ids), at, by.timestamp() + self.settings.margin)
        return self.pending, None

    def due(self, now: float) -> Wait | None:
        """The wait whose continue is to be typed now (handed over once)."""
        if self.pending is not None and now >= self.pending.due:
            self.typing, self.pending = self.pending, None
            return self.typing
        return None

    def until_due(self, now: float) -> float | None:
        return None if self.pending is None else max(0.0, self.pending.due - now)

    def cancel(self) -> Wait | None:
        """The wait called off (the user typed, the agent works again, the session ends)."""
        gone = self.pending or self.typing
        self.pending = self.typing = None
        return gone

    def finished(self, typed: bool) -> Wait | None:
        """The continue was typed (or not, the user being at the keyboard)."""
        done, self.typing = self.typing, None
        if typed:
            self.typed += 1
        return done
