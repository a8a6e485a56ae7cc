"""Turn a terminal stream into the lines a person saw, in order, once each.

An emulator keeps the screen. After each chunk of output we compare the visible rows with
what they showed before: a row's text is a line (`lines.Line`) through the states it takes
where it stands, and one that moved to another row (a view redrawn one row lower) is the
same line. A line goes to the log once, after it left the screen:
- scrolled off the top: always (that is ordinary output);
- replaced or erased in place (an Ink TUI redrawing, a full-screen clear, a program on the
  alternate screen): if it stayed up long enough to read (`settle`, 100 ms: a spinner's
  words seen here last about 120 ms each); one drawn again within `settle` never left;
- still on screen when the stream ends: the final screen.
It is written in the order a person saw it (`lines.Waiting`): a status line redrawn in place
("✻ Compacting conversation…") where it appeared in time, not where its row was first used.
What waits is part of `screen_lines()`, where a reader of the live log finds it.

Pure logic over an `Emulator`; no I/O. Callers write what `feed` returns. The rows change
only under `lock`, held for the emulator's work and the diff alone; another thread reads
them with `row_texts`.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from ..detection.sameline import is_update
from .emulator import Emulator
from .lines import Line, Waiting

# Entering or leaving the alternate screen (vim, less, full-screen TUIs).
_ALT_SWITCH = re.compile(r"\x1b\[\?(?:1049|1047|47)([hl])")
_RESET = re.compile(r"\x1bc")
FEED_SLICE = 64 * 1024


@dataclass
class Frame:
    """What one chunk of output produced."""

    logged: list[str] = field(default_factory=list)  # lines for the text log, in order
    appeared: list[tuple[int, str]] = field(default_factory=list)  # (row, text) newly shown


class TextLog:
    def __init__(self, emulator: Emulator, settle: float = 0.1):
        self.emu = emulator
        self.settle = settle
        self.rows = [Line.drawn(0.0) for _ in range(emulator.rows)]
        self.waiting = Waiting(settle)
        self.lock = threading.Lock()
        self._primary: list[Line] | None = None  # the primary screen's lines while on the alternate one
        # Each row's `Line.places()` as `_unplace` last saw it (for the list `rows` was then),
        # how many rows show each of those texts, and the rows changed in place since.
        self._places: list[tuple[str, ...]] = []
        self._places_for: list[Line] | None = None
        self._shown: dict[str, int] = {}
        self._changed_rows: set[int] = set()

    def feed(self, t: float, text: str) -> Frame:
        frame = Frame()
        start = 0
        if "\x1b[?" in text:
            for switch in _ALT_SWITCH.finditer(text):
                self._feed(t, text[start : switch.start()], frame)
                self._switch(t, switch.group(0), entering=switch.group(1) == "h", frame=frame)
                start = switch.end()
        self._feed(t, text[start:] if start else text, frame)
        frame.logged += self.waiting.release(t)
        return frame

    def _switch(self, t: float, sequence: str, entering: bool, frame: Frame) -> None:
        """The primary screen is not gone while an alternate-screen program runs: keep its
        lines aside and put them back after, so it is neither logged early nor twice."""
        leaving = not entering and self._primary is not None
        if entering and self._primary is None:
            with self.lock:
                self._primary = self.rows
                self.emu.feed(sequence)
                self.rows = [Line.drawn(t, text) for text in self._rows(range(len(self.rows)))]
        elif leaving:
            # the alternate screen's last view, with the lines that wait in their places (a
            # full-screen TUI's old status lines under the conversation it showed to the end)
            for line in self.rows:
                self.waiting.leave(line, t)
            frame.logged += self.waiting.release(t, everything=True)
            with self.lock:
                saved, self._primary = self._primary, None
                assert saved is not None  # leaving: kept on entering
                self.emu.feed(sequence)
                current = self._rows(range(len(self.rows)))
                self.rows = [
                    saved[i] if i < len(saved) and saved[i].text == text else Line.drawn(t, text) for i, text in enumerate(current)
                ]
        else:
            self._feed(t, sequence, frame)

    def _feed(self, t: float, text: str, frame: Frame) -> None:
        # Bounded slices: an emulator returns every row that scrolled off as an object with
        # all its cells, so one huge feed (a renderer catching up) would cost gigabytes. A
        # full reset (ESC c) starts a slice of its own: avt forgets the rows that scrolled
        # off earlier in the same feed (lines were lost from the log in a flood).
        cuts = [m.start() for m in _RESET.finditer(text) if m.start()] if "\x1bc" in text else []
        if not cuts and 0 < len(text) <= FEED_SLICE:
            self._feed_slice(t, text, frame)  # (nearly every chunk: one slice, no copy)
            return
        for lo, hi in zip([0, *cuts], [*cuts, len(text)]):
            for start in range(lo, hi, FEED_SLICE):
                self._feed_slice(t, text[start : min(start + FEED_SLICE, hi)], frame)

    def _feed_slice(self, t: float, text: str, frame: Frame) -> None:
        with self.lock:  # (a slice at a time: a reader waits for one slice, not a flood's worth)
            changed, scrolled_rows, scrolled_lines, as_rows = self.emu.feed(text)
            if scrolled_rows:
                k = min(scrolled_rows, len(self.rows))
                gone, self.rows = self.rows[:k], self.rows[k:] + [Line.drawn(t) for _ in range(k)]
                self._scrolled(t, gone, as_rows, scrolled_lines, frame)
                changed = set(range(len(self.rows)))
            if changed:
                self._diff(t, sorted(changed), frame)

    def _scrolled(self, t: float, gone: list[Line], as_rows: list[str], lines: list[str], frame: Frame) -> None:
        """Rows scrolled off the top (`as_rows`: as they were; `lines`: soft-wrapped rows
        joined): each line is written after the lines it waits for that can be written, a
        line that was never on our screen (a burst of output) after every line that left
        before it."""
        pieces: list[list[Line]] = [[] for _ in lines]
        at = 0
        for line, row in zip(gone, as_rows):
            text = line.text.rstrip()
            if not text.strip():
                continue
            if not row.strip():
                # erased and then scrolled within one write (a TUI that erases its footer
                # and prints its goodbye below it as it quits): it left in place
                self.waiting.leave(line, t)
                continue
            found = next((j for j in range(at, len(lines)) if text in lines[j]), None)
            if found is None:
                line.done = True  # (part of a wrapped line the emulator holds: it comes whole later)
            else:
                pieces[found].append(line)
                at = found
        shown = {line.text for line in gone}
        # The waiting lines that cannot be written yet: found again only when a row written
        # may have freed some (a flood scrolls thousands of lines never on our screen at once).
        blocked = None
        for text, parts in zip(lines, pieces):
            if parts or blocked is None:
                if blocked is None:
                    blocked = self.waiting.blocked() if self.waiting.lines else set()
                waits = [w for line in parts for w in self.waiting.before(line)] if parts else self.waiting.lines
                frame.logged += self.waiting.write_ready(waits, blocked)
            for line in parts:
                line.done = True
            if parts:
                self.waiting.written()
                blocked = None
            frame.logged.append(text)
            if text.strip() and text not in shown:
                # Lines that scrolled past within this chunk without ever being on our snapshot
                # of the screen still appeared: the detector must see them.
                frame.appeared.append((-1, text))

    def _diff(self, t: float, changed: list[int], frame: Frame) -> None:
        new_texts = dict(zip(changed, self._rows(changed)))
        updates = [(i, new) for i, new in new_texts.items() if new != self.rows[i].text]
        if not updates:
            return
        old = {i: self.rows[i] for i, _ in updates}
        # Lines whose rows changed: one of them drawn on another row moved there (a view
        # redrawn one row lower). "❯ turn 3: ..." moving up into the row of "❯ turn 2: ..." is
        # no counter ticking: a line from elsewhere is a move before it is an update. (Moved
        # or drawn again, a line is the same to a reader when only its indent changed.)
        displaced: dict[str, list[Line]] = {}
        for i, line in old.items():
            text = line.text.strip()
            if text and new_texts.get(i) != line.text:
                displaced.setdefault(text, []).append(line)
                fuller = line.fuller.strip()
                if fuller and fuller != text:
                    displaced.setdefault(fuller, []).append(line)  # (as it stood, if cut back)
        back = self.waiting.back(t)
        targets = {text.strip() for text in new_texts.values()}
        fresh: list[int] = []
        revived: list[int] = []
        for i, new in updates:
            before, key = old[i], new.strip()
            again = back.get(key) if key else None
            if again is not None and again.done:
                again = None
            if key and displaced.get(key):
                line = displaced[key].pop(0)
                for others in displaced.values():  # (listed under its cut-back text too)
                    if line in others:
                        others.remove(line)
                line.text, line.fuller = new, ""
            elif again is not None and t - before.came < self.settle:
                # drawn again where a line drawn a moment ago stands (a TUI that draws a moved row
                # in two writes: the second is the line that went, not the first growing)
                line = self._revive(again, new, i, revived, back)
            elif (
                before.text.strip()
                and before.left is None
                and before.text.strip() not in targets
                and (is_update(before.text, new) or key in before.states)
            ):
                line = before
                if len(new.rstrip()) < len(before.text.rstrip()) and before.text.startswith(new.rstrip()):
                    if not line.fuller:  # cut back, not typed: keep what stood
                        line.fuller, line.cut = before.text, t
                else:
                    line.fuller = ""
                line.text = new
                line.remember(key)
            elif again is not None:
                line = self._revive(again, new, i, revived, back)
            else:
                line = Line.drawn(t, new)
                if key:
                    fresh.append(i)
            self.rows[i] = line
            self._changed_rows.add(i)
            if key:
                frame.appeared.append((i, new))
        on_screen = set(self.rows)
        standing = None
        for line in old.values():
            if line not in on_screen:
                if line.unplaced:
                    standing = standing if standing is not None else {row.text.strip() for row in self.rows}
                    if line.text.strip() in standing:
                        # one of two copies, the other still up: the reader still sees it (a
                        # context's "- (none)" bullets as its block scrolls), and it is logged
                        # when that one goes; alone, it would stand nowhere in particular
                        line.done = True
                        continue
                self.waiting.leave(line, t)
        if fresh:
            self._unplace()
            placed = [(j, line) for j, line in enumerate(self.rows) if line.text.strip() and not line.done and not line.unplaced]
            for i in fresh:
                if not self.rows[i].unplaced:
                    self._arrived(i, placed)
        for i in revived:
            self._returned(i)

    def _revive(self, line: Line, new: str, i: int, revived: list[int], back: dict[str, Line]) -> Line:
        """A waiting line drawn again a moment after it went never left for a reader (a TUI
        that clears its footer and redraws it a millisecond later, in the next write)."""
        for text in [text for text, other in back.items() if other is line]:
            del back[text]
        self.waiting.revive(line)
        line.text, line.fuller = new, ""
        revived.append(i)
        return line

    def _unplace(self) -> None:
        """A line drawn on two rows at once (a box's two borders; a status line drawn again
        under the next turn as it first read, while the first one counts on) says nothing
        about where it stood: it orders no line by place, and no line is ordered by it."""
        # Kept up to date row by row: a line on two rows that are both unchanged since the last
        # look was marked then (a redraw changes a few of 40 rows; a scroll changes them all).
        rows, places, shown = self.rows, self._places, self._shown
        if self._places_for is not rows:  # (scrolled, switched or resized: every row is new)
            self._places_for, places, shown = rows, [()] * len(rows), {}
            self._places, self._shown, self._changed_rows = places, shown, set(range(len(rows)))
        drawn: list[str] = []
        for i in self._changed_rows:
            for text in places[i]:
                if shown[text] > 1:
                    shown[text] -= 1
                else:
                    del shown[text]
            # (one being erased from the right is going: a TUI quitting may cut every row to "•")
            places[i] = () if rows[i].fuller else rows[i].places()
            for text in places[i]:
                shown[text] = shown.get(text, 0) + 1
                drawn.append(text)
        self._changed_rows.clear()
        twice = {text for text in drawn if shown[text] > 1}
        if twice:
            for line, row in zip(rows, places):
                if not twice.isdisjoint(row):
                    line.unplaced = True

    def _arrived(self, i: int, placed: list[tuple[int, Line]]) -> None:
        """A new line at row `i` comes after the older lines above it, and the older lines
        below it wait for it (and it after every line that left before it: `Waiting.before`)."""
        line = self.rows[i]
        for j, other in placed:
            if other.came >= line.came:
                continue  # (lines drawn in the same write are written in row order when free)
            if j < i:
                line.wait_for(other)
            else:
                other.wait_for(line)

    def _returned(self, i: int) -> None:
        """A line drawn again a moment after it went never left: the lines that came while it
        was away are ordered by where they stand, not after it."""
        line = self.rows[i]
        assert line.left is not None  # it had left a moment ago
        for j, other in enumerate(self.rows):
            if j == i or other.came < line.left or not other.text.strip():
                continue
            other.after.discard(line)
            if j > i:
                other.wait_for(line)
            elif not other.done:
                line.wait_for(other)
        line.left = None

    def _rows(self, indices) -> list[str]:
        # Ink draws its input line with no-break spaces; a reader (and a regex) wants spaces.
        return [text.replace("\xa0", " ") for text in self.emu.rows_text(indices)]

    def row_texts(self) -> list[str]:
        """The rows' texts as they stand, from any thread."""
        with self.lock:
            return [row.text for row in self.rows]

    def screen_lines(self) -> list[str]:
        """The screen as logical lines (soft-wrapped rows joined), with the lines that wait in
        their places: what is not yet in the log."""
        with self.lock:
            return self._final(mark=False)

    def _final(self, mark: bool) -> list[str]:
        """The screen's logical lines top to bottom, each after the waiting lines it waits for
        (one that waits for a screen line lower down is written after that one); then the
        waiting lines left over."""
        out: list[str] = []
        written: set[Line] = set()
        marked: list[Line] = []
        starts = self.emu.screen_lines_at()
        ends = [row for row, _ in starts[1:]] + [len(self.rows)]
        screen = [self.rows[row:end] for (row, _), end in zip(starts, ends)]
        need = self._screen_needed(screen)
        came = [max((line.came for line in rows if not line.unplaced and line.text.strip()), default=0.0) for rows in screen]
        deferred: list[Line] = []
        for k, ((row, text), end) in enumerate(zip(starts, ends)):
            parts = self.rows[row:end]
            wanted = deferred + [w for part in parts for w in self.waiting.before(part)]
            # held until the screen lines they wait for are written, or one that came after they left
            held = {w for w, at in need.items() if at >= k} - self.waiting.with_before(w for w in need if (w.left or 0) < came[k])
            deferred = [w for w in wanted if w in held]
            seen = written | held
            for line in self.waiting.walk([w for w in wanted if w not in held], seen):
                out.append(self.waiting.said(line))
                marked.append(line)
            written |= seen - held
            marked.extend(parts)
            out.append(text.replace("\xa0", " "))
        for line in self.waiting.walk(self.waiting.lines, written):
            out.append(self.waiting.said(line))
            marked.append(line)
        if mark:
            for line in marked:
                line.done = True
            self.waiting.clear()
        return out

    def _screen_needed(self, parts: list[list[Line]]) -> dict[Line, int]:
        """The waiting lines that wait, directly or through others, for a line still on the
        screen (a footer that stood below a reply), each with the index of the last one."""
        at = {line: k for k, rows in enumerate(parts) for line in rows if not line.unplaced}
        need = {w: k for w in self.waiting.lines if (k := max((at[o] for o in w.after if o in at and not o.done), default=-1)) >= 0}
        changed = bool(need)
        while changed:  # (through the waiting lines each waits for)
            changed = False
            for w in self.waiting.lines:
                k = max((need.get(o, -1) for o in self.waiting.before(w)), default=-1)
                if k > need.get(w, -1):
                    need[w], changed = k, True
        return need

    def resize(self, t: float, cols: int, rows: int) -> Frame:
        frame = Frame()
        frame.logged += self.waiting.release(t, everything=True)  # the rows reflow: places lose their meaning
        with self.lock:
            frame.logged.extend(self.emu.resize(cols, rows))
            old = {line.text: line for line in self.rows if line.text.strip()}
            self.rows = [old.pop(text) if text in old else Line.drawn(t, text) for text in self._rows(range(rows))]
        return frame

    def finish(self) -> list[str]:
        """The final screen (trailing blank rows dropped), after anything waiting before it."""
        with self.lock:
            screen = self._final(mark=True)
        while screen and not screen[-1].strip():
            screen.pop()
        return screen
