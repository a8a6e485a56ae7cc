"""What the user typed: their messages, read off an agent's text log with its pattern file.

Every agent draws a user message its own way (`❯ text`, `┃  text`, `› text`, ...), and a
prompt glyph alone also marks menus, placeholders and shell
output. So each pattern file says which lines are the user's words (`user_input`, the
first line of a message) and which lines continue one (`user_input_continued`), each
capturing the words as `(?P<text>...)`. An agent that draws a tool's output the way it draws
the user's messages (a bash block: "┃  $ ls", then "┃  total 12") says where such
output starts (`tool_output`): the message-like lines right after it are the tool's.
Pure: text in, messages out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .patterns import PatternSet


@dataclass(frozen=True)
class Turn:
    """One of the user's turns in a text log."""

    offset: int  # where its first line starts in the text
    text: str


def user_turns(lines: Iterable[str], patterns: PatternSet | None) -> list[str]:
    """The user's messages in order (see `find`)."""
    return [t.text for t in find("\n".join(lines), patterns)]


def find(text: str, patterns: PatternSet | None) -> list[Turn]:
    """The user's messages in `text`, each with its continuation lines joined by newlines.
    A message drawn again right after itself (a full-screen redraw) counts once. The text is
    searched with each pattern at once (a 100 MB log in well under a second), then every
    hit is checked on its own line, as the pattern was written for one line."""
    if patterns is None or not patterns.of("user_input"):
        return []
    starts = patterns.of("user_input")
    more = patterns.of("user_input_continued")
    firsts: dict[int, str] = {}
    for p in starts:
        for m in p.regex.with_flags(re.MULTILINE).finditer(text):
            # A pattern meant for one line may match across several here (`\s` takes a
            # newline): every line the match touches is checked on its own.
            begin: int | None = text.rfind("\n", 0, m.start()) + 1
            while begin is not None and (begin <= m.start() or begin < m.end()):
                if begin not in firsts:
                    said = _match(starts, _line(text, begin))
                    if said is not None:
                        firsts[begin] = said
                begin = _next_line(text, begin)
    for begin in _tool_output(text, patterns.of("tool_output"), starts):
        firsts.pop(begin, None)
    turns: list[Turn] = []
    long: dict[str, list[str]] = {}  # the long messages so far, white space folded, by their start
    for begin in sorted(firsts):
        words = [firsts[begin]]
        at = _next_line(text, begin)
        while at is not None and at not in firsts:
            said = _match(more, _line(text, at))
            if said is None:
                break
            words.append(said)
            at = _next_line(text, at)
        message = "\n".join(words).strip()
        if message and (not turns or turns[-1].text != message) and not _part_of_earlier(message, long):
            turns.append(Turn(begin, message))
    return turns


# A message read again later as only its beginning is the earlier one redrawn in part (an input
# box that keeps a long message's first row, logged apart from its wrapped rest), not
# a new one: a new message that is word for word the start of an earlier long one is rare,
# and shorter ones ("fix the tests") are kept whatever they begin.
PART_MIN = 60


def _part_of_earlier(message: str, long: dict[str, list[str]]) -> bool:
    """Is `message` the beginning of an earlier long message? (Remembers it in `long` if not.)"""
    folded = " ".join(message.split())
    if len(folded) < PART_MIN:
        return False
    earlier = long.setdefault(folded[:PART_MIN], [])
    if any(len(other) > len(folded) and other.startswith(folded) for other in earlier):
        return True
    earlier.append(folded)
    return False


def _tool_output(text: str, blocks, starts) -> list[int]:
    """Where the lines of tool output drawn like messages begin: after each line a
    `tool_output` pattern matches, every following line a `user_input` pattern would take."""
    out = []
    for p in blocks:
        for m in p.regex.with_flags(re.MULTILINE).finditer(text):
            at = _next_line(text, text.rfind("\n", 0, m.start()) + 1)
            while at is not None and _match(starts, _line(text, at)) is not None:
                out.append(at)
                at = _next_line(text, at)
    return out


def mark_typed(text: str, patterns: PatternSet | None, typed: list[str], mark: str) -> str:
    """`text` with the messages supervise typed (`typed`: a continue after a usage limit) put
    as `mark`, so they are not read as the user's: for each text typed, the latest message
    that says exactly it (the user may have typed the same words before)."""
    if not typed:
        return text
    turns = find(text, patterns)
    mine = latest_saying([t.text for t in turns], typed)
    for turn in [turns[i] for i in sorted(mine, reverse=True)]:  # latest first: the offsets before it stay valid
        end = turn.offset - 1
        for _ in range(turn.text.count("\n") + 1):  # to the end of its last line
            end = text.find("\n", end + 1)
            if end == -1:
                end = len(text)
                break
        text = text[: turn.offset] + mark + text[end:]
    return text


def latest_saying(texts: list[str], typed: list[str]) -> set[int]:
    """Which of `texts` (messages in order) are the ones supervise typed: for each text in
    `typed`, the latest message that says exactly it (the user may have typed the same words
    before)."""
    left = Counter(t.strip() for t in typed)
    mine = set()
    for i in reversed(range(len(texts))):
        said = texts[i].strip()
        if said and left[said] > 0:
            left[said] -= 1
            mine.add(i)
    return mine


def original_request(turns: list[str]) -> str:
    """The first message that is a request, not an agent command (`/compact`, `/model`)."""
    return next((t for t in turns if not t.startswith("/")), "")


def _line(text: str, begin: int) -> str:
    end = text.find("\n", begin)
    return text[begin:] if end == -1 else text[begin:end]


def _next_line(text: str, begin: int) -> int | None:
    end = text.find("\n", begin)
    return None if end == -1 or end + 1 >= len(text) else end + 1


def _match(patterns, line: str) -> str | None:
    for p in patterns:
        m = p.regex.search(line)
        if m is not None:
            return (m.group("text") or "").rstrip()
    return None
