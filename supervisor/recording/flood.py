"""How much output waits for the render thread, and when a flood leaves it in the recording.

Output waiting to be rendered is bounded (`BACKLOG_CAP`). Past it, or past `FLOOD_CAP` while
output comes faster than rendering goes (`FLOOD_RATE`), nothing more is queued: what comes is
in the recording already, and the render thread reads it back from there once the flood has
passed (readback.py). The main thread, which writes the recording, never waits for rendering,
and while the flood lasts it has the CPU and the GIL to itself (docs/benchmarks.md:
passthrough under a flood). Without a recording to read back (a full disk), the main thread
waits for room instead, and the PTY loop in turn stops reading the PTY.

The main thread asks `admit` for each event; the render thread says what it `rendered` and
asks whether it has `caught_up`. The lock is held for these counts alone.
"""

from __future__ import annotations

import threading

# Text waiting to be rendered. Past this, output is left in the recording and read back
# from there once the flood has passed: memory stays bounded under any flood.
BACKLOG_CAP = 8 << 20
# Output coming faster than this (characters a second, over RATE_WINDOW), or faster than
# rendering goes (the backlog grew over a whole window: a slow or busy machine renders
# slower than a quiet one), is a flood: past FLOOD_CAP waiting, it is left in the recording
# at once, so that rendering does not take the CPU from the flood (and peak memory stays
# lower than with BACKLOG_CAP alone). Output that rendering keeps up with keeps the whole
# backlog, detected as it comes (the figures: docs/benchmarks.md).
FLOOD_RATE = 20e6
FLOOD_CAP = 1 << 20
RATE_WINDOW = 0.1
# Past this much queued output, rendering joins events to catch up (detail may be lost);
# the recording is read back this much at a time.
CATCH_UP = 256 << 10

QUEUE = -1  # `admit`: render it as it comes
LEFT = -2  # `admit`: it stays in the recording (read back with what came before it)


class Flood:
    def __init__(self, readable: bool):
        self.readable = readable  # there is a recording to read back
        self.backlog = 0  # characters queued, not rendered yet
        self._room = threading.Condition()
        self._spilling = False
        self._written_to = 0  # the recording's end as far as output and resizes go
        self._flooding = False
        # When the current rate window began (session time), characters since, the backlog then.
        self._window = (0.0, 0, 0)

    # -- the main thread ------------------------------------------------------------------------

    def admit(self, t: float, chars: int, span: tuple[int, int] | None) -> int:
        """An event of `chars` characters (0: a resize) read at `t` seconds into the session,
        lying at `span` in the recording: QUEUE, LEFT, or the byte from which to read the
        recording back (a flood begins with it: queue that). Without a span or a recording,
        waits while the backlog is full."""
        with self._room:
            if chars:
                self._measure(t, chars)
            if span is not None and self.readable:
                self._written_to = span[1]
                if self._spilling:
                    return LEFT
                if self.too_far(self.backlog):
                    self._spilling = True
                    return span[0]
            while chars and self.backlog > BACKLOG_CAP:
                self._room.wait()
            self.backlog += chars
        return QUEUE

    def _measure(self, now: float, chars: int) -> None:
        """The output's rate as the PTY gave it (the time it was read, not the time it reaches
        here), over windows of RATE_WINDOW seconds, beside rendering's: a flood or not. Called
        with the lock held."""
        began, count, before = self._window
        count += chars
        if now - began >= RATE_WINDOW:
            self._flooding = count / (now - began) > FLOOD_RATE or self.backlog > max(before, FLOOD_CAP)
            self._window = (now, 0, self.backlog)
        else:
            # A whole window's worth at the flood's rate before the window is out: a flood
            # now, not at the window's end (by then up to 8 MB waited: 113 MB peak at times).
            self._flooding = self._flooding or count > FLOOD_RATE * RATE_WINDOW
            self._window = (began, count, before)

    def heavy(self) -> bool:
        """Output comes at a flood's rate, or waits in the recording to be rendered: the
        render thread needs the core (the search indexer takes smaller passes)."""
        return self._flooding or self._spilling or self.backlog > 0

    def too_far(self, behind: int) -> bool:
        """`behind` characters (or bytes of the recording) waiting are more than to queue."""
        return behind > BACKLOG_CAP or (self._flooding and behind > FLOOD_CAP)

    # -- the render thread ----------------------------------------------------------------------

    def rendered(self, chars: int) -> None:
        """Queued output is rendered: room for more."""
        with self._room:
            self.backlog -= chars
            self._room.notify()

    def written_to(self) -> int:
        with self._room:
            return self._written_to

    def caught_up(self, read_to: int) -> bool:
        """Everything written is read back: output is queued again from now on."""
        with self._room:
            if read_to >= self._written_to:
                self._spilling = False
                return True
            return False
