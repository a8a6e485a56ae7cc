"""What a line on screen is, and the order lines that left the screen are written in: the
text log's ordering engine.

A line is a row's text through the states it takes where it stands (`sameline.is_update`: a
spinner frame, a counter, a line being typed). A line is written after every line that left
the screen before it appeared, and after every line that stood above it when they were first
on screen together; a line that came above an older one (content above a footer) makes the
older one wait for it. Lines wait in `Waiting` until what they wait for is written. When the
rules ask for a cycle (a footer that stood below later history and above a later input
line), the lines in it are written in the order they came.

Pure logic over data; no I/O.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter

from ..detection.sameline import shape

WAITING_MAX = 256  # lines waiting at most; past it the oldest is written (a header that never leaves)
_STATES = 16  # texts a line remembers it showed
_PRUNE_AT = 64  # a line's set of lines to wait for is cleaned of written ones past this size


_made = itertools.count()


@dataclass(eq=False, slots=True)  # (slots: a redraw makes and reads thousands a second)
class Line:
    """One line on screen, through the states it takes where it stands."""

    text: str
    came: float
    first: str = ""  # its first text, stripped
    # The line as it stood before it was cut back in place (a TUI that erases a screen row by
    # row from the right before redrawing it): what a reader saw, and what is logged, unless
    # the cut-back line itself stood long enough to be read (a footer that drops "· ← for
    # agents" as its program quits: the shorter footer is what stood last).
    fuller: str = ""
    cut: float = 0.0  # when it was cut back
    left: float | None = None  # when it left the screen
    done: bool = False  # written to the log, or never to be (gone before anyone could read it)
    unplaced: bool = False  # drawn on two rows at once: no order by place for it
    after: set[Line] = field(default_factory=set, repr=False)  # lines (besides those gone before it) to write first
    blocker: Line | None = field(default=None, repr=False)  # the last line found unwritten among those
    # its latest texts, stripped: a footer that goes back to a text it showed is that footer
    # ("… · esc to interrupt" and "… · ← for agents" in turn)
    states: dict[str, None] = field(default_factory=dict, repr=False)
    seq: int = field(default_factory=_made.__next__)
    _places: tuple[str, tuple[str, ...]] | None = field(default=None, repr=False)  # (text, `places()` of it)

    @classmethod
    def drawn(cls, t: float, text: str = "") -> Line:
        first = text.strip()
        return cls(text, t, first, states={first: None})

    def remember(self, text: str) -> None:
        self.states[text] = None
        if len(self.states) > _STATES:
            del self.states[next(iter(self.states))]

    def places(self) -> tuple[str, ...]:
        """The texts that say where it stands: its text, and its first text too if it counts
        on in place (not if it grew there: two replies streamed in both first read "Reply")."""
        if self._places is not None and self._places[0] is self.text:
            return self._places[1]  # (kept until its text changes: most rows stand still)
        now, first = self.text.strip(), self.first
        texts = (now,) if first == now or not first or shape(first) != shape(now) else (now, first)
        self._places = (self.text, tuple(text for text in texts if text))
        return self._places[1]

    def wait_for(self, other: Line) -> None:
        self.after.add(other)
        if len(self.after) > _PRUNE_AT and len(self.after) % _PRUNE_AT == 1:
            self.after = {line for line in self.after if not line.done}


_key = attrgetter("came", "seq")  # the order lines came in


def _held(line: Line) -> bool:
    """The line it was last found waiting for is still unwritten and in its place."""
    return line.blocker is not None and not line.blocker.done and not line.blocker.unplaced


class Waiting:
    """The lines that left the screen and are not written yet, in the order they left."""

    def __init__(self, settle: float):
        self.settle = settle
        self.lines: list[Line] = []  # long enough on screen to be read
        self.brief: list[Line] = []  # gone too soon to be read: kept only in case one comes back
        self._changed = False  # a line left or was written since the lines were looked at
        self._due = float("inf")  # when the next one has been gone for `settle`

    def leave(self, line: Line, t: float) -> None:
        # Even one up too briefly to read waits a moment: drawn again, it never left.
        if line.done or line.left is not None or not line.text.strip():
            return
        line.left = t
        (self.brief if t - line.came < self.settle else self.lines).append(line)
        self._changed = True

    def back(self, t: float) -> dict[str, Line]:
        """The lines gone less than `settle` ago, by text (and the text they stood with
        before they were cut back): one drawn again never left for a reader."""
        out = {}
        for line in itertools.chain(self.lines, self.brief):
            assert line.left is not None  # every line here has left (leave())
            if t - line.left < self.settle:
                out[line.text.strip()] = line
                if line.fuller:
                    out[line.fuller.strip()] = line
        return out

    def revive(self, line: Line) -> None:
        (self.brief if line in self.brief else self.lines).remove(line)

    def written(self) -> None:
        self._changed = True

    def said(self, line: Line) -> str:
        """What is logged of a line: as it stood before it was cut back, if it was cut back
        only a moment before it left."""
        if line.fuller and (line.left is None or line.left - line.cut < self.settle):
            return line.fuller
        return line.text

    def before(self, line: Line) -> list[Line]:
        """The lines to write before `line`, not written yet: those above it when it came,
        those that came above it while it was up, and every line that left before it came."""
        out = [] if line.unplaced else [other for other in line.after if not other.done and not other.unplaced]
        for other in self.lines:  # (in the order they left)
            assert other.left is not None  # every line here has left (leave())
            if other.left > line.came:
                break
            if not other.done and other is not line:
                out.append(other)
        return out

    def with_before(self, lines: Iterable[Line]) -> set[Line]:
        """`lines` and the lines to write before them (`before`), however far back."""
        todo = list(lines)
        out = set(todo)
        while todo:
            more = [other for other in self.before(todo.pop()) if other not in out]
            out.update(more)
            todo += more
        return out

    def ready(self, line: Line) -> bool:
        """Nothing it waits for is unwritten (the first such line found is kept: `blocker`)."""
        for other in () if line.unplaced else line.after:
            if not other.done and not other.unplaced:
                line.blocker = other
                return False
        for other in self.lines:
            assert other.left is not None  # every line here has left (leave())
            if other.left > line.came:
                break
            if not other.done and other is not line:
                line.blocker = other
                return False
        return True

    def walk(self, lines: list[Line], written: set[Line]) -> list[Line]:
        """Waiting lines among `lines` and what they wait for, in writing order, skipping those
        in `written` (which gets them added). Depth first, the oldest first, as they came. Lines
        still on screen are passed over: what waits for them cannot wait longer. Lines whose
        rules ask for a cycle (a footer that stood above content drawn later, below it a
        spinner that went before that content came) are written in the order they came: no
        order satisfies them all, and that one is how they appeared (Tarjan's strongly
        connected components, each written once all it waits for outside it is)."""
        out: list[Line] = []
        index: dict[Line, int] = {}
        low: dict[Line, int] = {}
        stack: list[Line] = []
        on: set[Line] = set()
        settle = self.settle

        def lasting(lines: list[Line]) -> list[Line]:
            # Those that left after standing long enough to be read, the oldest first (one gone
            # before anyone could read it is not logged, and it orders nothing). Whether one is
            # written or visited changes as the walk goes: that is checked as it goes.
            return sorted((o for o in lines if o.left is not None and o.left - o.came >= settle), key=_key)

        def enter(line: Line) -> tuple[Line, Iterator[Line]]:
            index[line] = low[line] = len(index)
            stack.append(line)
            on.add(line)
            return line, iter(lasting(self.before(line)))

        for root in lasting(lines):
            if root.done or root in written or root in index:
                continue
            work = [enter(root)]
            while work:
                line, todo = work[-1]
                nxt = None
                for other in todo:
                    if other.done or other in written:
                        continue
                    if other not in index:
                        nxt = other
                        break
                    if other in on:
                        low[line] = min(low[line], index[other])
                if nxt is not None:
                    work.append(enter(nxt))
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[line])
                if low[line] == index[line]:
                    group = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        group.append(member)
                        if member is line:
                            break
                    for member in sorted(group, key=_key):
                        written.add(member)
                        if member.text.strip():
                            out.append(member)
        return out

    def write(self, line: Line) -> list[str]:
        """Write a waiting line, after the waiting lines it waits for."""
        out = []
        for each in self.walk([line], set()):
            out.append(self.said(each))
            each.done = True
        return out

    def write_ready(self, lines, blocked: set[Line] | None = None) -> list[str]:
        """Write those of `lines` (and what they wait for) that have left and can be written:
        nothing they wait for, however far back, is still on screen (`blocked`: those that
        cannot, found a moment ago; writing lines frees others, never holds one back)."""
        blocked = self.blocked() if blocked is None else blocked
        out = []
        for line in sorted((line for line in lines if not line.done), key=_key):
            if line.left is not None and line not in blocked:
                out += self.write(line)
        self.lines = [line for line in self.lines if not line.done]
        return out

    def blocked(self) -> set[Line]:
        """The waiting lines that wait, directly or through others, for a line still on screen."""
        blocked: list[Line] = []
        waiters: dict[Line, list[Line]] = {}
        for line in self.lines:
            if line.done:
                continue
            for other in self.before(line):
                if other.left is None:
                    blocked.append(line)
                    break
                waiters.setdefault(other, []).append(line)
        out = set(blocked)
        while blocked:
            for line in waiters.get(blocked.pop(), ()):
                if line not in out:
                    out.add(line)
                    blocked.append(line)
        return out

    def _settled(self, t: float) -> Iterator[Line]:
        """The lines gone for `settle`, the oldest first, but those still held by the line found
        unwritten last time (most lines wait long for one line still up: a header). Each is
        looked at when its turn comes: writing one may free, or write, a later one."""
        settled = [
            line for line in self.lines if not line.done and line.left is not None and t - line.left >= self.settle
        ]  # (all have left: the check is for mypy)
        # (held or not changes only when a line is written: until then, only the free ones)
        todo = sorted((line for line in settled if not _held(line)), key=_key)
        i = 0
        while i < len(todo):
            line = todo[i]
            i += 1
            if line.done or _held(line):
                continue
            yield line
            if line.done:  # written: every later line is looked at again
                todo, i = sorted((other for other in settled if _key(other) > _key(line)), key=_key), 0

    def release(self, t: float, everything: bool = False) -> list[str]:
        """Write the lines gone for `settle` (one back within it never left) whose lines to
        wait for are written (repeatedly: one written may free another); with `everything`,
        all of them, each after what it waits for."""
        out: list[str] = []
        if everything:
            for line in sorted(self.lines, key=_key):
                out += self.write(line)
        elif self._changed or t >= self._due:
            # (looked at again only when a line left or was written, or one is due)
            self._changed, progress = False, True
            while progress and self.lines:
                progress = False
                for line in self._settled(t):
                    if self.ready(line):
                        out += self.write(line)
                        progress = True
            pending = (
                line.left + self.settle for line in self.lines if not line.done and line.left is not None and t - line.left < self.settle
            )  # (as above)
            self._due = min(pending, default=float("inf"))
        brief, cut = [], len(self.brief) - WAITING_MAX
        for i, line in enumerate(self.brief):
            assert line.left is not None  # every line here has left (leave())
            if t - line.left >= self.settle or i < cut:
                line.done = True  # not back: never seen
            elif not line.done:
                brief.append(line)
        self.brief = brief
        self.lines = [line for line in self.lines if not line.done]
        if len(self.lines) > WAITING_MAX:
            for line in self.lines[: len(self.lines) - WAITING_MAX]:
                out += self.write(line)
                line.done = True  # (one gone too briefly to be logged goes too)
            self.lines = [line for line in self.lines if not line.done]
        return out

    def clear(self) -> None:
        """All written (the final screen with them)."""
        for line in itertools.chain(self.lines, self.brief):
            line.done = True
        self.lines, self.brief = [], []
