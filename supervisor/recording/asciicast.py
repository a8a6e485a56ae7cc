"""asciicast v2: the recording format asciinema plays (`asciinema cat FILE`).

A header line of JSON, then one JSON array per event: `[seconds, code, data]` with code
`o` (output), `i` (input), `r` (resize, "COLSxROWS") or `m` (marker). Each line is written
whole, so a recording cut short by a crash still parses up to its last complete line.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class Header:
    width: int
    height: int
    timestamp: int
    command: str | None = None
    title: str | None = None
    env: Mapping[str, str] | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {"version": 2, "width": self.width, "height": self.height, "timestamp": self.timestamp}
        for key in ("command", "title"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if self.env:
            data["env"] = dict(self.env)
        return json.dumps(data, ensure_ascii=False)


def event_line(offset: float, code: str, data: str) -> str:
    return json.dumps([round(offset, 6), code, data], ensure_ascii=False) + "\n"


# JSON string escapes as json.dumps(ensure_ascii=False) writes them, applied to UTF-8 bytes:
# the common ones with bytes.replace, and any other control character (rare: looked for with
# bytes.translate, 5x quicker than a regex search) one by one. 1.6 ms a MB against
# json.dumps' 5-7 ms, which cost the recorder a third of a core under a 60 MB/s flood.
# (One byte at a time: bytes.replace of a single byte is a memchr loop; of CR LF together, a
# general search, slower than the two passes.)
_COMMON = ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\n", b"\\n"), (b"\r", b"\\r"), (b"\x1b", b"\\u001b"), (b"\t", b"\\t"))
_OTHER = bytes(c for c in range(0x20) if bytes([c]) not in (b"\n", b"\r", b"\x1b", b"\t"))
_SHORT = {0x08: b"\\b", 0x0C: b"\\f"}


def escaped_in_python(data: bytes) -> bytes:
    """JSON's string escapes on UTF-8 bytes; `_escape.escape` (C) does the same in one pass."""
    for raw, escape in _COMMON:
        if raw in data:
            data = data.replace(raw, escape)
    if len(data.translate(None, _OTHER)) != len(data):
        for c in _OTHER:
            if c in data:
                data = data.replace(bytes([c]), _SHORT.get(c) or b"\\u%04x" % c)
    return data


try:
    from ._escape import escape as _escaped

    ESCAPES_IN_C = True
except ImportError:  # built where no C compiler was found
    _escaped = escaped_in_python
    ESCAPES_IN_C = False


def event_bytes(offset: float, code: str, data: str) -> bytes:
    """`event_line(...)` encoded as UTF-8, the same bytes, made faster."""
    return event_utf8(offset, code, data.encode("utf-8", "surrogatepass"))


def event_utf8(offset: float, code: str, data: bytes) -> bytes:
    """The same for data already encoded."""
    return b"[%r, \"%s\", \"%s\"]\n" % (round(offset, 6), code.encode(), _escaped(data))


class Writer:
    """Appends events to an open binary file; the caller decides when to flush. It knows
    where each event lies in the file (a reader that fell behind reads them back there)."""

    def __init__(self, fileobj: IO[bytes], header: Header):
        self.file = fileobj
        self.position = 0
        self._put((header.to_json() + "\n").encode())
        self.file.flush()

    def write(self, offset: float, code: str, data: str | bytes) -> tuple[int, int]:
        """Returns where the event's line starts and ends in the file. `data`: text, or
        UTF-8 (output that came as ASCII is written as it came)."""
        return self._put(event_utf8(offset, code, data) if isinstance(data, bytes) else event_bytes(offset, code, data))

    def _put(self, line: bytes) -> tuple[int, int]:
        start = self.position
        self.file.write(line)
        self.position += len(line)
        return start, self.position

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def open_text(path: Path):
    """A recording as text, gzip-compressed (`.gz`) or not."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_header(path: Path) -> dict:
    with open_text(path) as fh:
        return json.loads(fh.readline())


def read(path: Path) -> tuple[dict, Iterator[tuple[float, str, str]]]:
    """The header and an iterator of events. A torn last line (crash mid-write) is skipped."""
    fh = open_text(path)
    first = fh.readline()
    try:
        header = json.loads(first)
    except ValueError as exc:
        fh.close()
        raise ValueError(f"{path} is not an asciicast v2 file") from exc

    def events() -> Iterator[tuple[float, str, str]]:
        with fh:
            for line in fh:
                try:
                    t, code, data = json.loads(line)
                except ValueError:
                    continue
                yield float(t), code, data

    return header, events()
