"""`supervise patterns check`: run a pattern set over a recording or a text log.

A .cast file is replayed through the same renderer and detector a live session uses, so
what it prints is what a session would have recorded, and a pattern that goes over its time
limit is turned off here as it would be there, and said. A text log has no timing: each line
counts as a line that appeared, and matches are reported by line number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from ..detection import saferegex
from ..detection.detector import Detection, Detector
from ..detection.patterns import Pattern, PatternSet
from ..errors import SuperviseError
from ..plaintext import plain
from . import asciicast
from .export import replay

GIVE = "give a session.cast or session.log; `supervise show ID` names them"
HEAD = 64 * 1024  # how much of a file is read to tell a text from binary data
Told = Callable[[str], None]  # takes the line that says a pattern was turned off


def is_cast(path: Path) -> bool:
    try:
        with asciicast.open_text(path) as fh:
            header = json.loads(fh.readline())
        return isinstance(header, dict) and header.get("version") == 2
    except (OSError, EOFError, ValueError):
        return False


def cast_command(path: Path) -> str | None:
    command = asciicast.read_header(path).get("command")
    return command.split()[0] if isinstance(command, str) and command.split() else None


def check_cast(path: Path, patterns: PatternSet, told: Told = lambda line: None) -> Iterator[Detection]:
    log, frames = replay(path)
    detector = Detector(patterns)
    off: set[str] = set()
    for t, frame in frames:
        yield from detector.feed(t, frame.appeared, [r.text for r in log.rows])
        for pattern in _newly_off(patterns, off):
            told(slow_line(pattern, f"the screen at {t:.3f} s of {plain(path.name, newlines=False)}"))


def check_text(path: Path, patterns: PatternSet, told: Told = lambda line: None) -> Iterator[Detection]:
    detector = Detector(patterns, grace=0.0)
    try:
        with asciicast.open_text(path) as fh:
            lines = fh.read().splitlines()
    except (OSError, EOFError) as exc:
        raise _unreadable(path, exc) from exc
    off: set[str] = set()
    for number, line in enumerate(lines, start=1):
        yield from detector.feed(float(number), [(0, line)], [line])
        for pattern in _newly_off(patterns, off):
            told(slow_line(pattern, f"line {number} of {plain(path.name, newlines=False)}"))


def examine(path: Path) -> str:
    """'cast' or 'text': what the file is, or a SuperviseError that says why it is neither."""
    shown = plain(str(path), newlines=False)
    if not path.exists():
        raise SuperviseError(f"no such file: {shown}", GIVE)
    if path.is_dir():
        raise SuperviseError(f"{shown} is a directory, not a recording or a text log", GIVE)
    if not path.is_file():
        raise SuperviseError(f"{shown} is not a regular file, so not a recording or a text log", GIVE)
    try:
        with asciicast.open_text(path) as fh:
            head = fh.read(HEAD)
    except (OSError, EOFError) as exc:
        raise _unreadable(path, exc) from exc
    if "\0" in head:
        raise SuperviseError(f"{shown} is neither a recording nor a text log: it holds binary data", GIVE)
    return "cast" if is_cast(path) else "text"


def check(path: Path, patterns: PatternSet, told: Told = lambda line: None) -> tuple[str, Iterator[Detection]]:
    """('cast' | 'text', detections). `told`: given the line for each pattern turned off."""
    kind = examine(path)
    if kind == "cast":
        return "cast", check_cast(path, patterns, told)
    return "text", check_text(path, patterns, told)


def slow_line(pattern: Pattern, where: str) -> str:
    why = saferegex.turned_off(f"{pattern.qualified} ({pattern.event})", pattern.regex.limit_hit, where)
    return str(SuperviseError(f"{why}, as in a live session", saferegex.HINT))


def _newly_off(patterns: PatternSet, off: set[str]) -> list[Pattern]:
    """The patterns turned off since the last call (`off`: those already said)."""
    new = [p for p in patterns.patterns if p.regex.slow and p.qualified not in off]
    off.update(p.qualified for p in new)
    return new


def _unreadable(path: Path, exc: BaseException) -> SuperviseError:
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    hint = "check its permissions" if isinstance(exc, PermissionError) else GIVE
    return SuperviseError(f"cannot read {plain(str(path), newlines=False)}: {plain(why, newlines=False)}", hint)


def log_lines(path: Path) -> list[str]:
    """The text log of a recording (rendered as a live session would), or a text log's lines."""
    if is_cast(path):
        log, frames = replay(path)
        lines = [line for _, frame in frames for line in frame.logged]
        return lines + log.finish()
    with asciicast.open_text(path) as fh:
        return fh.read().splitlines()
