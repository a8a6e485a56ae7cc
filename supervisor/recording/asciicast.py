"""asciicast v2: the recording format asciinema plays (`asciinema cat FILE`).

A header line of JSON, then one JSON array per event: `[seconds, code, data]` with code
`o` (output), `i` (input), `r` (resize, "COLSxROWS") or `m` (marker). Each line is written
whole, so a recording cut short by a crash still parses up to its last complete line.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class Header:
    """An asciicast file's first line."""

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
# bytes.translate, quicker than a regex search) one by one: json.dumps cost the recorder a
# good share of a core under a flood (docs/benchmarks.md).
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
    return b'[%r, "%s", "%s"]\n' % (round(offset, 6), code.encode(), _escaped(data))


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


MAX_SIDE = 10_000  # columns or rows: more is not a terminal, and would only cost memory


def header_size(header: Mapping[str, Any]) -> tuple[int, int]:
    """The recording's width and height; 80x24 where the header's are not sane numbers."""
    size = []
    for key, default in (("width", 80), ("height", 24)):
        value = header.get(key)
        size.append(value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_SIDE else default)
    return size[0], size[1]


def resize_size(data: str) -> tuple[int, int] | None:
    """A resize event's "COLSxROWS" as numbers, or None if it is not a sane size."""
    try:
        cols, rows = (int(x) for x in data.split("x"))
    except ValueError:
        return None
    return (cols, rows) if 0 < cols <= MAX_SIDE and 0 < rows <= MAX_SIDE else None


def parse_event(line: str | bytes) -> tuple[float, str, str] | None:
    """One event line as (seconds, code, data), or None if it is damaged: not JSON, not a
    three-item array, a time that is not a number, a code or data that is not text."""
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: `[[[[...` nested past the parser's depth
        return None
    if type(event) is not list or len(event) != 3:
        return None
    t, code, data = event
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not isinstance(code, str) or not isinstance(data, str):
        return None
    try:
        t = float(t)
    except OverflowError:
        return None
    if not math.isfinite(t) or t < 0:
        return None
    return t, code, data


class Events:
    """The events of a recording, read as they are iterated. A damaged line is skipped and
    counted (`skipped`); a last line cut short, by a crash or because it is being written,
    is skipped and said apart (`torn`)."""

    def __init__(self, fh: IO[str]):
        self.skipped = 0
        self.torn = False
        self._events = self._read(fh)

    def __iter__(self) -> Iterator[tuple[float, str, str]]:
        return self

    def __next__(self) -> tuple[float, str, str]:
        return next(self._events)

    def _read(self, fh: IO[str]) -> Iterator[tuple[float, str, str]]:
        with fh:
            for line in fh:
                event = parse_event(line)
                if event is not None:
                    yield event
                elif not line.endswith("\n"):
                    self.torn = True
                elif line.strip():
                    self.skipped += 1


def read(path: Path) -> tuple[dict, Events]:
    """The header and its events, damaged lines skipped (see `Events`). ValueError if the
    first line is not a header."""
    fh = open_text(path)
    first = fh.readline()
    try:
        header = json.loads(first)
    except (ValueError, RecursionError) as exc:
        fh.close()
        raise ValueError(f"{path} is not an asciicast v2 file") from exc
    if not isinstance(header, dict):
        fh.close()
        raise ValueError(f"{path} is not an asciicast v2 file")
    return header, Events(fh)
