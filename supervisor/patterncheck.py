"""`supervise patterns check`: run a pattern set over a recording or a text log.

A .cast file is replayed through the same renderer and detector a live session uses, so
what it prints is what a session would have recorded. A text log has no timing: each line
counts as a line that appeared, and matches are reported by line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from . import asciicast
from .detector import Detection, Detector
from .emulator import DEFAULT_EMULATOR, make
from .errors import SuperviseError
from .patterns import PatternSet
from .textlog import TextLog


def is_cast(path: Path) -> bool:
    try:
        with asciicast.open_text(path) as fh:
            header = json.loads(fh.readline())
        return isinstance(header, dict) and header.get("version") == 2
    except (OSError, ValueError):
        return False


def cast_command(path: Path) -> str | None:
    header, _ = asciicast.read(path)
    command = header.get("command") or ""
    return command.split()[0] if command else None


def check_cast(path: Path, patterns: PatternSet) -> Iterator[Detection]:
    header, events = asciicast.read(path)
    log = TextLog(make(DEFAULT_EMULATOR, int(header.get("width", 80)), int(header.get("height", 24))))
    detector = Detector(patterns)
    for t, code, data in events:
        if code == "o":
            frame = log.feed(t, data)
        elif code == "r":
            try:
                cols, rows = (int(x) for x in data.split("x"))
            except ValueError:
                continue
            frame = log.resize(t, cols, rows)
        else:
            continue
        yield from detector.feed(t, frame.appeared, [r.text for r in log.rows])


def check_text(path: Path, patterns: PatternSet) -> Iterator[Detection]:
    detector = Detector(patterns, grace=0.0)
    try:
        with asciicast.open_text(path) as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise SuperviseError(f"cannot read {path}: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, start=1):
        yield from detector.feed(float(number), [(0, line)], [line])


def check(path: Path, patterns: PatternSet) -> tuple[str, Iterator[Detection]]:
    """('cast' | 'text', detections)."""
    if not path.is_file():
        raise SuperviseError(f"no such file: {path}", "give a session.cast or session.log (see `supervise show ID`)")
    if is_cast(path):
        return "cast", check_cast(path, patterns)
    return "text", check_text(path, patterns)
