"""Text that can only ever be text: no control keys, no escape sequences.

A session context is written by a model that read the session, and the session can hold
text an attacker wrote (a file the agent read, a web page). What we type into an agent or
print to the user's terminal must not carry keys: a `\\r` submits a line (`!cmd` runs a shell
command in an agent), `\\x03` interrupts, an escape sequence ends a bracketed paste early
or rewrites the user's screen. So: escape sequences (CSI, OSC, DCS, ...) are removed whole,
every other C0/C1 control character and DEL is dropped, tabs become spaces, and newlines
stay only where asked for. Bidirectional overrides go too (they make text read differently
than it is).
"""

from __future__ import annotations

import json
import re

# ESC [ ... final, ESC ] ... BEL/ST, ESC P/X/^/_ ... ST, and two-character ESC sequences;
# the 8-bit C1 forms (CSI \x9b, OSC \x9d, DCS \x90, ...) alike.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain(text: str, newlines: bool = True) -> str:
    """`text` with every escape sequence and control character removed (\\r\\n and \\r become
    \\n first); with newlines=False, line breaks become spaces too."""
    text = _SEQUENCES.sub("", text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    text = _CONTROLS.sub("", text)
    if not newlines:
        text = text.replace("\n", " ")
    return text


def clip(text: str, most: int) -> str:
    """`text` cut to `most` characters, an ellipsis saying so."""
    return text if len(text) <= most else text[: most - 1] + "…"


def quoted(word: str) -> str:
    """A word the user gave, as an error quotes it: one line, no control keys, 40 characters of it at most."""
    return clip(plain(word, newlines=False), 41)


def no_controls(text: str) -> str:
    """`text` with control characters and bidi overrides removed (line breaks and tabs
    kept): for screen rows, where an emulator has already taken the escape sequences but
    may keep a DEL or a C1 byte a child printed as a character."""
    return _CONTROLS.sub("", text)


_UNSAFE_IN_JSON = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def json_text(data: object, indent: int | None = 2) -> str:
    """JSON for a terminal: readable non-ASCII text, but every character a terminal could
    take as a control (json.dumps escapes only those below 0x20) written as \\uXXXX."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_rows(rows: list) -> str:
    """A JSON array with one item a line: as readable for a list of records as indenting,
    and written by json's C encoder (indenting takes the pure-Python one: 0.5 s for 10,000
    sessions, against 0.05 s)."""
    if not rows:
        return "[]"
    return "[\n" + ",\n".join(json_text(row, indent=None) for row in rows) + "\n]"
