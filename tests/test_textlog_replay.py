"""The text log is what a person saw, in the order they saw it: every recording of every
agent replayed, the screen snapshotted after each output event, and every row that stayed
visible for 100 ms or more looked for in the log.

- present: the row is a log line, or part of one (a wrapped or streamed line is logged
  whole), or an earlier state of one (a counter, a spinner: the same shape);
- in order: of two such rows, the one that left the screen before the other appeared, or
  that stood above the other when they were first on screen together, is logged first.
  Checked for rows logged once and seen once: a row that left for a moment a person could
  see (`SEEN`) and came back (an input box's placeholder while a message was typed in it, a
  footer hidden while a turn ran) was seen twice, and which of its times the one log line
  stands for is not defined (taking it as up throughout asked for a cycle: Codex's "› Ask
  Codex to do anything" above its footer, the footer gone before a reply appeared above the
  placeholder).
"""

import pytest

import fixtureset
from supervisor.export import replay
from supervisor.echoes import normalize
from supervisor.textlog import shape

SEEN = 0.1  # seconds on screen that make a row something a person saw

# Recordings whose text log still misses a row people saw or writes two out of order (the
# categories: two waiting lines that left from the same row, where which stood higher is not
# kept (Codex's status line moved down into its footer's row as it quits); chrome and content
# interleaved so that the two order rules ask for a cycle (a footer gone before a reply came
# above the input box that stood above the footer); Gemini's command menu scrolled within its
# box; Gemini's footer when it quits; single status rows such as Codex's "• Context compacted
# · 5s"). Strict: one that passes must leave the list.
KNOWN_OFF = {
    'claude/2.1.330/chained.cast.gz',
    'opencode/1.18.33/chained.cast.gz',
    'claude/2.1.197/auto-compact.cast',
    'claude/2.1.197/manual-compact.cast',
    'claude/2.1.330/classic-compact.cast.gz',
    'claude/2.1.330/context-low.cast.gz',
    'claude/2.1.330/long-line.cast.gz',
    'claude/2.1.330/multi-line.cast.gz',
    'claude/2.1.330/permission.cast.gz',
    'codex/0.169.0/approval.cast',
    'codex/0.169.0/approval.cast.gz',
    'codex/0.169.0/chained.cast.gz',
    'codex/0.169.0/compact-auto.cast',
    'codex/0.169.0/compact-auto.cast.gz',
    'codex/0.169.0/compact-manual.cast.gz',
    'codex/0.169.0/context-overflow.cast',
    'codex/0.169.0/context-overflow.cast.gz',
    'codex/0.169.0/default-footer-low-context.cast.gz',
    'codex/0.169.0/footer-context-left-compact.cast.gz',
    'codex/0.169.0/long-line.cast.gz',
    'codex/0.169.0/multiline.cast.gz',
    'gemini/0.61.0/chained.cast.gz',
    'gemini/0.61.0/compress-auto.cast.gz',
    'gemini/0.61.0/compress-manual.cast.gz',
    'gemini/0.61.0/compress-overflow-ctx.cast.gz',
    'gemini/0.61.0/idle-startup.cast.gz',
    'gemini/0.61.0/long-line.cast.gz',
    'gemini/0.61.0/multiline.cast.gz',
    'gemini/0.61.0/overflow-context.cast.gz',
    'gemini/0.61.0/startup-idle.cast.gz',
    'opencode/1.18.33/compact-auto.cast.gz',
    'opencode/1.18.33/compact-keybind-overflow.cast.gz',
    'opencode/1.18.33/compact-manual.cast.gz',
    'opencode/1.18.33/keybind-compact-and-overflow.cast.gz',
    'opencode/1.18.33/manual-compact-slash.cast.gz',
}


def watch(path):
    """(log lines, rows seen): each distinct row text with when it came and went, the order
    constraints between them, and the rows that came back after being gone a while."""
    log, frames = replay(path)
    lines: list[str] = []
    came: dict[str, float] = {}
    went: dict[str, float] = {}
    before: set[tuple[str, str]] = set()
    again: set[str] = set()
    up: dict[str, float] = {}  # when the current stay on screen began
    longest: dict[str, float] = {}  # the longest stay
    on_screen: dict[str, int] = {}
    t = 0.0
    for t, frame in frames:
        lines.extend(frame.logged)
        rows = {}
        for i in range(log.emu.rows):
            text = log.emu.row(i).replace("\xa0", " ").strip()
            if text and text not in rows:
                rows[text] = i
        for text in on_screen.keys() - rows.keys():
            went[text] = t
            longest[text] = max(longest.get(text, 0.0), t - up[text])
        for text, row in rows.items():
            if text not in came:
                came[text] = up[text] = t
                for other, other_row in rows.items():
                    if other != text and other in came and came[other] < t:
                        before.add((other, text) if other_row < row else (text, other))
            elif text not in on_screen:
                if t - went.pop(text) >= SEEN:
                    again.add(text)  # seen a second time
                    up[text] = t
                # else: gone too briefly to be missed (a redraw split over two writes)
        on_screen = rows
    lines.extend(log.finish())
    for text in on_screen:
        went[text] = max(t, came[text]) + SEEN  # still up at the end
        longest[text] = max(longest.get(text, 0.0), went[text] - up[text])
    # One stay of 100 ms: a footer flashed for 40 ms in each of three turns (Claude Code's
    # "esc to interrupt" while a fake model answers at once) was never up long enough to read.
    seen = {text for text in came if longest[text] >= SEEN}
    return lines, seen, came, went, before, again


def find(text: str, lines: list[str]) -> list[int]:
    """Where a row stands in the log: as itself or inside a longer line (wrapped, streamed),
    as an earlier state of one (a counter: the same shape), or redrawn with other glyphs
    around the same words (an animated logo beside "Claude Code v2.1.330")."""
    s, words = shape(text), normalize(text)
    return [i for i, line in enumerate(lines) if text in line or (s and shape(line) == s) or (len(words) >= 8 and words in normalize(line))]


@pytest.mark.parametrize("fixture", fixtureset.load(), ids=lambda f: f.id)
def test_every_row_seen_for_100_ms_is_in_the_log_in_order(fixture, request):
    if fixture.id in KNOWN_OFF:
        request.applymarker(pytest.mark.xfail(strict=True, reason="the text log is known to miss or misorder rows here"))
    lines, seen, came, went, before, again = watch(fixture.path)
    where = {text: find(text, lines) for text in seen}
    missing = sorted((text for text, at in where.items() if not at), key=came.get)
    assert not missing, f"{len(missing)} rows seen for {SEEN * 1000:.0f} ms or more are not in the log: {missing[:10]}"
    # order, for rows that stand once in the log and were seen once
    once = {text: at[0] for text, at in where.items() if len(at) == 1 and text not in again}
    wrong = []
    for a in once:
        for b in once:
            if a == b or once[a] <= once[b]:
                continue
            # a is logged after b: wrong if a left before b came, or stood above it
            if went.get(a, float("inf")) <= came[b] or (a, b) in before:
                wrong.append((a, b))
    assert not wrong, f"{len(wrong)} pairs logged out of order (first, then the one logged before it): {wrong[:5]}"
