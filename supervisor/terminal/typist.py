"""Typing for supervise: a context typed into the agent as if at the keyboard, Enter a moment
after it, the user's keys held back meanwhile and let go after, so the two never interleave.

The loop has the last word on whether to type at all, as only it sees the user's keys: a
request is declined while the user is typing or has a half-typed line (keys.py). Pure:
requests, keys and times in; bytes for the agent and notes for the recorder out.
"""

from __future__ import annotations

from ..channel import Inject, Note
from .keys import KeyWatch

# Enter goes this long after the text (an Enter inside a burst of input is taken as part of
# a paste), a little longer for a long text.
ENTER_DELAY = 0.4
ENTER_DELAY_PER_KB = 0.05
RELEASE_AFTER = 0.3  # then the user's held-back keys follow


class Typist:
    def __init__(self, keys: KeyWatch):
        self.keys = keys
        self.holding: int | None = None  # the request being typed: the user's keys wait
        self.held = bytearray()
        self.enter_at: float | None = None  # when to press Enter after the text
        self.release_at: float | None = None  # when the held keys follow

    def request(self, request: Inject, now: float, child_exited: bool) -> tuple[bytes, str | None]:
        """(the text to type now, None), or (b"", why the request is declined)."""
        if self.holding is not None:
            return b"", "typing already"
        if child_exited:
            return b"", "child exited"
        why = self.keys.typing(now, request.fresh)
        if why:
            return b"", why
        data = request.data.encode()
        self.holding = request.id
        self.enter_at = now + (ENTER_DELAY + len(data) / 1024 * ENTER_DELAY_PER_KB if data else 0.0)
        return data, None

    def user(self, data: bytes) -> bytes:
        """The user's keys to pass on now: all of them, or none while ours are being typed."""
        if self.holding is None:
            return data
        self.held += data
        return b""

    def next_due(self) -> float | None:
        due = [at for at in (self.enter_at, self.release_at) if at is not None]
        return min(due) if due else None

    def tick(self, now: float, offset: float) -> tuple[bytes, Note | None]:
        """What is due at `now` (loop time `offset`): Enter, with the note that it was typed;
        or the held keys."""
        if self.enter_at is not None and self.enter_at <= now:
            assert self.holding is not None  # Enter is due only while a request is typed
            self.enter_at = None
            self.release_at = now + RELEASE_AFTER
            return b"\r", Note(self.holding, "typed", t=offset, held=len(self.held))
        if self.release_at is not None and self.release_at <= now:
            self.release_at = None
            held, self.held, self.holding = bytes(self.held), bytearray(), None
            return held, None
        return b"", None
