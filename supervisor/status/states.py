"""What a supervised agent is doing, read from its screen: the state `supervise ps` shows.

- `starting`: nothing seen yet that tells (no idle or busy line);
- `working`: a busy line is up ("esc to interrupt");
- `waiting`: at its prompt, idle;
- `permission`: a dialog waits for the user's answer;
- `compacting`: between a compaction's start and its end;
- `limited`: a usage limit was reached, until the agent works again (`limit_cleared`): a
  busy frame after it was idle, a continue supervise typed that the agent took, or a turn
  of the user's its record dates after the limit (a short turn may show no busy frame at
  all; a turn the limit stopped again is dated before its new limit).

A dialog comes first (the user must act), then a compaction and a limit (they say why the
agent is idle or busy), then busy and idle. A frame that shows neither keeps the state (a
redraw between two frames). The state's detail carries the reset time of a limit and the
context left, where the agent shows it.

Pure: frames and events in, changes out. (A session whose agent has no pattern set has no
tracker: `supervise ps` shows it `running`, since nothing on its screen can tell.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import COMPACTION_MAX

STATES = ("starting", "working", "waiting", "permission", "compacting", "limited")


@dataclass(frozen=True)
class State:
    """A session's state, and since when."""

    name: str
    since: float  # session time it began
    detail: dict = field(default_factory=dict)


class Tracker:
    def __init__(self) -> None:
        self.state = State("starting", 0.0)
        self._compacting: float | None = None  # when the compaction under way began
        self._limit: dict | None = None  # the limit reached: reset_at, text
        self._limit_idle = False  # the agent stopped working since the limit was reached
        self._limit_at = 0.0  # when it was reached
        self._context_left: int | None = None

    def event(self, kind: str, t: float, detail: dict) -> tuple[State | None, list[tuple[str, dict]]]:
        """The state after an event if it changed (else None), and the events it means
        (`limit_cleared` once the agent took a continue)."""
        if kind == "limit_continue" and self._limit is not None and detail.get("typed") and detail.get("confirmed"):
            return self._cleared(t)
        if kind == "compaction_started":
            self._compacting = t
        elif kind in ("compaction_finished", "compaction_failed"):
            self._compacting = None
        elif kind == "limit_reached":
            self._limit = {k: detail[k] for k in ("reset_at", "text") if k in detail}
            self._limit_idle, self._limit_at = False, t
        elif self._limit is not None and kind in ("limit_wait", "limit_continue"):
            # a continue waits for the reset (--on-limit wait), or is called off or typed
            if detail.get("continue_at"):
                self._limit["continue_at"] = detail["continue_at"]
            else:
                self._limit.pop("continue_at", None)
        return self._become(self.state.name, t), []

    def user_turn(self, t: float) -> tuple[State | None, list[tuple[str, dict]]]:
        """The state after a turn of the user's the agent took at `t` (by its record), and
        the events it means (`limit_cleared` when the turn came after the limit)."""
        if self._limit is None or t <= self._limit_at:
            return None, []
        return self._cleared(t)

    def _cleared(self, t: float) -> tuple[State | None, list[tuple[str, dict]]]:
        """The agent took a turn after its limit: working, the limit cleared."""
        cleared, self._limit = dict(self._limit or {}), None
        return self._become("working", t), [("limit_cleared", cleared)]

    def _detail(self, name: str) -> dict:
        detail = {} if self._context_left is None else {"context_left": self._context_left}
        if name == "limited" and self._limit:
            detail.update(self._limit)
        return detail

    def frame(
        self, t: float, idle: bool, busy: bool, dialog: bool, context_left: int | None = None
    ) -> tuple[State | None, list[tuple[str, dict]]]:
        """The state after a frame if it changed (else None), and the events it means
        (`limit_cleared` once the agent works again after a limit)."""
        events: list[tuple[str, dict]] = []
        if context_left is not None:
            self._context_left = context_left
        if self._compacting is not None and t - self._compacting > COMPACTION_MAX:
            self._compacting = None  # its end was missed
        if self._limit is not None:
            if not busy:
                self._limit_idle = True
            elif self._limit_idle:  # working again: a continue went through
                events.append(("limit_cleared", dict(self._limit)))
                self._limit = None
        name = self.state.name
        if dialog:
            name = "permission"
        elif self._compacting is not None:
            name = "compacting"
        elif self._limit is not None:
            name = "limited"
        elif busy:
            name = "working"
        elif idle:
            name = "waiting"
        elif name in ("permission", "compacting", "limited"):
            name = "working"  # what it was is over, and no idle line is up
        return self._become(name, t), events

    def _become(self, name: str, t: float) -> State | None:
        """The state named `name` from `t` (its detail as it is now), if that changes it."""
        detail = self._detail(name)
        if name == self.state.name and detail == self.state.detail:
            return None
        self.state = State(name, t if name != self.state.name else self.state.since, detail)
        return self.state
