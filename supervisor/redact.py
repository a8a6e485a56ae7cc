"""Mask secrets before anything leaves the machine (summaries) or a file is shared (exports).

Each rule finds a kind of secret and the part of it to mask; the mask says what it was:
`[REDACTED:anthropic-key]`. Rules are written to leave ordinary code alone: `token =
get_token()` is code, `token = "9f8e..."` is a secret; `postgres://{user}:{password}@` is a
template, `password_file = "/run/secrets/db"` names a file. The rules by form (a token's
prefix, a key's armour, a URL's password) are in redactrules.py, those by name (`password=`,
`api_key:`) in redactnames.py; tokens a terminal wrapped across lines in wrapped.py.

Speed: an export redacts a whole log (up to 100 MB), the recorder every event it stores and
every chunk of the text log it indexes (its events and indexer threads, never the PTY
loop), every summary its digest.
So every rule starts with a literal that a fast substring search finds (a token's prefix,
"://", a word of a secret's name), and most text is passed over at that speed; measured
with scripts/bench_redact.py (docs/benchmarks.md).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from . import redactnames, wrapped
from .redactrules import BODY_LINE_RX, KEY_RULES, LINE_BREAK_RX, PEM_BLOCK, PEM_END, PREFIXES, RULES, RUN_AT_END, TOKEN_RULES, Rule

__all__ = ["RULES", "Rule", "apply", "by_line", "findings", "redact", "redact_data", "spans"]


def redact(text: str) -> str:
    return apply(text, spans(text))


def by_line(text: str) -> list[str]:
    """`text`'s lines, each masked where a secret lies in it: a secret across lines (a key
    block, a token a terminal wrapped) is masked in every line it touches."""
    lines = text.split("\n")
    edits = spans(text)
    if not edits:
        return lines
    out, at, k = [], 0, 0
    for line in lines:
        end = at + len(line)
        while k < len(edits) and edits[k][1] <= at:
            k += 1
        mine = [(max(a, at) - at, min(b, end) - at, token) for a, b, token in edits[k:] if a < end and b > at]
        out.append(apply(line, mine) if mine else line)
        at = end + 1
    return out


def redact_data(value):
    """Every string in a JSON-like structure masked (before it is encoded: escapes would
    hide secrets from the rules)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    return value


Span = tuple[int, int, str]  # start, end, what goes there instead


def spans(text: str) -> list[Span]:
    """What `redact` replaces, as spans of `text` itself, in order and apart: for a text that
    is cut into pieces afterwards (a recording's events), each piece masked where its part of
    a secret lies. Tokens a terminal wrapped first, then private keys, then the other rules
    (where two find the same text, the first in RULES names it), then secrets by their names,
    each step on the text the ones before left masked."""
    edits: list[Span] = wrapped.spans(text, PREFIXES, TOKEN_RULES, lambda m, rule: _is_secret(m, rule))
    current = apply(text, edits) if edits else text
    for group in (RULES[:KEY_RULES], RULES[KEY_RULES:]):
        found: list[Span] = []
        taken: list[tuple[int, int]] = []  # what an earlier rule of the group found, in order
        for rule in group:
            mine = [
                (m.start(rule.group) - rule.lead, m.end(rule.group), f"[REDACTED:{rule.kind}]")
                for m in rule.finditer(current)
                if _is_secret(m, rule)
            ]
            if rule is PEM_BLOCK:
                mine = _merge(mine, [(a, b, "[REDACTED:private-key]") for a, b in _key_tails(apply(current, mine))], current, mine)
            for span in mine:
                k = bisect.bisect_left(taken, (span[0], span[0]))
                if (k == 0 or taken[k - 1][1] <= span[0]) and (k == len(taken) or taken[k][0] >= span[1]):
                    taken.insert(k, span[:2])
                    found.append(span)
        if found:
            edits = _merge(edits, sorted(found), text, edits)
            current = apply(text, edits)
    found = redactnames.find(current)  # last: a token's own kind says more than the name it is assigned to
    return _merge(edits, found, text, edits) if found else edits


def apply(text: str, edits: list[Span]) -> str:
    out, done = [], 0
    for start, end, token in edits:
        out += [text[done:start], token]
        done = end
    out.append(text[done:])
    return "".join(out)


def _merge(edits: list[Span], found: list[Span], text: str, base: list[Span]) -> list[Span]:
    """`found` (spans of `apply(text, base)`) added to `edits` (spans of `text`), in
    `text`'s terms; spans that overlap become one, named for the first."""
    back = _back(base)
    moved = [(back(a, False), back(b, True), token) for a, b, token in found]
    out: list[Span] = []
    for start, end, token in sorted(edits + moved):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end), out[-1][2])
        else:
            out.append((start, end, token))
    return out


def _back(base: list[Span]) -> Callable[[int, bool], int]:
    """A position of `apply(text, base)` as a position of `text` (inside a replacement: its
    whole span, an end to its end, a start to its start)."""
    there, after = [], []  # where each replacement starts in the masked text; the shift past it
    delta = 0
    for start, end, token in base:
        there.append(start + delta)
        delta += len(token) - (end - start)
        after.append(delta)

    def back(at: int, is_end: bool) -> int:
        k = (bisect.bisect_left(there, at) if is_end else bisect.bisect_right(there, at)) - 1
        if k < 0:
            return at
        start, end, token = base[k]
        if at < there[k] + len(token) or (at == there[k] + len(token) and not is_end):
            return end if is_end else start
        return at - after[k]

    return back


def _key_tails(text: str) -> list[tuple[int, int]]:
    """A key's END whose BEGIN is not there (`tail id_rsa`, a log or digest that starts
    inside the key): the END and the body lines above it are masked. Complete blocks are
    masked before this, so every END left is such a tail."""
    if "-----END " not in text:
        return []
    out: list[tuple[int, int]] = []
    done = seen = 0  # the end of the last END masked, of the last END looked at
    for m in PEM_END.finditer(text):
        lo, seen = max(seen, m.start() - 65536), m.end()  # a body ends at the END below it
        parts = LINE_BREAK_RX.split(text[lo : m.start()])  # line, break, line, ..., line
        if parts[-1].strip(" \t"):
            continue  # something else before the END on its line
        top = len(parts) - 1  # the first part masked
        body = False
        head = 0  # of the line above the body: where its end, a run of base64, begins
        for k in range(len(parts) - 3, -1, -2):  # the lines above, bottom up
            if not BODY_LINE_RX.fullmatch(parts[k]):
                run = RUN_AT_END.search(parts[k])  # e.g. '"private_key": "MIIE...' cut before its BEGIN
                if run:
                    top, head, body = k, run.start(), True
                break
            top = k
            body = body or bool(parts[k].strip(" \t"))
        if not body:
            continue
        while top < len(parts) - 1 and not head and not parts[top].strip(" \t"):
            top += 2  # leading blank lines stay
        start = lo + sum(len(p) for p in parts[:top]) + head
        out.append((max(start, done), m.end()))
        done = m.end()
    return out


def _is_secret(m: re.Match, rule: Rule) -> bool:
    """Is what `rule` matched a secret, not a placeholder (`$VAR`, `{password}`) or an example
    (a token that ends in a run of one character: ghp_xxxx...)?"""
    value = m.group(rule.group)
    if value is None or "[REDACTED:" in value:
        return False
    if rule.group and redactnames.PLACEHOLDER.match(value):
        return False
    return not (rule.prefix and len(set(value[-16:])) == 1)


def findings(text: str) -> list[str]:
    """The kinds of secret found (for reports and tests)."""
    return re.findall(r"\[REDACTED:([\w-]+)\]", redact(text))
