"""Match an agent's rendered screen lines against its patterns. Pure: no I/O.

Input is what the text-log renderer says appeared on screen (a row whose text changed) and
the screen as it is now. A match fires once for as long as its line stays on screen: an Ink
TUI redrawing a line fifty times, or a spinner rotating its glyph, is one detection. It can
fire again once the line has been gone for `grace` seconds. `context_low` fires only at or
below the set's threshold. Idleness is a state, not a line: an idle line on screen and no
busy line ("esc to interrupt"), and `idle_prompt` fires when the agent becomes idle. Lines
that look related to compaction or context but match no pattern are reported once each as
`unrecognized` (a line being typed counts once), so users can write patterns for what they see.

Told things by several threads (frames by the render thread, new patterns by the pattern
watcher, what supervise gave the agent by the context keeper): each changes it only under
its lock, which is held for the matching alone (no callback; the first match loads the
regex engine).
"""

from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from . import echoes, saferegex
from .sameline import is_update, shape
from .patterns import EVENT_OF, STATE_KINDS, Pattern, PatternSet

LOOKS_RELATED = re.compile(r"compact|compress|context|summari[sz]", re.IGNORECASE)
RELATED_WORDS = ("compact", "compress", "context", "summari")  # the same test, as substrings


@dataclass
class Detection:
    """An event told from the screen: a pattern's line, or one that looks like compaction and none matched."""

    kind: str
    t: float
    text: str
    pattern: str | None = None  # "agent/name"; None for unrecognized
    row: int | None = None
    values: dict = field(default_factory=dict)

    def detail(self) -> dict:
        out: dict[str, Any] = {"text": self.text, "row": self.row}
        values = dict(self.values)
        also = values.pop("also", [])
        if self.pattern:
            out["patterns"] = [self.pattern, *(a["pattern"] for a in also)]
        out.update(values)
        return out


@dataclass(frozen=True, slots=True)
class Seen:
    """What the detector makes of a frame's screen, as its frame subscribers are told it."""

    idle: bool
    busy: bool
    dialog: bool  # a permission or confirmation dialog waits for an answer
    context_left: int | None


GAVE_SHARE = 0.8  # of a turn's pieces in a given text: the turn is that text


class Detector:
    def __init__(self, patterns: PatternSet | None, grace: float = 0.2, unrecognized: bool = True):
        self._lock = threading.Lock()
        self._adding = threading.Lock()  # taken before `_lock`, never after it
        self.patterns = patterns
        self.grace = grace
        self.unrecognized = unrecognized and patterns is not None
        self._prefilter = _prefilter(patterns, self.unrecognized)
        self._active: dict[tuple[str, str], Sighting] = {}
        self._reported_unrecognized: set[str] = set()
        self._unrecognized_rows: dict[int, str] = {}
        self.idle = False
        self.busy = False  # a busy line ("esc to interrupt") is on screen
        self._context_bucket: int | None = None  # the last context_low fired, in steps of 5%
        self.context_left: int | None = None  # percent, as the agent last showed it
        # What supervise gave the agent: its echo on screen (it says "compacted") is no detection.
        self.given = echoes.Given.of([])
        self._given_texts: tuple[tuple[str, str], ...] = ()

    def add_given(self, text: str, quoted: str = "") -> None:
        """Supervise gave the agent `text` (quoting the session's words `quoted`): its
        echoes are not the agent's."""
        with self._adding:  # one at a time; the slow part (`Given.of`) outside the lock
            texts = (*self._given_texts[-(echoes.GIVEN_MAX - 1) :], (text, quoted))
            given = echoes.Given.of(texts)
            with self._lock:
                self._given_texts, self.given = texts, given

    def gave(self, text: str) -> bool:
        """Whether `text` (a turn the agent's record says the user took) is mostly what
        supervise gave the agent: a context or a continue, not the user's words."""
        n = echoes.normalize(text)
        with self._lock:
            given = self.given
        return bool(n) and (n in given.texts or given.coverage(n) >= GAVE_SHARE)

    def set_patterns(self, patterns: PatternSet | None) -> None:
        prefilter = _prefilter(patterns, self.unrecognized)
        with self._lock:
            self.patterns = patterns
            self._active.clear()
            self._prefilter = prefilter

    def feed(self, t: float, appeared: list[tuple[int, str]], screen: list[str]) -> list[Detection]:
        with self._lock:
            return self._feed(t, appeared, screen)

    def seen(self, screen: list[str]) -> Seen:
        """What the last frame showed, `screen` being its rows."""
        with self._lock:
            return Seen(self.idle, self.busy, self._dialog_up(screen), self.context_left)

    def _feed(self, t: float, appeared: list[tuple[int, str]], screen: list[str]) -> list[Detection]:
        if self.patterns is None:
            return []
        found = []
        given = self.given
        for row, text in self._candidates(appeared):
            if given and given.ours(text):
                continue
            matched = False
            for pattern in self.patterns.patterns:
                m = pattern.regex.search(text)
                if not m:
                    continue
                matched = True
                if pattern.event in STATE_KINDS:
                    continue  # a state (idle, busy: decided below from the whole screen) or the user's own words
                values = _values(pattern.event, m)
                if pattern.event == "context_low":
                    self.context_left = values["pct_left"]
                    # a level, not a line: fire when it drops into a new 5% step below the threshold
                    bucket = values["pct_left"] // 5
                    if values["pct_left"] > self.patterns.context_low_at:
                        self._context_bucket = None
                        continue
                    if bucket == self._context_bucket:
                        continue
                    self._context_bucket = bucket
                key = (pattern.qualified, _key(pattern.event, m, values))
                # The same sighting if its line was on screen at the frame before (however long
                # ago: nothing may have been drawn since), or left it less than `grace` ago
                # (Ink may erase and redraw in separate writes); unless the screen now shows
                # more such lines than before (a second compaction rule under the first).
                earlier = self._active.get(key)
                shown = _count(pattern, key[1], screen)
                if earlier is not None and (earlier.on_screen or t - earlier.last_seen <= self.grace):
                    # More such lines than before: new only if this one is the lowest (a chat
                    # view grows downwards; one reappearing above was scrolled back into view).
                    if (
                        shown <= earlier.count
                        or row < max(_rows(pattern, key[1], screen), default=-1)
                        or earlier.redrawn(row, t, self.grace)
                    ):
                        continue
                self._active[key] = Sighting(pattern, t, max(shown, 1), True)
                found.append(Detection(EVENT_OF.get(pattern.event, pattern.event), t, text.strip(), pattern.qualified, row, values))
            if not matched and self.unrecognized and LOOKS_RELATED.search(text) and not given.holds_ours(text):
                found.extend(self._unrecognized(t, row, text))
        if self._active:
            self._expire(t, screen)
        found.extend(self._idleness(t, screen))
        return _one_per_kind(found)

    def _candidates(self, appeared: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """The appeared lines any pattern could match. Under heavy output a chunk brings
        thousands of lines: one scan of them all, joined, instead of every regex per line."""
        if self._prefilter is None or self._prefilter.slow or len(appeared) < 8:
            return appeared
        block = "\n".join(text for _, text in appeared)
        hits = [m.start() for m in self._prefilter.finditer(block)] if self._prefilter.pattern else []
        if self.unrecognized:
            lowered = block.lower()  # same length: positions carry over
            for word in RELATED_WORDS:
                at = lowered.find(word)
                while at != -1:
                    hits.append(at)
                    at = lowered.find(word, at + 1)
        if not hits:
            return []
        starts, pos = [], 0
        for _, text in appeared:
            starts.append(pos)
            pos += len(text) + 1
        wanted = sorted({bisect.bisect_right(starts, h) - 1 for h in hits})
        return [appeared[i] for i in wanted]

    def _unrecognized(self, t: float, row: int, text: str) -> list[Detection]:
        previous = self._unrecognized_rows.get(row)
        self._unrecognized_rows[row] = text
        s = shape(text)
        if s in self._reported_unrecognized or (previous is not None and is_update(previous, text)):
            return []
        self._reported_unrecognized.add(s)
        return [Detection("unrecognized", t, text.strip(), None, row)]

    def _idleness(self, t: float, screen: list[str]) -> list[Detection]:
        assert self.patterns is not None  # _feed looks only with patterns
        idle_patterns = self.patterns.of("idle_prompt")
        if not idle_patterns:
            return []
        busy_patterns = self.patterns.of("busy")
        idle_line = None
        self.busy = False
        for row, line in enumerate(screen):
            if any(p.regex.search(line) for p in busy_patterns):
                idle_line = None
                self.busy = True
                break
            if idle_line is None:
                for p in idle_patterns:
                    if p.regex.search(line):
                        idle_line = (row, line, p)
                        break
        was, self.idle = self.idle, idle_line is not None
        if idle_line is not None and not was:
            row, line, p = idle_line
            return [Detection("idle_prompt", t, line.strip(), p.qualified, row)]
        return []

    def _dialog_up(self, screen: list[str]) -> bool:
        """A permission or confirmation dialog waits for an answer: its line is on screen and
        no idle line below it (in a scrolling CLI an answered dialog stays in view, above the
        prompt that followed it; a full-screen TUI hides its idle line while asking)."""
        if self.patterns is None:
            return False
        dialogs = self.patterns.of("permission_prompt")
        if not dialogs:
            return False
        idles = self.patterns.of("idle_prompt")
        for line in reversed(screen):
            if any(p.regex.search(line) for p in dialogs):
                return True
            if any(p.regex.search(line) for p in idles):
                return False
        return False

    def _expire(self, t: float, screen: list[str]) -> None:
        """After a frame: note how many lines of each sighting are on screen; forget those
        gone for longer than `grace`."""
        for key, sighting in list(self._active.items()):
            rows = tuple(_rows(sighting.pattern, key[1], screen))
            shown = len(rows)
            if shown:
                if shown < sighting.count:  # erased, not scrolled or drawn over: its row is blank now
                    left = [r for r in set(sighting.rows) - set(rows) if r < len(screen) and not screen[r].strip()]
                    sighting.left_rows, sighting.left_at = tuple(left), t
                sighting.last_seen, sighting.count, sighting.on_screen, sighting.rows = t, shown, True, rows
            elif sighting.on_screen:
                # it left with this frame, however long it stood unchanged before: its grace starts now
                sighting.last_seen, sighting.on_screen = t, False
            elif t - sighting.last_seen > self.grace:
                del self._active[key]
            else:
                sighting.on_screen = False  # keep its count: it may be redrawn in a moment


@dataclass
class Sighting:
    """A pattern's line on the screen: when it was last seen, and how often."""

    pattern: Pattern
    last_seen: float
    count: int  # how many such lines the screen showed
    on_screen: bool
    rows: tuple[int, ...] = ()  # where they stood
    left_rows: tuple[int, ...] = ()  # where those that were last erased stood
    left_at: float = 0.0  # when

    def redrawn(self, row: int, t: float, grace: float) -> bool:
        """Is a line on `row` one of them drawn again where it stood a moment ago (Ink erases a
        line and draws it again in separate writes), not one more?"""
        return row in self.left_rows and t - self.left_at <= grace


def _one_per_kind(found: list[Detection]) -> list[Detection]:
    """Different patterns of one kind on one screen (a dialog's question and its footer) are
    one sighting: the first, naming every pattern that matched, with the values any of them read. The same pattern twice (two
    markers in one burst of output) stays two."""
    out: list[Detection] = []
    for d in found:
        group = next((g for g in out if g.kind == d.kind and d.kind != "unrecognized"), None)
        if group is None or d.pattern == group.pattern or d.pattern in [a["pattern"] for a in group.values.get("also", [])]:
            out.append(d)
        else:
            group.values.setdefault("also", []).append({"pattern": d.pattern, "text": d.text})
            for key, value in d.values.items():  # what the first did not say (a limit's zone)
                group.values.setdefault(key, value)
    return out


def _prefilter(patterns: PatternSet | None, unrecognized: bool) -> saferegex.Guarded | None:
    """One regex that matches wherever any pattern could: a superset, used only to skip
    lines (the unrecognized test is done apart, by substring). None if the patterns cannot
    be combined, and then every line is checked."""
    if patterns is None:
        return None
    parts = [_ungroup(p.regex.pattern) for p in patterns.patterns if p.event not in STATE_KINDS]
    try:
        return saferegex.compile("|".join(f"(?:{p})" for p in parts), re.MULTILINE, name="(all patterns at once)")
    except saferegex.error:
        return None


def _ungroup(pattern: str) -> str:
    # named groups would clash once combined: make them plain groups
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _count(pattern: Pattern, key: str, screen: list[str]) -> int:
    return len(_rows(pattern, key, screen))


def _rows(pattern: Pattern, key: str, screen: list[str]) -> list[int]:
    return [i for i, line in enumerate(screen) if _sighting(pattern, line) == key]


def _sighting(pattern: Pattern, line: str) -> str | None:
    m = pattern.regex.search(line)
    return _key(pattern.event, m, _values(pattern.event, m)) if m else None


def _values(event: str, m: re.Match) -> dict:
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    values: dict = {}
    for k, v in groups.items():
        values[k] = int(v) if v.isdigit() else v
    if event == "context_low":
        if "pct" not in values and "used" in values:
            values["pct"] = max(0, 100 - int(values["used"]))
        values["pct_left"] = values.pop("pct")
        values.pop("used", None)
    return values


# Kinds whose lines animate (a spinner glyph, a seconds counter): the same sighting whatever
# the digits and glyph. Otherwise the matched text is the key ("compressed from 600000 to 163
# tokens"; a dialog's "(Y)es/(N)o", unchanged when the answer is typed after it), and a second
# such line on screen is a second sighting.
ANIMATED = {"compaction_started", "busy"}


def _key(event: str, m: re.Match, values: dict) -> str:
    """What makes two matches the same sighting."""
    if event == "context_low":
        return f"{values['pct_left'] // 5}"
    return shape(m.group(0)) if event in ANIMATED else m.group(0)
