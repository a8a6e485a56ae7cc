"""Named subscribers told of something in turn, each call guarded on its own: one that raises
is reported under its name and the others still hear it. Pluggy's hook calls, in small.

A fan-out runs on the thread of the caller (the recorder's wiring says which that is for
each one: run/wiring.py).
"""

from __future__ import annotations

from collections.abc import Callable

Fail = Callable[[str, BaseException], None]


class Fanout:
    def __init__(self, fail: Fail | None = None):
        self.fail: Fail = fail or (lambda name, exc: None)
        self._subscribers: tuple[tuple[str, Callable], ...] = ()  # replaced whole: a fan-out under way keeps its own

    def subscribe(self, name: str, subscriber: Callable) -> None:
        """Tell `subscriber` of each thing from now on, after those subscribed before it."""
        self._subscribers = (*self._subscribers, (name, subscriber))

    def __bool__(self) -> bool:
        return bool(self._subscribers)

    def tell(self, *args) -> list:
        """Call each subscriber with `args`; returns what they returned, joined (a subscriber
        may return a list of what follows from it, for the caller to act on once all have
        heard). One that raises is reported to `fail` under its name, each time."""
        out: list = []
        for name, subscriber in self._subscribers:
            try:
                said = subscriber(*args)
            except Exception as exc:
                self.fail(name, exc)
                continue
            if said:
                out += said
        return out
