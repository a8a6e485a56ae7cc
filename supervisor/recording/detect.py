"""What a rendered frame means, on the render thread: the detector runs on what appeared, its
findings become events (a usage limit's with its reading, detection/limits.py), a pattern
turned off for taking too long is said once, and the frame, with what the detector made of
it, is handed to the events thread (store/events.py), where its subscribers (the agent's
states, the injection rules) hear it in turn with the events. A frame subscriber returns the
events it means, as (kind, detail); they are emitted once every subscriber has heard the
frame.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

from ..detection import limits
from ..detection.detector import Detector, Seen
from ..fanout import Fanout

# a frame subscriber: (t, the screen's rows, what the detector made of them) -> events it means
OnFrame = Callable[[float, list[str], Seen], "list[tuple[str, dict]] | None"]
Emit = Callable[[str, float, dict, str], object]
Call = Callable[..., None]  # (name, work, *args): work run on the events thread, in turn


class Frame:
    """A frame handed to the events thread. While it waits there, a newer frame with no event
    between them takes its place: under a flood the events thread hears the screen as it is
    now, not thousands of frames behind it (an event waits behind one frame at most)."""

    def __init__(self, t: float, screen: list[str], seen: Seen):
        self._lock = threading.Lock()
        self.now: tuple[float, list[str], Seen] | None = (t, screen, seen)

    def replace(self, t: float, screen: list[str], seen: Seen) -> bool:
        """Take the newer frame's place, unless the events thread has taken this one."""
        with self._lock:
            if self.now is None:
                return False
            self.now = (t, screen, seen)
            return True

    def take(self) -> tuple[float, list[str], Seen] | None:
        with self._lock:
            now, self.now = self.now, None
        return now


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
        self._waiting: Frame | None = None  # the last frame handed over (it may not be taken yet)
        self._latest: tuple[float, list[str]] | None = None  # the last frame seen, not handed over yet
        self._emitted = False  # an event since the waiting frame was handed over

    def subscribe(self, name: str, on_frame: OnFrame) -> None:
        self.frames.subscribe(name, on_frame)

    def frame(self, t: float, appeared: list[tuple[int, str]], screen: list[str]) -> None:
        patterns = self.detector.patterns
        if patterns is None:
            return
        emitted = False
        for d in self.detector.feed(t, appeared, screen):
            detail = d.detail()
            if d.kind == "limit_reached":
                detail.update(limits.reading(detail, datetime.now().astimezone()))
            self._emit(d.kind, d.t, detail, "regex")
            emitted = self._emitted = True
        for why in patterns.turned_off():
            if why not in self._told:
                self._told.add(why)
                self._report(f"supervise: {why}")
        if not self.frames:
            return
        self._latest = (t, screen)
        if emitted:  # its subscribers hear the frame that made the events right after them
            self.flush()

    def flush(self) -> None:
        """Hand the latest frame not yet handed over to the events thread (the render thread,
        once it has rendered what was queued: one frame a batch, not one a chunk, so a flood
        does not wake the events thread thousands of times a second)."""
        if self._latest is None:
            return
        (t, screen), self._latest = self._latest, None
        seen = self.detector.seen(screen)
        if not self._emitted and self._waiting is not None and self._waiting.replace(t, screen, seen):
            return  # (no event since the waiting frame: it can be told as this one)
        self._waiting, self._emitted = Frame(t, screen, seen), False
        self._call("frames", self._tell, self._waiting)

    def _tell(self, frame: Frame) -> None:
        """On the events thread: the frame's subscribers, then the events they mean."""
        now = frame.take()
        if now is None:
            return
        t, screen, seen = now
        for kind, detail in self.frames.tell(t, screen, seen):
            self._emit(kind, t, detail, "screen")
