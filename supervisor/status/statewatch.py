"""Following what the agent is doing, in the recorder process: the state tracker (states.py)
fed by frames and events, both on the events thread (store/events.py), its changes written
for `supervise ps`, the events they mean (`limit_cleared`) handed back to be recorded, and
the user told (notify.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone

from ..channel import Terminal
from ..config import Notify
from ..detection import limits
from ..detection.detector import Seen
from ..store.events import EventSink
from . import states
from .notify import Notices, Runner


class StateWatch:
    def __init__(
        self,
        sink: EventSink,
        started_wall: float | None,
        session: dict,
        notify: Notify,
        fail: Callable[[str, BaseException], None],
        send: Callable[[Terminal], None],
    ):
        self.sink = sink
        self.started_wall = started_wall
        self.session = session  # id, name, agent: for the notices' placeholders
        self.tracker = states.Tracker()
        self.notices = Notices(notify)
        self.runner = Runner(notify, fail) if notify.command else None
        self.terminal = notify.terminal  # bell, osc or off
        self._send = send  # to the PTY loop, which writes to the user's terminal
        self.heard: list[Callable[[str, float], None]] = []  # told each change: its state and session time

    def on_event(self, kind: str, t: float, detail: dict) -> None:
        self._took(t, *self.tracker.event(kind, t, detail))

    def on_user_turn(self, text: str, t: float | None) -> None:
        """A turn of the user's, from the agent's record, dated by it (None: it does not say)."""
        if t is not None:
            self._took(t, *self.tracker.user_turn(t))

    def _took(self, t: float, state: states.State | None, events: list[tuple[str, dict]]) -> None:
        if state is not None:
            self._changed(state, t)
        for meant, about in events:  # after this one, on this thread: every subscriber hears it
            self.sink.emit(meant, t, about, "limits")

    def on_frame(self, t: float, screen: list[str], seen: Seen) -> list[tuple[str, dict]]:
        """Returns the events the frame means, for the caller to record once every frame
        subscriber has heard it."""
        state, events = self.tracker.frame(t, seen.idle, seen.busy, seen.dialog, seen.context_left)
        if state is not None:
            self._changed(state, t)
        return events

    def _changed(self, state: states.State, t: float) -> None:
        notice = self.notices.change(state)
        self._publish(state, t)
        if notice is None:
            return
        values = {**self.session, "state": notice, "reset_at": state.detail.get("reset_at")}
        if self.runner is not None:
            self.runner.notify(values)
        if self.terminal != "off":
            self._send(Terminal(self.terminal, notice_text(values)))

    def _publish(self, state: states.State, t: float) -> None:
        wall = (self.started_wall or time.time() - t) + state.since
        self.sink.set_state(state.name, datetime.fromtimestamp(wall, timezone.utc).isoformat(timespec="milliseconds"), state.detail)
        for listener in self.heard:
            listener(state.name, state.since)


def notice_text(values: dict) -> str:
    """A notice as one line: `parser-work (AGENT): limited until 16:21`."""
    who = values.get("name") or values["id"]
    at = limits.parse_time(values.get("reset_at"))
    until = f" until {at.astimezone():%H:%M}" if at else ""
    return f"supervise: {who} ({values.get('agent') or 'agent'}) {values['state']}{until}"
