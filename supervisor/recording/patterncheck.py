"""`supervise patterns check`: run a pattern set over a recording or a text log.

A .cast file is replayed through the same renderer and detector a live session uses, so
what it prints is what a session would have recorded. A text log has no timing: each line
counts as a line that appeared, and matches are reported by line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..detection.detector import Detection, Detector
from ..detection.patterns import PatternSet
from ..errors import SuperviseError
from . import asciicast
from .export import replay


def is_cast(path: Path) -> bool:
    try:
        with asciicast.open_text(path) as fh:
            header = json.loads(fh.readline())
        return isinstance(header, dict) and header.get("version") == 2
    except (OSError, ValueError):
        return False


def cast_command(path: Path) -> str | None:
    command = asciicast.read_header(path).get("command") or ""
    return command.split()[0] if command else None


def check_cast(path: Path, patterns: PatternSet) -> Iterator[Detection]:
    log, frames = replay(path)
    detector = Detector(patterns)
    for t, frame in frames:
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


def log_lines(path: Path) -> list[str]:
    """The text log of a recording (rendered as a live session would), or a text log's lines."""
    if is_cast(path):
        log, frames = replay(path)
        lines = [line for _, frame in frames for line in frame.logged]
        return lines + log.finish()
    with asciicast.open_text(path) as fh:
        return fh.read().splitlines()
