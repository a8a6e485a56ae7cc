"""Terminal emulators behind one small interface.

The text log and the detector need the screen a person sees, not raw bytes. Two
implementations: pyavt (asciinema's avt in Rust; fast, has the alternate screen) is the
default; pyte (pure Python) is kept for comparison and as a fallback. Both are pure: they
do no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol


class Emulator(Protocol):
    cols: int
    rows: int

    def feed(self, text: str) -> tuple[set[int], int, list[str], list[str]]:
        """Feed output. Returns (changed row indices, rows scrolled off the top, those rows as
        logical lines with soft-wrapped rows joined, the first screen's worth of them as rows,
        right-trimmed)."""

    def rows_text(self, indices: Iterable[int]) -> list[str]:
        """The texts of these visible rows, right-trimmed."""

    def resize(self, cols: int, rows: int) -> list[str]:
        """Change the size; returns logical lines pushed off the top by the reflow."""

    def screen_lines(self) -> list[str]:
        """The visible screen as logical lines: soft-wrapped rows joined (the first one with
        the rows of it that scrolled off the top)."""

    def screen_lines_at(self) -> list[tuple[int, str]]:
        """The same, each with the row it starts on."""


class AvtEmulator:
    name = "avt"

    def __init__(self, cols: int, rows: int):
        import avt
        from avt._avt.util import TextUnwrapper

        self.cols, self.rows = cols, rows
        # scrollback_limit=0: scrolled rows come back from feed_str and are not kept in memory.
        self._vt = avt.Vt(cols, rows, scrollback_limit=0)
        self._unwrapper = TextUnwrapper()
        # The text of rows scrolled off that the top row continues (a long line wrapped across
        # the top of the screen): the start of the screen's first logical line.
        self._held: list[str] = []

    def _unwrap(self, scrolled) -> list[str]:
        out = []
        for line in scrolled:
            text = self._unwrapper.push(line)
            if text is not None:
                out.append(text.rstrip())
                self._held.clear()
            else:
                self._held.append(line.text)  # (text only: a 10 MB line wraps into 100,000 rows)
        return out

    def feed(self, text: str) -> tuple[set[int], int, list[str], list[str]]:
        changed, scrolled = self._vt.feed_str(text)
        # (rows: the first screen's worth only; a flood scrolls millions, each one a cost)
        return set(changed), len(scrolled), self._unwrap(scrolled), [line.text.rstrip() for line in scrolled[: self.rows]]

    def rows_text(self, indices: Iterable[int]) -> list[str]:
        vt = self._vt
        return [vt[i].text.rstrip() for i in indices]

    def resize(self, cols: int, rows: int) -> list[str]:
        self.cols, self.rows = cols, rows
        _, scrolled = self._vt.resize(cols, rows)
        return self._unwrap(scrolled)

    def screen_lines(self) -> list[str]:
        return [text for _, text in self.screen_lines_at()]

    def screen_lines_at(self) -> list[tuple[int, str]]:
        from avt._avt.util import TextUnwrapper

        unwrapper = TextUnwrapper()
        out = []
        start = 0
        held = "".join(self._held)
        for row, line in enumerate(self._vt.view()):
            text = unwrapper.push(line)
            if text is not None:
                out.append((start, (held + text if start == 0 else text).rstrip()))
                start = row + 1
        last = unwrapper.flush()
        if last is not None:
            out.append((start, (held + last if start == 0 else last).rstrip()))
        return out


class PyteEmulator:
    """pyte's Screen, plus capture of rows that scroll off the top (pyte drops them).

    No alternate screen (pyte issue #90): a full-screen program draws over the primary
    screen, which the text log then sees as replaced rows.
    """

    name = "pyte"

    def __init__(self, cols: int, rows: int):
        import pyte

        emulator = self

        class _Screen(pyte.Screen):
            def index(self) -> None:
                top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
                if top == 0 and self.cursor.y == bottom:
                    emulator._scrolled_rows.append(_render(self.buffer[top], self.columns))
                super().index()

        self.cols, self.rows = cols, rows
        self._scrolled_rows: list[str] = []
        self._screen = _Screen(cols, rows)
        self._stream = pyte.Stream(self._screen)

    def feed(self, text: str) -> tuple[set[int], int, list[str], list[str]]:
        self._stream.feed(text)
        changed = set(self._screen.dirty)
        self._screen.dirty.clear()
        scrolled, self._scrolled_rows = self._scrolled_rows, []
        if scrolled:
            changed = set(range(self.rows))
        rows = [s.rstrip() for s in scrolled]
        return changed, len(rows), rows, rows[: self.rows]

    def rows_text(self, indices: Iterable[int]) -> list[str]:
        return [_render(self._screen.buffer[i], self._screen.columns).rstrip() for i in indices]

    def resize(self, cols: int, rows: int) -> list[str]:
        self.cols, self.rows = cols, rows
        self._screen.resize(rows, cols)
        return []

    def screen_lines(self) -> list[str]:
        return self.rows_text(range(self.rows))

    def screen_lines_at(self) -> list[tuple[int, str]]:
        return list(enumerate(self.screen_lines()))


def _render(line, columns: int) -> str:
    return "".join(line[x].data for x in range(columns))


EMULATORS: dict[str, Callable[[int, int], Emulator]] = {"avt": AvtEmulator, "pyte": PyteEmulator}


def make(name: str, cols: int, rows: int) -> Emulator:
    return EMULATORS[name](cols, rows)
