"""Track terminal modes a child turns on, so we can turn them off if it dies without doing so.

A crashed TUI can leave the user's terminal on the alternate screen, with the cursor
hidden, mouse reporting or the kitty keyboard protocol on: keys then print garbage in the
user's shell. We undo only what the child itself enabled and left enabled.
"""

from __future__ import annotations

import re

_PRIVATE = re.compile(r"\x1b\[\?([\d;]+)([hl])")
_KITTY = re.compile(r"\x1b\[(>\d*|<\d*|=\d*(?:;\d*)?)u")
_MODIFY_OTHER_KEYS = re.compile(r"\x1b\[>4(?:;(\d+))?m")

# private mode -> what a well-behaved program leaves it as ("l" = off, "h" = on)
_DEFAULTS = {
    "1": "l",  # application cursor keys
    "25": "h",  # cursor visible
    "47": "l",
    "1047": "l",
    "1049": "l",  # alternate screen
    "1000": "l",
    "1002": "l",
    "1003": "l",
    "1005": "l",
    "1006": "l",
    "1015": "l",  # mouse reporting
    "1004": "l",  # focus events
    "2004": "l",  # bracketed paste
}


class ModeTracker:
    def __init__(self) -> None:
        self.private: dict[str, str] = {}
        self.kitty_depth = 0
        self.modify_other_keys = False

    def feed(self, text: str) -> None:
        if "\x1b" not in text:  # one character is looked for with memchr, far quicker than "\x1b["
            return
        for params, action in _PRIVATE.findall(text):
            for mode in params.split(";"):
                if mode in _DEFAULTS:
                    self.private[mode] = action
        for op in _KITTY.findall(text):
            if op.startswith(">"):
                self.kitty_depth += 1
            elif op.startswith("<"):
                n = int(op[1:] or 1)
                self.kitty_depth = max(0, self.kitty_depth - n)
        for level in _MODIFY_OTHER_KEYS.findall(text):
            self.modify_other_keys = level not in ("", "0")

    def enabled(self, mode: str) -> bool:
        return self.private.get(mode, _DEFAULTS.get(mode)) != _DEFAULTS.get(mode)

    def reset_sequence(self) -> str:
        out = []
        for mode in sorted(self.private, key=int):
            if self.enabled(mode):
                out.append(f"\x1b[?{mode}{_DEFAULTS[mode]}")
        if self.kitty_depth:
            out.append(f"\x1b[<{self.kitty_depth}u")
        if self.modify_other_keys:
            out.append("\x1b[>4m")
        return "".join(out)
