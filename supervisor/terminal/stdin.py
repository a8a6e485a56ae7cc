"""The agent's input as the PTY loop reads it: the user's stdin, whatever it is.

A terminal or a pipe is polled; a regular file or /dev/null cannot be (always ready), so it
is read between passes of the loop as the agent takes it, not into memory whole; a closed
stdin has ended. Input that is not a terminal goes to the agent's terminal and ends with
the EOF keys (endofinput.py), or, for an agent whose profile says it reads a stdin that is
not a terminal, through a pipe of its own that closes at the end.
"""

from __future__ import annotations

import os
import selectors
from collections.abc import Callable

from . import tty
from .endofinput import EndOfInput

READ_SIZE = 65536
# Input waiting for the agent past which a stdin file is not read further for now.
REFILL_BELOW = 64 * 1024


class Stdin:
    def __init__(self, fd: int | None, pipe: int | None, clock: Callable[[], float]):
        self.fd = fd  # None once it has ended
        self.is_tty = fd is not None and os.isatty(fd)
        self.clock = clock
        self.polled = True
        self.eof = EndOfInput()
        self.pipe = StdinPipe(pipe) if pipe is not None else None  # input goes there, not to the PTY
        self._pipe_watched = False

    def register(self, sel: selectors.BaseSelector) -> None:
        if self.fd is None:
            return
        try:
            sel.register(self.fd, selectors.EVENT_READ)
        except (ValueError, OSError):  # a regular file or /dev/null (always ready), or closed
            self.polled = False
            try:
                os.fstat(self.fd)
            except OSError:
                self._ended(sel)

    def read(self, sel: selectors.BaseSelector) -> bytes:
        """What stdin has now; b"" if nothing, or if it ended (handled here)."""
        assert self.fd is not None  # read only while stdin has not ended
        try:
            data = os.read(self.fd, READ_SIZE)
        except BlockingIOError:
            return b""
        except OSError:
            data = b""
        if not data:
            self._ended(sel)
        elif self.pipe is None:
            self.eof.took(data)
        return data

    def hand_on(self, data: bytes) -> bool:
        """Whether `data` goes to the agent's own stdin pipe (after the agent closed its end,
        to nobody) rather than to its terminal."""
        if self.pipe is None:
            return False
        if self.pipe.fd is not None:
            self.pipe.waiting += data
        return True

    @property
    def settled(self) -> bool:
        """Nothing to do between passes: stdin is polled (a terminal, a pipe, or ended) and
        neither a pipe of the agent's nor an EOF key waits."""
        return self.polled and self.pipe is None and (self.eof.ended_at is None or self.eof.done)

    def wants_read(self, pending: int) -> bool:
        """An unpolled stdin with more to give and room for it (`pending`: bytes waiting for
        the agent's terminal): the loop reads it and does not sleep."""
        waiting = len(self.pipe.waiting) if self.pipe is not None else pending
        return self.fd is not None and not self.polled and waiting < REFILL_BELOW

    def settle(self, sel: selectors.BaseSelector, master: int, now: float, busy: bool, last_activity: float) -> bytes:
        """Between passes: the stdin pipe written as the agent reads it (the loop wakes when it
        has room while input waits for it) and closed once input has ended; the EOF keys for
        the agent's terminal when they are due. `busy`: keys are on their way to it;
        `last_activity`: when it last printed or was written to."""
        if self.pipe is not None and self.pipe.fd is not None:
            self._flush_pipe(sel)
        if self.eof.ended_at is None or self.eof.done:
            return b""
        unread, canonical = (None, None) if busy else (tty.unread_input(master), tty.canonical(master))
        return self.eof.due(now, busy, unread, canonical, last_activity) or b""

    def _flush_pipe(self, sel: selectors.BaseSelector) -> None:
        pipe = self.pipe
        assert pipe is not None and pipe.fd is not None  # settle() flushes only a pipe still open
        pipe.flush()
        if bool(pipe.waiting) != self._pipe_watched:
            if self._pipe_watched:
                sel.unregister(pipe.fd)
            else:
                sel.register(pipe.fd, selectors.EVENT_WRITE)
            self._pipe_watched = not self._pipe_watched
        if pipe.done:
            pipe.close()

    @property
    def pipe_waiting(self) -> bool:
        """Input waits for room in the agent's stdin pipe (the loop must wake for it)."""
        return self._pipe_watched

    def _ended(self, sel: selectors.BaseSelector) -> None:
        """Input ended: from a pipe or a file, the agent is told (its pipe closed, or the EOF keys)."""
        if self.polled and self.fd is not None:
            try:
                sel.unregister(self.fd)
            except (KeyError, ValueError):
                pass
        self.fd = None
        if self.pipe is not None:
            self.pipe.ending = True
        elif not self.is_tty:
            self.eof.ended(self.clock())


class StdinPipe:
    """Input handed on through a pipe of the agent's own instead of its terminal: for an agent
    whose profile says it reads its input from stdin when stdin is not a terminal (a
    one-shot mode given its prompt on stdin), so that it gets what it would get run bare."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd: int | None = fd  # None once closed
        self.waiting = bytearray()
        self.ending = False  # input has ended: the pipe closes once all is written

    def flush(self) -> None:
        """Write what the pipe takes now."""
        assert self.fd is not None  # written only while open
        try:
            while self.waiting:
                del self.waiting[: os.write(self.fd, self.waiting)]
        except BlockingIOError:
            pass
        except OSError:  # the agent closed its end: what it did not read is not for it
            self.waiting.clear()
            self.ending = True

    @property
    def done(self) -> bool:
        return self.ending and not self.waiting

    def close(self) -> None:
        assert self.fd is not None  # closed once
        os.close(self.fd)
        self.fd = None
