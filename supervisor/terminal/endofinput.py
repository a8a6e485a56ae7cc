"""Input that is not a terminal: a file, a pipe, /dev/null or a closed stdin.

Its bytes go to the agent as typed keys would, and when it ends the agent's terminal is
told as `script` tells it: an EOF key (the terminal's VEOF, ^D) once the agent has read what
came before it, or after EOF_WAIT if it never reads. Unlike `script`, it also waits until
the agent's terminal has kept one mode, and the agent has printed nothing and been sent
nothing, for EOF_QUIET: an agent busy with its last line may be between two terminal modes
(a line editor gives the terminal back in cooked mode while it runs a command, and a
starting one has not taken raw mode yet), and an EOF key that lands in cooked mode reaches
a raw-mode reader as a NUL. (What was just written is not counted as unread at once: the
kernel hands it to the terminal a moment later.)
An EOF key lands on its own only at the start of a line; after a partial line the first one
hands the line over, so a second follows. Pure: what was read, what the agent's terminal
still holds and when it last printed in; the keys to send out.
"""

from __future__ import annotations

# As `script` (util-linux): an agent that ignores its input must not keep the end from coming.
EOF_WAIT = 2.0
EOF_RECHECK = 0.1  # how often to look whether the agent has read what it was sent
EOF_QUIET = 0.2  # and nothing happened on its terminal for this long
EOF_KEY = b"\x04"


class EndOfInput:
    def __init__(self) -> None:
        self.ended_at: float | None = None  # when stdin ended (loop clock)
        self.done = False  # no EOF key is due any more
        self._at_line_start = True
        self._mode: bool | None = None  # the agent's terminal in canonical mode, as last seen
        self._mode_since: float | None = None  # ... since when
        self._sent_at: float | None = None
        self._sent_mode: bool | None = None

    def took(self, data: bytes) -> None:
        """`data` was read from stdin and is on its way to the agent."""
        if data:
            self._at_line_start = data[-1:] in (b"\n", b"\r")

    def ended(self, now: float) -> None:
        if self.ended_at is None:
            self.ended_at = now

    def due(self, now: float, busy: bool, unread: int | None, canonical: bool | None, last_activity: float) -> bytes | None:
        """The EOF keys to send now, or None. `busy`: keys are still on their way to the
        agent's terminal; `unread`: what it holds that the agent has not read, `canonical`:
        its mode (None: unknown); `last_activity`: when the agent last printed or was last
        written to (loop clock). Once sent, the key is sent once more if the terminal then
        changed modes: it was read in the other one (a NUL to a line editor that was still
        starting)."""
        if self.done or self.ended_at is None or busy:
            return None
        if self._mode_since is None or canonical != self._mode:
            self._mode, self._mode_since = canonical, now
        settled = not unread and now - max(last_activity, self._mode_since) >= EOF_QUIET
        if self._sent_at is None:
            if not settled and now - self.ended_at < EOF_WAIT:
                return None
            self._sent_at, self._sent_mode = now, canonical
            return EOF_KEY if self._at_line_start else EOF_KEY * 2
        if canonical is None or now - self._sent_at >= EOF_WAIT:
            self.done = True
        elif settled and canonical != self._sent_mode:
            self.done = True
            return EOF_KEY
        return None

    def next_check(self, now: float) -> float | None:
        """When to look again (loop clock), while an EOF key may still be due."""
        if self.done or self.ended_at is None:
            return None
        since = self.ended_at if self._sent_at is None else self._sent_at
        return min(now + EOF_RECHECK, since + EOF_WAIT)
