"""What the user typed: their messages, read off an agent's text log with its pattern file.

Every agent draws a user message its own way (Claude Code `❯ text`, OpenCode `┃  text`,
Codex `› text`, ...), and a prompt glyph alone also marks menus, placeholders and shell
output. So each pattern file says which lines are the user's words (`user_input`, the
first line of a message) and which lines continue one (`user_input_continued`), each
capturing the words as `(?P<text>...)`. Pure: lines in, messages out.
"""

from __future__ import annotations

from collections.abc import Iterable

from .patterns import PatternSet


def user_turns(lines: Iterable[str], patterns: PatternSet | None) -> list[str]:
    """The user's messages in order, each with its continuation lines joined by newlines.
    A message redrawn unchanged right after itself (a full-screen redraw) counts once."""
    if patterns is None:
        return []
    starts = patterns.of("user_input")
    more = patterns.of("user_input_continued")
    if not starts:
        return []
    turns: list[str] = []
    current: list[str] | None = None
    for line in lines:
        m = _match(starts, line)
        if m is not None:
            _close(turns, current)
            current = [m]
            continue
        if current is not None:
            m = _match(more, line)
            if m is not None:
                current.append(m)
                continue
        _close(turns, current)
        current = None
    _close(turns, current)
    return turns


def original_request(turns: list[str]) -> str:
    """The first message that is a request, not an agent command (`/compact`, `/model`)."""
    return next((t for t in turns if not t.startswith("/")), "")


def _match(patterns, line: str) -> str | None:
    for p in patterns:
        m = p.regex.search(line)
        if m is not None:
            return (m.group("text") or "").rstrip()
    return None


def _close(turns: list[str], current: list[str] | None) -> None:
    if not current:
        return
    text = "\n".join(current).strip()
    if text and (not turns or turns[-1] != text):
        turns.append(text)
