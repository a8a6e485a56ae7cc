"""Lines of a session's text log around a place in it (a search hit's offset): read from the
log itself, a window at a time, masked as one text, each line plain. For the MCP server's
`excerpt`, `supervise search --context` and `supervise show --at`."""

from __future__ import annotations

from bisect import bisect_right

from ..plaintext import plain
from ..redact import Span, apply, spans
from . import query

WINDOW = 256 << 10  # bytes of a text log read around a place


def log_lines(log_path: str, at: int | None, lines: int, before: int, most: int) -> tuple[int, list[str], int]:
    """`lines` lines of the log at `log_path` around byte `at` (None: its end), `before` of
    them before the line that holds it: (the byte, as it was kept within the log; the lines,
    plain and masked, the one that holds it cut to `most` characters around it; which of
    them holds it). OSError when the log cannot be read."""
    with open(log_path, "rb") as fh:
        size = fh.seek(0, 2)
        at = size if at is None else max(0, min(at, size))
        begin = max(0, at - WINDOW // 2)
        fh.seek(begin)
        data = fh.read(WINDOW)
    text, index, column = _window(data, begin, at, begin + len(data) >= size)
    first = max(0, index - before)
    lo = max(0, first - 2)  # with a line each side: a secret wrapped into the excerpt
    shown, column = _masked(text[lo : first + lines + 2], index - lo, column)
    chosen = [plain(query.around(line, column, most) if lo + i == index else line, newlines=False) for i, line in enumerate(shown)][
        first - lo :
    ][:lines]
    return at, chosen, index - first


def pointed(lines: list[str], hit: int) -> list[str]:
    """Lines as the command line prints them around a place: `>` before the one that holds it, `|` before the others."""
    return [f"{'>' if n == hit else '|'} {line}" for n, line in enumerate(lines)]


def _window(data: bytes, begin: int, at: int, to_end: bool) -> tuple[list[str], int, int]:
    """The lines of `data` (the log from byte `begin`; to its end if `to_end`), which of
    them holds byte `at` and at which character. A line the window cuts is left out (its cut
    part could be a secret's tail), unless it holds `at`: of that one only the part around
    `at`, half a window from the cut, is shown."""
    parts = data.split(b"\n")
    starts = [begin]
    for part in parts[:-1]:
        starts.append(starts[-1] + len(part) + 1)
    index = max(0, bisect_right(starts, at) - 1)
    column = len(parts[index][: at - starts[index]].decode("utf-8", errors="replace"))
    keep = range(1 if begin and index > 0 else 0, len(parts) - (0 if to_end or index == len(parts) - 1 else 1))
    text = [parts[i].decode("utf-8", errors="replace") for i in keep]
    return text, index - keep.start, column


def _masked(lines: list[str], hit: int, column: int) -> tuple[list[str], int]:
    """`lines` masked as one text (a secret a terminal wrapped is masked on each line it
    touches), and where character `column` of line `hit` is in its masked line."""
    edits, out, at, moved = spans("\n".join(lines)), [], 0, column
    for i, line in enumerate(lines):
        end = at + len(line)
        mine = [(max(a, at) - at, min(b, end) - at, token) for a, b, token in edits if a < end and b > at]
        if i == hit:
            moved = _moved(column, mine)
        out.append(apply(line, mine) if mine else line)
        at = end + 1
    return out, moved


def _moved(column: int, edits: list[Span]) -> int:
    """Character `column` of a line, in the line with `edits` applied (inside a secret: its mask)."""
    delta = 0
    for a, b, token in edits:
        if column < b:
            return a + delta if column >= a else column + delta
        delta += len(token) - (b - a)
    return column + delta
