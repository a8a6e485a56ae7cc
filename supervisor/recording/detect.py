"""What a rendered frame means, on the render thread: the detector runs on what appeared, its
findings become events (a usage limit's with its reading, detection/limits.py), a pattern
turned off for taking too long is said once, and the frame, with what the detector made of
it, is handed to the events thread (store/events.py), where its subscribers (the agent's
states, the injection rules) hear it in turn with the events. A frame subscriber returns the
events it means, as (kind, detail); they are emitted once every subscriber has heard the
frame.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..detection import limits
from ..detection.detector import Detector, Seen
from ..fanout import Fanout

# a frame subscriber: (t, the screen's rows, what the detector made of them) -> events it means
OnFrame = Callable[[float, list[str], Seen], "list[tuple[str, dict]] | None"]
Emit = Callable[[str, float, dict, str], object]
Call = Callable[..., None]  # (name, work, *args): work run on the events thread, in turn


class Detect:
    def __init__(
        self, detector: Detector, *, emit: Emit, call: Call, report: Callable[[str], None], fail: Callable[[str, BaseException], None]
    ):
        self.detector = detector
        self.frames = Fanout(fail)
        self._emit = emit
        self._call = call
        self._report = report
        self._told: set[str] = set()  # patterns turned off, said once each

    def subscribe(self, name: str, on_frame: OnFrame) -> None:
        self.frames.subscribe(name, on_frame)

    def frame(self, t: float, appeared: list[tuple[int, str]], screen: list[str]) -> None:
        patterns = self.detector.patterns
        if patterns is None:
            return
        for d in self.detector.feed(t, appeared, screen):
            detail = d.detail()
            if d.kind == "limit_reached":
                detail.update(limits.reading(detail, datetime.now().astimezone()))
            self._emit(d.kind, d.t, detail, "regex")
        for why in patterns.turned_off():
            if why not in self._told:
                self._told.add(why)
                self._report(f"supervise: {why}")
        if self.frames:
            self._call("frames", self._tell, t, screen, self.detector.seen(screen))

    def _tell(self, t: float, screen: list[str], seen: Seen) -> None:
        """On the events thread: the frame's subscribers, then the events they mean."""
        for kind, detail in self.frames.tell(t, screen, seen):
            self._emit(kind, t, detail, "screen")
