"""Tokens a terminal wrapped, for the secret masks (redact.py): a token's prefix and the start
of its body end one line, the rest starts the next (after the indent and the glyph of a box
or a prompt), and goes on to a third only if the second was as full as the first. Joined,
the lines are read as one token; what a token rule finds across them is masked on each line
(where the line after a token's last one starts with a word, that word may be masked too:
more, never less). Pure: text and rules in, spans out."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

Span = tuple[int, int, str]  # as redact.py's: start, end, what goes there instead
TOKEN_CHARS = r"[A-Za-z0-9_\-.]"
WRAP = r"\r?\n[ \t]*(?:[│┃|›>❯•][ \t]*)?"
WRAP_WIDTH = 60  # a line shorter than this that ends in a whole token was not wrapped
_PIECE = re.compile(TOKEN_CHARS + "+")


@cache
def _finder(prefixes: tuple[str, ...]) -> re.Pattern:
    alternatives = "|".join(sorted(map(re.escape, prefixes), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_\-.])(?:{alternatives}){TOKEN_CHARS}*(?:{WRAP}{TOKEN_CHARS}+){{1,8}}")


def spans(text: str, prefixes: Sequence[str], rules: Sequence[Any], secret: Callable[[re.Match, Any], bool]) -> list[Span]:
    """Where the token `rules` (each with `regex` and `kind`, starting with one of `prefixes`)
    find a secret across lines; `secret(match, rule)`: is that match one?"""
    out: list[Span] = []
    for m in _finder(tuple(prefixes)).finditer(text):
        pieces = _continued(text, [(m.start() + p.start(), m.start() + p.end()) for p in _PIECE.finditer(m.group())])
        if len(pieces) < 2 or pieces[0][0] != m.start():
            continue
        first = pieces[0][1] - pieces[0][0]
        joined = "".join(text[a:b] for a, b in pieces)
        for rule in rules:
            found = rule.regex.match(joined)
            if found is None or found.end() <= first or not secret(found, rule):
                continue
            if not _ends(text, pieces, found.end()) or (rule.regex.fullmatch(joined[:first]) and _short(text, m.start())):
                break  # the next line goes on with something else (`NAME=`), or a whole token ends a short line
            left = found.end()
            for a, b in pieces:
                if left <= 0:
                    break
                out.append((a, min(b, a + left), f"[REDACTED:{rule.kind}]"))
                left -= b - a
            break
    return out


def _short(text: str, at: int) -> bool:
    """Is the line that holds `at` too short to have been wrapped at a terminal's width?"""
    end = text.find("\n", at)
    return (len(text) if end == -1 else end) - (text.rfind("\n", 0, at) + 1) <= WRAP_WIDTH


def _ends(text: str, pieces: list[tuple[int, int]], length: int) -> bool:
    """Does the token `length` characters into `pieces` end where a token can (white space,
    the text's end, or a character its rule does not take inside the piece)?"""
    for a, b in pieces:
        if length <= b - a:
            return length < b - a or b == len(text) or text[b] in " \t\r\n"
        length -= b - a
    return True


def _continued(text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pieces of one wrapped token: a line after the second only while the one before it
    was as full as the first (a wrapped line is; the token's last line is not)."""
    width = pieces[0][1] - (text.rfind("\n", 0, pieces[0][0]) + 1)
    kept = pieces[:2]
    for a, b in pieces[2:]:
        prev_a, prev_b = kept[-1]
        if prev_b - (text.rfind("\n", 0, prev_a) + 1) < width - 2:
            break
        kept.append((a, b))
    return kept
