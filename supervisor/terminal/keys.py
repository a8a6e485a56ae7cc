"""Is the user typing? What the PTY loop knows of the user's keys, for deciding whether
supervise may type into the agent now. Pure: keys and times in, a reason out.

"Typing" is a key within USER_QUIET seconds, or a half-typed line: printable keys since
the agent last closed a dialog, with no Enter, Ctrl-C or Ctrl-U after them. Keys typed while
the agent was busy count (it keeps them in its input line); keys from before a dialog
closed went to it (its "y", a menu's "1"), not to a draft.
"""

from __future__ import annotations

import re

USER_QUIET = 1.5  # a key within this many seconds: the user is typing, don't inject
_ESCAPES = re.compile(rb"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|O.|.)?", re.DOTALL)
_LINE_ENDS = frozenset(b"\r\n\x03\x15")  # Enter, ^C, ^U: the input line is empty again
_ERASE = frozenset(b"\x7f\x08")
# What the terminal reports by itself, not a key the user pressed: mouse (SGR and X10) and focus.
_REPORTS = re.compile(rb"\x1b\[<[\d;]*[mM]|\x1b\[M[\s\S]{3}|\x1b\[[IO]")


class KeyWatch:
    def __init__(self) -> None:
        self.last_key = float("-inf")
        self.draft = 0  # characters the user has typed on the agent's input line, roughly
        self.draft_since = 0.0  # when that line was begun (loop time)

    def keys(self, data: bytes, now: float, t: float) -> bool:
        """`data` came from the terminal at monotonic `now`, loop time `t`. Returns whether
        the user pressed a key (any, Esc included: not a mouse or focus report)."""
        self.last_key = now
        for byte in _ESCAPES.sub(b"", data):
            if byte in _LINE_ENDS:
                self.draft = 0
            elif byte in _ERASE:
                self.draft = max(0, self.draft - 1)
            elif byte >= 0x20:
                if not self.draft:
                    self.draft_since = t
                self.draft += 1
        return bool(_REPORTS.sub(b"", data))

    def typing(self, now: float, fresh: float) -> str | None:
        """Why not to type now (None: the user is not typing). `fresh`: loop time at which
        the agent last closed a dialog."""
        if now - self.last_key < USER_QUIET:
            return "user typing"
        if self.draft and self.draft_since >= fresh:
            return "user has a half-typed line"
        return None
