"""The text log is what a person saw, in the order they saw it: every recording of every
agent replayed, the screen snapshotted after each output event, and every row that stayed
visible for 100 ms or more looked for in the log.

A line is a row's text, and the states it takes where it stands (a counter, a spinner, a line
being typed) are that one line; a line gone for `SEEN` or more and back stays a second time.
- present: one of its states is a log line, or part of one (a wrapped or streamed line is
  logged whole), or a line of the same shape (a counter) or of the same words among other
  glyphs (an animated logo);
- in order: of two stays, the one that left the screen before the other appeared, or that
  stood above the other when they were first on screen together, is logged first. Checked
  for lines logged once per stay, each stay where its copy stands; not for a line drawn on
  two rows at once (which one a log line is, is not known), nor for two stays whose required
  order contradicts itself (`contradictions`: no log with one line each can hold it).
A row of nothing but rule or border characters holds no words: it need not be logged.
"""

from dataclasses import dataclass, field

import pytest

import fixtureset
from supervisor.recording.export import replay
from supervisor.detection.echoes import normalize
from supervisor.detection.sameline import is_update, shape

SEEN = 0.1  # seconds on screen that make a row something a person saw


@dataclass(eq=False)
class Stay:
    """One stay of a line on screen: from when it came to when it went (gone for less than
    `SEEN` does not end it). A line is a row's text, and the states it takes where it stands
    (a counter, a spinner, a line being typed: `is_update`) are that one line."""

    line: str
    came: float
    row: int
    went: float = float("inf")
    states: list[str] = field(default_factory=list)  # the texts it showed, the latest last
    gone: float | None = None  # when it last left, while it may still come back
    twice: bool = False  # shown on two rows at once: which one a log line is, is not known


def watch(path):
    """(log lines, stays seen for `SEEN` or more, the order constraints between them)."""
    log, frames = replay(path)
    lines: list[str] = []
    line_of: dict[str, str] = {}  # a row's text -> the line it is a state of (its first state)
    stays: list[Stay] = []
    current: dict[str, Stay] = {}  # a line -> its latest stay
    before: set[tuple[Stay, Stay]] = set()
    shown: dict[int, str] = {}  # row index -> its text, in the last snapshot
    showing: dict[str, tuple[int, str]] = {}  # a line on screen in the last snapshot -> (row, text)
    names: set[str] = set()
    t = 0.0
    for t, frame in frames:
        lines.extend(frame.logged)
        rows, now, twice = {}, {}, set()
        for i, text in enumerate(log.emu.rows_text(range(log.emu.rows))):
            text = text.replace("\xa0", " ").strip()
            if not text:
                continue
            now[i] = text
            old = shown.get(i)
            if text not in line_of or showing.get(line_of[text], (i, text))[0] != i and showing[line_of[text]][1] != text:
                # new, or a state another line passed through and left behind: two replies
                # streamed in both first read "Reply", and the second is not the first
                grows = old in line_of and is_update(old, text)
                line_of[text] = line_of[old] if grows else text if text not in names else f"{text}\x00{len(names)}"
                names.add(line_of[text])
            line = line_of[text]
            if line in rows:
                twice.add(line)
                continue
            rows[line] = (i, text)
        shown = now
        showing = dict(rows)
        for line, stay in current.items():
            if line not in rows and stay.gone is None and stay.went == float("inf"):
                stay.gone = t
        arrived = []
        for line, (row, text) in rows.items():
            stay = current.get(line)
            if stay is not None and stay.gone is not None and t - stay.gone >= SEEN:
                stay.went = stay.gone
            if stay is None or stay.went != float("inf"):
                stay = current[line] = Stay(line, t, row)
                stays.append(stay)
                arrived.append(stay)
            stay.gone = None
            stay.twice = stay.twice or line in twice
            if not stay.states or stay.states[-1] != text:  # (the latest last: a typed line re-wrapped is cut back)
                if text in stay.states:
                    stay.states.remove(text)
                stay.states.append(text)
        for stay in arrived:
            for line, (row, _) in rows.items():
                other = current[line]
                if other is not stay and other.came < t:
                    before.add((other, stay) if row < stay.row else (stay, other))
    lines.extend(log.finish())
    for stay in stays:
        if stay.went == float("inf"):
            stay.went = stay.gone if stay.gone is not None else t + SEEN  # still up at the end
    seen = [stay for stay in stays if stay.went - stay.came >= SEEN]
    return lines, seen, before


def find(texts: list[str], lines: list[str]) -> list[int]:
    """Where a line stands in the log: as one of its states or inside a longer line (wrapped,
    streamed), or else as a state of the same shape (a counter) or redrawn with other glyphs
    around the same words (an animated logo beside "Claude Code v2.1.330")."""
    # its last state or its fullest one (what the log keeps of a line cut back) before any
    # other: "✦ Fake reply to:", streamed, is in every reply
    for some in ([texts[-1], max(texts, key=len)], texts):
        itself = [i for i, line in enumerate(lines) if any(text in line for text in some)]
        if itself:  # "Fake reply #36" is not "Fake reply #38", though both have one shape
            return itself
    shapes = {shape(text) for text in texts} - {""}
    words = {w for w in (normalize(text) for text in texts) if len(w) >= 8}
    return [i for i, line in enumerate(lines) if shape(line) in shapes or any(w in normalize(line) for w in words)]


def contradictions(rows, first) -> dict:
    """Each row's group of rows whose required order contradicts itself: within a group each
    row must come before every other one, through a chain of others (a footer that stood
    below history lines drawn later and above an input line drawn later). No log with one line
    for each can order such a pair; every other pair is checked. (Tarjan's strongly
    connected components of the graph a -> b for `first(a, b)`.)"""
    nodes = list(rows)
    succ = {a: [b for b in nodes if a != b and first(a, b)] for a in nodes}
    index, low, group, stack, on = {}, {}, {}, [], set()
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on.add(node)
            for j in range(i, len(succ[node])):
                nxt = succ[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                if low[node] == index[node]:
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        group[member] = index[node]
                        if member == node:
                            break
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return group


@pytest.mark.parametrize("fixture", fixtureset.load(), ids=lambda f: f.id)
def test_every_row_seen_for_100_ms_is_in_the_log_in_order(fixture):
    lines, seen, before = watch(fixture.path)
    by_line: dict[str, list[Stay]] = {}
    for stay in seen:
        by_line.setdefault(stay.line, []).append(stay)
    where = {line: find([text for stay in own for text in stay.states], lines) for line, own in by_line.items()}
    missing = sorted((line for line, at in where.items() if not at), key=lambda line: by_line[line][0].came)
    missing = [line.split("\x00")[0] for line in missing]
    missing = [line for line in missing if any(c.isalnum() for c in line)]  # a rule alone says nothing
    assert not missing, f"{len(missing)} rows seen for {SEEN * 1000:.0f} ms or more are not in the log: {missing[:10]}"
    # order: a line logged once per stay has each stay where its copy stands, in turn
    at = {}
    for line, own in by_line.items():
        if len(where[line]) == len(own) and not any(stay.twice for stay in own):
            at.update(zip(own, where[line]))

    def first(a, b):  # a must be logged before b: it left before b came, or stood above it
        return a.went <= b.came or (a, b) in before

    group = contradictions([stay for stay in seen if not stay.twice], first)
    wrong = [
        (a.line.split("\x00")[0], b.line.split("\x00")[0])
        for a in at
        for b in at
        if a is not b and at[a] > at[b] and first(a, b) and group[a] != group[b]
    ]
    assert not wrong, f"{len(wrong)} pairs logged out of order (first, then the one logged before it): {wrong[:5]}"
