"""Turn a terminal stream into the lines a person saw, in order, once each.

An emulator keeps the screen. After each chunk of output we compare the visible rows with
what they showed before, and a row's old text goes to the log when it leaves the screen:
- scrolled off the top: always (that is ordinary output);
- replaced in place (an Ink TUI redrawing, a full-screen clear, a program on the
  alternate screen): only if it stayed up long enough to read (`settle`, 100 ms: Claude
  Code's spinner words last about 120 ms each), is not merely an
  update of itself (a spinner frame or a counter: same text once digits and spinner glyphs
  are ignored; or a line being typed or streamed: one text a prefix of the other), and has
  not moved elsewhere on the screen or just been logged;
- still on screen when the stream ends: the final screen.

A replaced line is written where it stood, not when it left: a status line redrawn in place
("✻ Compacting conversation…") under lines still on screen waits until the lines that were
above it while it was up are written (they scroll off), so the log reads in the order a
person saw it; and it goes before any line that came after it left, wherever that one
stands. One drawn again within `settle` never left (a redraw split over two writes). What
waits is part of `screen_lines()`, where a reader of the live log finds it.

Pure logic over an `Emulator`; no I/O. Callers write what `feed` returns.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass, field

from .emulator import Emulator

# Entering or leaving the alternate screen (vim, less, full-screen TUIs).
_ALT_SWITCH = re.compile(r"\x1b\[\?(?:1049|1047|47)([hl])")
_RESET = re.compile(r"\x1bc")
FEED_SLICE = 64 * 1024
SPINNER_GLYPHS = "■⬝⠁⠂⠄⡀⢀⠠⠐⠈⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏✢✳✶✻✽✺·*●◐◓◑◒|/-\\ "
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


# What is left of an input line once its text is gone: a prompt glyph.
_PROMPT_ONLY = re.compile(r"^\s*[❯›>$%#┃]?\s*$")


def is_update(old: str, new: str) -> bool:
    """Is `new` the same line as `old`, a moment later? (A line cut back to its bare prompt
    or bar is not: Claude Code redraws a sent message's row as its empty input box `❯`,
    OpenCode a message's `┃  text` as a bare `┃`.)"""
    old, new = old.rstrip(), new.rstrip()
    if shape(old) == shape(new):
        return True
    if _PROMPT_ONLY.match(new) or _PROMPT_ONLY.match(old):
        return False
    return bool(new) and (new.startswith(old) or old.startswith(new))


def _moved(text: str, row: int, rows: list["Row"], new_texts: dict[int, str]) -> bool:
    """Did `text` come to `row` from another row, which no longer shows it (a view redrawn
    moved up)? Not if that row still shows it: Gemini's command menu lists "/compress" while
    the input line grows from "/compres" to it."""
    return any(
        r.text == text and j != row and new_texts.get(j, r.text) != text for j, r in enumerate(rows)
    )


def shape(text: str) -> str:
    """What stays the same across frames of one status line: no digits, no spinner glyph."""
    return _SPACES.sub(" ", _DIGITS.sub("#", text.lstrip(SPINNER_GLYPHS))).strip()


@dataclass
class Row:
    text: str = ""
    since: float = 0.0
    # The line as it stood before it was cut back in place (Codex erases a screen row by row
    # from the right before redrawing it): what a reader saw, and what is logged, unless the
    # cut-back line itself stood long enough to be read (Claude Code drops "· ← for agents"
    # from its footer as it quits: the shorter footer is what stood last).
    fuller: str = ""
    cut: float = 0.0  # when it was cut back


@dataclass
class Held:
    """A replaced line waiting for the lines above it: it goes just before row `anchor`."""

    anchor: int
    text: str
    since: float
    left: float  # when it was replaced
    over: frozenset[str] = frozenset()  # the lines above it then
    under: frozenset[str] = frozenset()  # the lines below it then


HELD_MAX = 256  # lines waiting at most; past it the oldest is written (a header that never leaves)


@dataclass
class Frame:
    """What one chunk of output produced."""

    logged: list[str] = field(default_factory=list)  # lines for the text log, in order
    appeared: list[tuple[int, str]] = field(default_factory=list)  # (row, text) newly shown


class TextLog:
    def __init__(self, emulator: Emulator, settle: float = 0.1, memory: int = 512):
        self.emu = emulator
        self.settle = settle
        self.rows = [Row() for _ in range(emulator.rows)]
        # Recently logged replaced lines, so a redrawn screen does not log its header again.
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._memory = memory
        self._primary: list[Row] | None = None  # the primary screen's rows while on the alternate one
        self._held: list[Held] = []  # replaced lines waiting for the lines above them, top to bottom

    def feed(self, t: float, text: str) -> Frame:
        frame = Frame()
        start = 0
        for switch in _ALT_SWITCH.finditer(text):
            self._feed(t, text[start : switch.start()], frame)
            self._switch(t, switch.group(0), entering=switch.group(1) == "h", frame=frame)
            start = switch.end()
        self._feed(t, text[start:] if start else text, frame)
        self._release(frame)
        return frame

    def _switch(self, t: float, sequence: str, entering: bool, frame: Frame) -> None:
        """The primary screen is not gone while an alternate-screen program runs: keep its
        rows aside and put them back after, so it is neither logged early nor twice."""
        leaving = not entering and self._primary is not None
        if not leaving:
            self._release(frame, everything=True)  # anchored to rows that are about to change meaning
        if entering and self._primary is None:
            self._primary = self.rows
            self.emu.feed(sequence)
            self.rows = [Row(self._row(i), t) for i in range(len(self.rows))]
        elif leaving:
            # the alternate screen's last view, with the lines that wait in their places (a
            # full-screen TUI's old status lines under the conversation it showed to the end)
            self._settle_places()
            for i, row in enumerate(self.rows):
                while self._held and self._held[0].anchor <= i:
                    frame.logged.append(self._held.pop(0).text)
                if row.text.strip() and t - row.since >= self.settle and row.text not in self._recent:
                    frame.logged.append(row.text)
                    self._remember(row.text)
            self._release(frame, everything=True)
            saved, self._primary = self._primary, None
            self.emu.feed(sequence)
            current = [self._row(i) for i in range(len(self.rows))]
            self.rows = [saved[i] if i < len(saved) and saved[i].text == text else Row(text, t) for i, text in enumerate(current)]
        else:
            self._feed(t, sequence, frame)

    def _feed(self, t: float, text: str, frame: Frame) -> None:
        # Bounded slices: an emulator returns every row that scrolled off as an object with
        # all its cells, so one huge feed (a renderer catching up) would cost gigabytes. A
        # full reset (ESC c) starts a slice of its own: avt forgets the rows that scrolled
        # off earlier in the same feed (lines were lost from the log in a flood).
        cuts = [m.start() for m in _RESET.finditer(text) if m.start()] if "\x1bc" in text else []
        for lo, hi in zip([0, *cuts], [*cuts, len(text)]):
            for start in range(lo, hi, FEED_SLICE):
                self._feed_slice(t, text[start : min(start + FEED_SLICE, hi)], frame)

    def _feed_slice(self, t: float, text: str, frame: Frame) -> None:
        changed, scrolled_rows, scrolled_lines = self.emu.feed(text)
        if self._held and scrolled_rows:
            self._scrolled(scrolled_rows, scrolled_lines, frame)
        else:
            frame.logged.extend(scrolled_lines)
        if scrolled_lines:
            # Lines that scrolled past within this chunk without ever being on our snapshot of
            # the screen (a burst of output) still appeared: the detector must see them.
            shown = {r.text for r in self.rows[: min(scrolled_rows, len(self.rows))]}
            frame.appeared.extend((-1, line) for line in scrolled_lines if line.strip() and line not in shown)
        if scrolled_rows:
            k = min(scrolled_rows, len(self.rows))
            self.rows = self.rows[k:] + [Row(since=t) for _ in range(k)]
            changed = set(range(len(self.rows)))
        if changed:
            self._diff(t, sorted(changed), frame)

    def _diff(self, t: float, changed: list[int], frame: Frame) -> None:
        new_texts = {i: self._row(i) for i in changed}
        updates = [(i, new) for i, new in new_texts.items() if new != self.rows[i].text]
        if not updates:
            return
        visible = None
        # A line that only moved (a TUI redrawing its view one row lower) has been up since it
        # first appeared: keeping that time lets it be logged when it is cleared a moment
        # later (Codex quitting moves its last screen down a row, then clears it 3 ms after).
        shown_since = {r.text: r.since for r in self.rows if r.text.strip()}
        before = [r.text for r in self.rows]
        # A waiting line drawn again within a moment (Gemini clears its footer and redraws it
        # a millisecond later, in the next write) never left for a reader. One back after
        # longer was seen twice: it is written where it first stood.
        back = {item.text: item for item in self._held if t - item.left < self.settle} if self._held else None
        for i, new in updates:
            old = self.rows[i]
            # A row that now shows a line from elsewhere on screen (a view that moved) was
            # not updated in place, however alike the two lines are: "❯ turn 3: ..." moving
            # up into the row of "❯ turn 2: ..." is no counter ticking (a reply and a typed
            # line were lost from Claude Code's log this way, in every run of 15 turns).
            updated = is_update(old.text, new) and not _moved(new, i, self.rows, new_texts)
            if old.text.strip() and t - old.since >= self.settle and not updated:
                if visible is None:
                    visible = {self._row(r) for r in range(len(self.rows))}
                said = old.fuller if old.fuller and t - old.cut < self.settle else old.text
                if said not in visible and old.text not in visible and said not in self._recent:
                    self._hold(Held(i, said, old.since, t, frozenset(before[:i]), frozenset(before[i + 1 :])))
                    self._remember(said)
            # A line updating itself (spinner, counter, typing) has been up since its first
            # version: when something else finally replaces it, its last version is logged.
            fuller, cut = "", 0.0
            if old.text.strip() and updated:
                since = old.since
                if len(new.rstrip()) < len(old.text.rstrip()) and old.text.startswith(new.rstrip()):
                    # cut back, not typed: keep what stood
                    fuller, cut = (old.fuller, old.cut) if old.fuller else (old.text, t)
            elif back and new in back:
                item = back.pop(new)
                self._held.remove(item)
                self._recent.pop(new, None)
                since = item.since
            else:
                since = shown_since.get(new, t)
            self.rows[i] = Row(new, since, fuller, cut)
            if new.strip():
                frame.appeared.append((i, new))
        if self._held:
            self._reanchor()

    def _row(self, index: int) -> str:
        # Ink draws its input line with no-break spaces; a reader (and a regex) wants spaces.
        return self.emu.row(index).replace("\xa0", " ")

    def _remember(self, text: str) -> None:
        self._recent[text] = None
        if len(self._recent) > self._memory:
            self._recent.popitem(last=False)

    # -- replaced lines, in their place --------------------------------------------------------

    def _hold(self, item: Held) -> None:
        at = len(self._held)
        while at and self._held[at - 1].anchor > item.anchor:
            at -= 1
        # Where one already waiting stood when it left says more than the rows they left
        # from: a line that was above it goes before it, one that was below it after it
        # (Codex, quitting, moves its status line down into its footer's row, then clears it;
        # OpenCode scrolls a reply away, then the message under it).
        # And one gone before this one appeared was seen first (a logo animating on three
        # rows: each row's frame is replaced before the next frame of the row above it).
        last_before, first_after = -1, len(self._held)
        for j, other in enumerate(self._held):
            recent = item.left - other.left < self.settle
            if (recent and item.text in other.under) or other.left <= item.since:
                last_before = j
            if recent and item.text in other.over and first_after == len(self._held):
                first_after = j
        if last_before >= at:
            at = last_before + 1
            item.anchor = max(item.anchor, self._held[at - 1].anchor)
        elif first_after < at:
            at = first_after
            item.anchor = min(item.anchor, self._held[at].anchor)
        self._held.insert(at, item)

    def _release(self, frame: Frame, everything: bool = False) -> None:
        """Write the waiting lines whose rows above hold nothing older (top first; one that
        must wait keeps those below it waiting too)."""
        while self._held:
            item = self._held[0]
            if not (everything or len(self._held) > HELD_MAX or self._clear_above(item)):
                break
            frame.logged.append(self._held.pop(0).text)

    def _reanchor(self) -> None:
        """A line that left before another appeared was seen first, even if it stood lower
        (Codex clears its logo, then moves the message just sent to the top): a waiting line
        goes before the topmost line that came after it left."""
        firsts, latest = [], float("-inf")  # when the newest line in rows 0..i came
        for row in self.rows:
            if row.text.strip() and row.since > latest:
                latest = row.since
            firsts.append(latest)
        moved = False
        for item in self._held:
            at = bisect_left(firsts, item.left, hi=item.anchor)
            if at < item.anchor:
                item.anchor, moved = at, True
        if moved:
            self._held.sort(key=lambda item: item.anchor)

    def _settle_places(self) -> None:
        """Before the screen is written with the lines that still wait: each goes before the
        first line shown that appeared after it did, if that stands above its place (Claude
        Code redraws its conversation moved up without scrolling, and a message that left
        would otherwise come after its own reply)."""
        for item in self._held:
            for i, row in enumerate(self.rows[: item.anchor]):
                if row.text.strip() and row.since > item.since and row.text not in item.over:
                    item.anchor = i
                    break
        self._held.sort(key=lambda item: item.anchor)

    def _clear_above(self, item: Held) -> bool:
        # Every line above that was up while it was (above it, so seen first) must be written first.
        return all(not row.text.strip() or row.since >= item.left for row in self.rows[: item.anchor])

    def _scrolled(self, count: int, lines: list[str], frame: Frame) -> None:
        """`count` rows scrolled off the top as `lines`: a waiting line anchored among them is
        written before the line of its row (exact when no line among them was wrapped)."""
        for j, line in enumerate(lines):
            while self._held and self._held[0].anchor <= j:
                frame.logged.append(self._held.pop(0).text)
            frame.logged.append(line)
        while self._held and self._held[0].anchor < count:
            frame.logged.append(self._held.pop(0).text)
        for item in self._held:
            item.anchor -= count

    def screen_lines(self) -> list[str]:
        """The screen as logical lines (soft-wrapped rows joined), with the replaced lines that
        wait in their place: what is not yet in the log."""
        lines = [(row, line.replace("\xa0", " ")) for row, line in self.emu.screen_lines_at()]
        if not self._held:
            return [line for _, line in lines]
        self._settle_places()
        out, i = [], 0
        for row, line in lines:
            while i < len(self._held) and self._held[i].anchor <= row:
                out.append(self._held[i].text)
                i += 1
            out.append(line)
        out.extend(item.text for item in self._held[i:])
        return out

    def resize(self, t: float, cols: int, rows: int) -> Frame:
        frame = Frame()
        self._release(frame, everything=True)  # the rows reflow: anchors lose their meaning
        frame.logged.extend(self.emu.resize(cols, rows))
        old = {r.text: r.since for r in self.rows}
        self.rows = [Row(text, old.get(text, t)) for text in (self._row(i) for i in range(rows))]
        return frame

    def finish(self) -> list[str]:
        """The final screen (trailing blank rows dropped), after anything held back."""
        lines = self.emu.flush()
        screen = self.screen_lines()
        self._held = []
        while screen and not screen[-1].strip():
            screen.pop()
        return lines + screen
