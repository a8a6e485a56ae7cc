"""supervise's own few writes to the user's terminal: the title while a continue waits for a
usage limit to reset (put back after), a bell, a desktop notification (OSC 9, or OSC 777 for
terminals of the rxvt line). Never on the agent's screen, and never in the middle of the
agent's output: a write waits until the output stands between escape sequences and whole
characters, as a sequence cut in two would print garbage.

Pure: bytes in, bytes to write out; the PTY loop writes them.
"""

from __future__ import annotations

from ..channel import Terminal
from ..plaintext import plain

TITLE_PUSH, TITLE_POP = b"\x1b[22;0t", b"\x1b[23;0t"  # xterm's title stack: the agent's title comes back
TEXT_MAX = 200
_TAIL_MAX = 4096  # an escape sequence open longer than this is taken for over (a lost terminator)


class TermWriter:
    def __init__(self, term: str = ""):
        self.osc777 = term.startswith(("rxvt", "foot"))
        self.waits: set[int] = set()  # the waits the title shows: a key from the user calls them off
        self._titled = False
        self._tail = b""  # the agent's unfinished escape sequence or character, if its output ends in one
        self._queued = bytearray()

    def child(self, data: bytes) -> bytes:
        """The agent wrote `data`: what of ours may follow it now."""
        self._tail = _open(self._tail + data if self._tail else data)
        return self._flush()

    def put(self, message: Terminal) -> bytes:
        """One of ours, to write as soon as it may be."""
        text = plain(message.text or "", newlines=False)[:TEXT_MAX].encode("utf-8", "replace")
        if message.kind == "title":
            if message.text is not None:
                self.waits.add(message.id)
                self._queued += (b"" if self._titled else TITLE_PUSH) + b"\x1b]2;" + text + b"\x07"
                self._titled = True
            else:
                self.waits.discard(message.id)
                self._restore()
        elif message.kind == "bell":
            self._queued += b"\x07"
        elif message.kind == "osc":
            self._queued += (b"\x1b]777;notify;supervise;" if self.osc777 else b"\x1b]9;") + text + b"\x07"
        return self._flush()

    def keys(self, pressed: bool) -> tuple[list[int], bytes]:
        """Input came from the terminal (`pressed`: a key, not a mouse or focus report): the
        waits it calls off, and what to write (the title put back)."""
        if not pressed or not self.waits:
            return [], b""
        gone, self.waits = sorted(self.waits), set()
        self._restore()
        return gone, self._flush()

    def close(self) -> bytes:
        """The session ends: the title put back, whatever the agent's output ended in."""
        self.waits.clear()
        self._restore()
        out, self._queued, self._tail = bytes(self._queued), bytearray(), b""
        return out

    def _restore(self) -> None:
        if self._titled:
            self._queued += TITLE_POP
            self._titled = False

    def _flush(self) -> bytes:
        if self._tail or not self._queued:
            return b""
        out, self._queued = bytes(self._queued), bytearray()
        return out


def _open(buf: bytes) -> bytes:
    """The unfinished escape sequence or UTF-8 character at the end of `buf` (b"": none),
    judged from its last _TAIL_MAX bytes (all the PTY loop's copy in C hands over)."""
    buf = buf[-_TAIL_MAX:]
    i = buf.rfind(b"\x1b")
    if i != -1 and not _complete(buf[i:]):
        return buf[i:]
    j, following = len(buf) - 1, 0
    while j >= 0 and following < 3 and 0x80 <= buf[j] < 0xC0:
        j, following = j - 1, following + 1
    if j >= 0 and buf[j] >= 0xC0:
        need = 2 if buf[j] < 0xE0 else 3 if buf[j] < 0xF0 else 4
        if following + 1 < need:
            return buf[j:]
    return b""


def _complete(seq: bytes) -> bool:
    """Is the escape sequence `seq` (from its ESC, with no ESC after) finished?"""
    if len(seq) < 2:
        return False
    kind = seq[1]
    if kind == 0x5B:  # CSI: parameters, then a final byte
        return any(0x40 <= b <= 0x7E for b in seq[2:])
    if kind in b"]PX^_":  # a string: ended by BEL (an ST, ESC \, would be the last ESC)
        return 0x07 in seq[2:]
    if 0x20 <= kind <= 0x2F:  # ESC ( B and the like: one more byte
        return len(seq) >= 3
    return True
