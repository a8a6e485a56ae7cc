"""Reading back from the `.cast` what a flood left there (flood.py), on the render thread:
first let the flood pass (the writer has the CPU meanwhile), then read it in CATCH_UP pieces
and hand each to rendering as a batch, until everything written has been read.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from . import asciicast
from .flood import CATCH_UP, Flood

# Under a flood, rendering waits until nothing has been written for this long.
QUIET = 0.2


def catch_up(cast_path: str, at: int, flood: Flood, render: Callable[[list], None]) -> None:
    """Render what was left in the recording from byte `at` on; then output is queued again."""
    pos, rest, quiet_at = at, b"", None
    with open(cast_path, "rb") as fh:
        fh.seek(at)
        while True:
            written = flood.written_to()
            if flood.too_far(written - pos) and written != quiet_at:  # the flood goes on
                quiet_at = wait_for_quiet(flood)
            chunk = fh.read(CATCH_UP)
            if chunk:
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                pos += cut
                render(events(data[:cut]))
                continue
            if flood.caught_up(pos):  # all of it read (the writer flushes each batch)
                return
            time.sleep(0.02)  # written, not yet flushed


def wait_for_quiet(flood: Flood) -> int:
    """Until nothing has been written for QUIET seconds; returns the end written then."""
    while True:
        mark = flood.written_to()
        time.sleep(QUIET)
        if flood.written_to() == mark:
            return mark


def events(lines: bytes) -> list:
    """Recorded events (lines of the `.cast`) as the render thread's queue holds them."""
    batch: list = []
    for line in lines.splitlines():
        event = asciicast.parse_event(line)
        if event is None:
            continue
        t, code, data = event
        if code == "o":
            batch.append(("o", t, data))
        elif code == "r" and (size := asciicast.resize_size(data)):
            batch.append(("r", t, size))
    return batch
