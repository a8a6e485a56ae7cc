"""Our own words, found again: what supervise gave an agent, as the session shows it back.

A context typed at the prompt is echoed on screen, and agents redraw what was typed their
own way: quoted in their history (` > [supervise] …`, indented lines), wrapped at the
window's width, drawn in an input box with `↑` and `•` marks, and a long paste may be collapsed to `[Pasted text #1 +40 lines]`,
`[Pasted Content 1157 chars]`, `[Pasted Text: 27 lines]`, `[Pasted ~40 lines]` or `[its first words... Pasted +40 lines]`. An agent
may quote it in its reply too, or print it as it sends it (a verbose mode's `USER …`). Read back, an echo would pass for the user's latest request, for the agent's output,
for an error, and (it says "compacted") for a detection.

So lines are compared with what was given on their ASCII letters and digits alone, which no
wrapping, indenting, glyph or bullet changes: a line is an echo line when most of its
12-character pieces stand in a given text. That alone is not enough: a context quotes the
session (the user's request, an error, a file edit), and those lines were the session's
first. A run of consecutive echo lines is ours when one of its lines holds a piece of the
given text's own wording (its template: "[supervise] You are continuing…", "Relevant
files:", "Continue from the current task…"), which the session never printed by itself.
A run echoes one text: of its lines, those of the round it echoes go, with the short rows
around them that are bits of it (a row caught half drawn); a line next to it that only
another round quotes (the user's next message, which the next context names as their
latest request) stays.
Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

PIECE = 12  # characters: long enough that a piece found in a context is no accident
STRIDE = 4  # a line's pieces are tested at this step (a 32 MB round stays within a second)
COVERED = 0.7  # the share of a line's pieces found in a given text that makes it an echo line
DETECTION_CHARS = 40  # a line this long, nearly all ours, is never a detection (see `ours`)
FRAGMENT = 4  # letters and digits: a shorter line next to an echo is no telling piece of it
GIVEN_MAX = 20  # the latest texts given that are looked for: older ones are long gone from screen
MARK = "[supervise gave the agent its session context here]"

# Normalized text keeps ASCII letters (lowered) and digits, and newlines where asked: bytes'
# translate does that at C speed (a Unicode regex was far too slow for a long log). Letters of other
# scripts go too, alike on both sides: the template's English and the paths, commands and
# names in a context still tell its echo.
_KEEP = set(b"abcdefghijklmnopqrstuvwxyz0123456789")
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_DROP_KEEP_NEWLINES = _DROP.replace(b"\n", b"")
# A role label before a line: an agent printing the messages it sends ("USER [supervise] …",
# in a verbose mode) puts its own word before ours.
# It is dropped, like a glyph, before a line is compared; else a short line of ours
# ("USER Still to do:") would not be recognized, and would break the run it stands in.
LABEL = re.compile(r"[ \t]*[A-Z][A-Z_]{1,11}[ \t]+")
# (some begin with the paste's first words: "[[supervise] You are continuing ea... Pasted +27 lines]")
PASTED = re.compile(
    r"\[(?:[^\n]{0,80}?\.\.\. )?Pasted (?:text #\d+ \+|text: |Content |~|\+)?(?P<n>\d+) (?P<unit>lines?|chars)\]", re.IGNORECASE
)


def normalize(text: str, newlines: bool = False) -> str:
    data = text.encode("utf-8", "replace").lower()
    return data.translate(None, _DROP_KEEP_NEWLINES if newlines else _DROP).decode("ascii")


def _pieces(n: str) -> set[str]:
    return {n[i : i + PIECE] for i in range(len(n) - PIECE + 1)}


@dataclass(frozen=True)
class Given:
    """The texts supervise gave an agent, ready to be recognized."""

    pieces: frozenset[str]  # of every text given
    own: frozenset[str]  # of their own wording: what they say besides the session's words
    sizes: tuple[tuple[int, int], ...]  # (characters, lines) of each, for collapsed pastes
    each: tuple[frozenset[str], ...] = ()  # the pieces of each text, in the order given
    texts: tuple[str, ...] = ()  # each text, normalized
    short: frozenset[str] = frozenset()  # its lines too short for pieces ("- (none)", "Completed:"), normalized
    short_lines: frozenset[str] = frozenset()  # the same lines as written

    @classmethod
    def of(cls, given: Iterable[tuple[str, str]]) -> "Given":
        """From (text, quoted) pairs: what was given, and the session's words it quotes (a
        context prompt's values; "" for a text that is all ours, such as a continue)."""
        pieces: set[str] = set()
        own: set[str] = set()
        sizes = []
        each, texts = [], []
        short: set[str] = set()
        short_lines: set[str] = set()
        for text, quoted in given:
            text = text.strip()
            if not text:
                continue
            # its short lines as written; a value quoted from the session only as a bullet of
            # ours ("- src/a.py"): alone, the user's own words are theirs
            theirs = {normalize(line) for line in quoted.splitlines()}
            mine_short = [
                line.strip()
                for line in text.splitlines()
                if 0 < len(n := normalize(line)) < PIECE and (n not in theirs or line.lstrip().startswith("- "))
            ]
            short |= {normalize(line) for line in mine_short}
            short_lines |= set(mine_short)
            texts.append(normalize(text))
            mine = _pieces(texts[-1])
            pieces |= mine
            own |= mine - _pieces(normalize(quoted))
            sizes.append((len(text), text.count("\n") + 1))
            each.append(frozenset(mine))
        return cls(frozenset(pieces), frozenset(own), tuple(sizes), tuple(each), tuple(texts), frozenset(short), frozenset(short_lines))

    def __bool__(self) -> bool:
        return bool(self.sizes)

    def own_short_line(self, line: str, n: str) -> bool:
        """`line` is one of its own short lines as written, after nothing but an agent's
        glyphs and spaces ("  ┃  - (none)"): not words a user would type alone."""
        if n not in self.short:
            return False
        said = line.rstrip()
        return any(said.endswith(s) and not any(c.isalnum() for c in said[: -len(s)]) for s in self.short_lines)

    def coverage(self, n: str, pieces: frozenset[str] | None = None) -> float:
        """The share of a normalized line's pieces that stand in a given text (in `pieces`,
        one text's, if given)."""
        if len(n) < PIECE:
            return 0.0
        pieces = self.pieces if pieces is None else pieces
        starts = list(range(0, len(n) - PIECE + 1, STRIDE))
        if starts[-1] != len(n) - PIECE:
            starts.append(len(n) - PIECE)
        found = sum(1 for i in starts if n[i : i + PIECE] in pieces)
        return found / len(starts)

    def one_text(self, lines: list[str]) -> tuple[list[bool], str]:
        """Which of a run's normalized echo lines come from the one given text the run
        echoes. A run echoes one text; a line next to it that only another text quotes (the
        user's next message, which the next context names as their latest request) is the
        session's. The text echoed is the one that holds the most of the run's lines whole
        (a wrapped or cut line of it is all its pieces; the contexts share their template,
        so a looser measure cannot tell one round's echo from the next's), counting first
        the lines in our own wording (the session's words may be in any round); between
        texts that hold as many, the one that holds most of them (a line with a prompt before
        it, "demo› [supervise] …", is no text's whole). Only the lines from the first in our
        own wording to the last have a say: a session's line at either end (the user's next
        message, after a row of the template left over from a redraw) decides nothing.
        Returns which lines, and that text (normalized)."""
        if len(self.each) < 2:
            return [True] * len(lines), "".join(self.texts)
        own = [self.own_words(n) for n in lines]
        said = [i for i, o in enumerate(own) if o]
        span = slice(said[0], said[-1] + 1) if said else slice(None)
        covered = [[self.coverage(n, pieces) for n in lines] for pieces in self.each]

        def held(i: int) -> tuple[int, int, float]:
            whole = [c == 1.0 for c in covered[i][span]]
            return sum(w and o for w, o in zip(whole, own[span])), sum(whole), sum(covered[i][span])

        k = max(range(len(covered)), key=held)
        return [c >= COVERED for c in covered[k]], self.texts[k]

    def _likely(self, n: str) -> bool:
        """Two of the first, middle and last pieces are ours: a line that is not fails here
        in three look-ups (most lines of a session)."""
        last = len(n) - PIECE
        pieces = self.pieces
        return (n[:PIECE] in pieces) + (n[last // 2 : last // 2 + PIECE] in pieces) + (n[last:] in pieces) >= 2

    def echo_line(self, line: str, normalized: str | None = None) -> bool:
        """Mostly our text: a line of an echo, of a reply quoting it, or of what it quoted."""
        n = normalize(line) if normalized is None else normalized
        return len(n) >= PIECE and self._likely(n) and self.coverage(n) >= COVERED

    def holds_ours(self, line: str) -> bool:
        """Mostly our text, or holding some of our own wording anywhere (an agent's debug dump
        of the request it sends, our context inside): no status line of the agent's."""
        n = normalize(line)
        return bool(self) and (self.echo_line(line, n) or self.own_words(n))

    def own_words(self, n: str) -> bool:
        """A normalized line holds a piece of our own wording."""
        own = self.own
        return any(n[i : i + PIECE] in own for i in range(len(n) - PIECE + 1))

    def pasted(self, line: str) -> bool:
        """A collapsed paste whose size is one of ours (within 5%, or two lines)."""
        m = PASTED.search(line)
        if not m:
            return False
        n, lines = int(m.group("n")), m.group("unit").lower().startswith("line")
        for chars, count in self.sizes:
            size = count if lines else chars
            if abs(n - size) <= max(2 if lines else 0, size * 0.05):
                return True
        return False

    def ours(self, line: str) -> bool:
        """One line, on its own, is ours beyond doubt: a collapsed paste of our size, or long
        and nearly all our text, some of it our own wording. For the detector, which sees a
        line at a time: a real status line ("✻ Conversation compacted") is short, and a
        context may well quote one."""
        if self.pasted(line):
            return True
        n = normalize(line)
        return len(n) >= DETECTION_CHARS and self._likely(n) and self.coverage(n) >= 0.9 and self.own_words(n)


def strip(text: str, given: Given, mark: bool = True) -> str:
    """`text` without the runs of lines that echo what was given; each run is replaced by
    MARK (so a reader knows a context was given there), or dropped with mark=False."""
    if not given or not text:
        return text
    lines = text.split("\n")
    normalized = normalize(text, newlines=True).split("\n")  # at once: one pass in C, not one per line
    collapsed = PASTED.search(text) is not None
    drop: list[tuple[int, int]] = []  # (first, last) line of each run that is ours
    run: list[int] = []  # the echo lines of the current run (short lines between them go with it)
    mine = False

    def fragment(n: str, text: str) -> bool:
        """Too short for pieces, but a piece of the text echoed: a row caught half drawn
        ("turn 1: writ"), a wrapped line's last word, a "- (none)" bullet."""
        return FRAGMENT <= len(n) < PIECE and n in text

    def close() -> None:
        nonlocal run, mine
        if run and mine:
            # the lines of the one text this run echoes, with what lies between them
            echoed, text = given.one_text([normalized[i] for i in run])
            segments: list[tuple[int, int]] = []
            first: int | None = None
            last = 0  # set with first
            for i, ours in zip(run, echoed):
                if ours:
                    first = i if first is None else first
                    last = i
                elif first is not None:
                    segments.append((first, last))
                    first = None
            if first is not None:
                segments.append((first, last))
            if segments:
                # and the fragments of it right before and after
                (first, _), (_, last) = segments[0], segments[-1]
                floor = drop[-1][1] if drop else -1
                first = _reach(first, -1, floor, normalized, lambda n: fragment(n, text))
                last = _reach(last, 1, len(lines), normalized, lambda n: fragment(n, text))
                segments[0] = (first, segments[0][1])
                segments[-1] = (segments[-1][0], last)
                drop.extend(segments)
        run, mine = [], False

    alone: set[int] = set()  # lines of its own wording left on their own (a redraw's pieces): dropped, unmarked
    for i, line in enumerate(lines):
        if collapsed and given.pasted(line):
            close()
            drop.append((i, i))
            continue
        n = normalized[i]
        if not run and given.own_short_line(line, n):
            alone.add(i)
            continue
        if n and LABEL.match(line):
            n = normalized[i] = normalize(LABEL.sub("", line, count=1))
        if given.echo_line(line, n):
            run.append(i)
            mine = mine or given.own_words(n)
        elif len(n) >= PIECE or not run:
            close()
        # else: a heading ("Completed:"), a bullet, a blank line: the run goes on
    close()
    if not drop and not alone:
        return text
    out: list[str] = []
    at = 0
    for first, last in drop:
        out.extend(line for k, line in enumerate(lines[at:first], at) if k not in alone)
        if mark:
            out.append(MARK)
        at = last + 1
    out.extend(line for k, line in enumerate(lines[at:], at) if k not in alone)
    return "\n".join(out)


def _reach(at: int, step: int, bound: int, normalized: list[str], fragment) -> int:
    """From line `at`, how far (by `step`, short of `bound`) the fragments of an echo go on,
    over blank lines between them (a bullet list of "- (none)" under headings)."""
    i = at + step
    while i != bound and (not normalized[i] or fragment(normalized[i])):
        if normalized[i]:
            at = i
        i += step
    return at


def is_echo_text(text: str, given: Given) -> bool:
    """A whole message (a transcript's user turn) that is one of ours: a collapsed paste of
    our size, or mostly our text and some of it our own wording."""
    if not given or not text.strip():
        return False
    if given.pasted(text) and len(normalize(PASTED.sub("", text))) < PIECE:
        return True
    n = normalize(text)
    return given.echo_line(text, n) and given.own_words(n)
