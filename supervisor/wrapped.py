"""Tokens a terminal wrapped, for the secret masks (redact.py): a token's prefix and the start
of its body end one line, the rest starts the next (after the indent and the glyph of a box
or a prompt), and goes on to a third only if the second was as full as the first. Joined,
the lines are read as one token; what a token rule finds across them is masked on each line
(a whole token that ends a long line is joined with the next line's first part only if that
could be its rest, not a word or a `NAME=`: more, never less). Pure: text and rules in,
spans out."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

Span = tuple[int, int, str]  # as redact.py's: start, end, what goes there instead
TOKEN_CHARS = r"[A-Za-z0-9_\-.=]"
WRAP = r"\r?\n[ \t]*(?:[│┃|›>❯•][ \t]*)?"
WRAP_WIDTH = 60  # a line shorter than this that ends in a whole token was not wrapped
_PIECE = re.compile(TOKEN_CHARS + "+")
# a word, a name or a constant (no digits): what a line starts with, not a token's tail
WORD = re.compile(r"(?:[A-Z]?[a-z]+|[A-Z]+)(?:[_\-.](?:[A-Z]?[a-z]+|[A-Z]+))*=?")


@cache
def _finder(prefixes: tuple[str, ...]) -> re.Pattern:
    alternatives = "|".join(sorted(map(re.escape, prefixes), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_\-.])(?:{alternatives}){TOKEN_CHARS}*(?:{WRAP}{TOKEN_CHARS}+){{1,8}}")


@cache
def _starts(prefixes: tuple[str, ...]) -> tuple[str, ...]:
    """The prefixes to look for: those no shorter one begins (`sk-` finds `sk-ant-` too)."""
    kept: list[str] = []
    for p in sorted(set(prefixes), key=len):
        if not any(p.startswith(q) for q in kept):
            kept.append(p)
    return tuple(kept)


def _found(text: str, prefixes: tuple[str, ...]) -> list[re.Match]:
    """The finder's matches, apart and in order: each prefix's beginning looked for with a
    fast substring search (one regex of all the prefixes would try every position)."""
    finder, found = _finder(prefixes), []
    for start in _starts(prefixes):
        at = text.find(start)
        while at != -1:
            m = finder.match(text, at)
            if m:
                found.append(m)
            at = text.find(start, at + 1)
    out: list[re.Match] = []
    for m in sorted(found, key=lambda m: m.start()):
        if not out or m.start() >= out[-1].end():
            out.append(m)
    return out


def spans(text: str, prefixes: Sequence[str], rules: Sequence[Any], secret: Callable[[re.Match, Any], bool]) -> list[Span]:
    """Where the token `rules` (each with `match`, `regex` and `kind`, starting with one of `prefixes`)
    find a secret across lines; `secret(match, rule)`: is that match one?"""
    out: list[Span] = []
    for m in _found(text, tuple(prefixes)):
        pieces = _continued(text, [(m.start() + p.start(), m.start() + p.end()) for p in _PIECE.finditer(m.group())])
        if len(pieces) < 2 or pieces[0][0] != m.start():
            continue
        first = pieces[0][1] - pieces[0][0]
        joined = "".join(text[a:b] for a, b in pieces)
        for rule in rules:
            found = rule.match(joined)
            if found is None or found.end() <= first or not secret(found, rule):
                continue
            if not _ends(text, pieces, found.end()) or (
                rule.regex.fullmatch(joined[:first]) and _apart(text, m.start(), pieces, found.end(), getattr(rule, "prefix", ""))
            ):
                break  # the next line goes on with something else (`NAME=`), or a whole token ends its line
            left = found.end()
            for a, b in pieces:
                if left <= 0:
                    break
                out.append((a, min(b, a + left), f"[REDACTED:{rule.kind}]"))
                left -= b - a
            break
    return out


def _apart(text: str, at: int, pieces: list[tuple[int, int]], length: int, prefix: str) -> bool:
    """A whole token ends the line at `at`: is the next line something else? It is when the
    line is too short to have been wrapped, when the next line's first part is not like the
    rest of a token (a word, a `NAME=`), or when the token found does not take all of it (a
    token of a fixed length, then a date)."""
    (a0, b0), (a, b) = pieces[:2]
    return _short(text, at) or not tail_like(text[a0 + len(prefix) : b0], text[a:b]) or length < b0 - a0 + len(text[a:b].rstrip("."))


_HEX = frozenset("0123456789abcdefABCDEF")


def tail_like(head: str, tail: str) -> bool:
    """Could `tail`, at the start of a line, be the rest of `head`, that ended the line above?
    Not a word or a `NAME=`, and hex after hex."""
    word = WORD.match(tail)
    if word and (word.end() == len(tail) or tail[word.end() - 1] == "="):
        return False
    return not (head and set(head) <= _HEX) or set(tail.rstrip(".")) <= _HEX


def _short(text: str, at: int) -> bool:
    """Is the line that holds `at` too short to have been wrapped at a terminal's width?"""
    end = text.find("\n", at)
    return (len(text) if end == -1 else end) - (text.rfind("\n", 0, at) + 1) <= WRAP_WIDTH


def _ends(text: str, pieces: list[tuple[int, int]], length: int) -> bool:
    """Does the token `length` characters into `pieces` end where a token can (white space,
    the text's end, or a character its rule does not take inside the piece)?"""
    for a, b in pieces:
        if length < b - a:
            return text[a + length] != "="  # not a line that goes on with NAME=
        if length == b - a:
            return b == len(text) or text[b] in " \t\r\n"
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
