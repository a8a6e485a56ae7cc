"""When two texts of one screen row are the same line a moment apart: a spinner frame, a
counter ticking, a line being typed. Pure functions over text.
"""

from __future__ import annotations

import re
from functools import lru_cache

SPINNER_GLYPHS = "■⬝⠁⠂⠄⡀⢀⠠⠐⠈⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏✢✳✶✻✽✺·*●◐◓◑◒|/-\\ "
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
# What is left of an input line once its text is gone: a prompt glyph.
_PROMPT_ONLY = re.compile(r"^\s*[❯›>$%#┃]?\s*$")


def is_update(old: str, new: str) -> bool:
    """Is `new` the same line as `old`, a moment later? (A line cut back to its bare prompt
    or bar is not: one agent redraws a sent message's row as its empty input box `❯`,
    another a message's `┃  text` as a bare `┃`.)"""
    old, new = old.rstrip(), new.rstrip()
    if shape(old) == shape(new):
        return True
    if not new or not (new.startswith(old) or old.startswith(new)):
        return False
    return not (_PROMPT_ONLY.match(new) or _PROMPT_ONLY.match(old))


@lru_cache(maxsize=4096)  # (a redraw compares the same rows again and again)
def shape(text: str) -> str:
    """What stays the same across frames of one status line: no digits, no spinner glyph."""
    return _SPACES.sub(" ", _DIGITS.sub("#", text.lstrip(SPINNER_GLYPHS))).strip()
