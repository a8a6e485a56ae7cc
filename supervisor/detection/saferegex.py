"""Regexes from pattern files, which users write: one that backtracks catastrophically
(`(a+)+$` on a long line of a's takes longer than the universe) must not hang the text log,
detection or a digest. They are matched with the `regex` engine, which can stop a match at a
time limit; a pattern that reaches it is turned off for the rest of the process and says so
(`slow`), and matches nothing from then on.

`re` syntax is kept (the `regex` engine's VERSION0 is `re`-compatible). A pattern is
checked with `re` when it is made (the syntax users write, and its error messages), and
compiled by `regex` when it is first used: the shipped pattern files are checked by the
tests instead, so that choosing an agent's pattern set at start-up compiles nothing
(compiling them all delayed `supervise -- CMD` before the agent started).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A screen line is searched in microseconds; past this a pattern is broken, not slow. Longer
# texts (a joined 10 MB line, a whole log for the digest) get time in proportion.
LIMIT = 0.1  # seconds, plus:
PER_MB = 1.0  # seconds per MB of text searched

error = re.error
HINT = "its regex backtracks; make its repeats possessive or anchored"


def turned_off(name: str, limit: float, where: str) -> str:
    """What a pattern that went over its time limit on `where` is told as (then the HINT)."""
    return f"pattern {name} took over {limit:.1f} s on {where} and is turned off"


class Guarded:
    """A pattern with the few methods supervise uses, each under a time limit. `check`: its
    syntax is checked now (a `re.error` if it is wrong), else when first used."""

    def __init__(self, pattern: str, flags: int = 0, name: str = "", check: bool = True):
        self.pattern, self.flags, self.name = pattern, flags, name
        self._groupindex = dict(re.compile(pattern, flags).groupindex) if check else None
        self._compiled = None
        self.slow: str | None = None  # why it was turned off
        self.limit_hit = 0.0  # the time limit it went over, in seconds

    @property
    def groupindex(self) -> dict:
        if self._groupindex is None:
            self._groupindex = dict(re.compile(self.pattern, self.flags).groupindex)
        return self._groupindex

    @property
    def _rx(self):
        if self._compiled is None:
            import regex

            self._compiled = regex.compile(self.pattern, _flags(self.flags))
        return self._compiled

    def search(self, text: str, pos: int = 0):
        if self.slow is not None:
            return None
        try:
            return self._rx.search(text, pos, timeout=_limit(text))
        except TimeoutError:
            self._turn_off(text)
            return None

    def finditer(self, text: str) -> Iterator:
        if self.slow is not None:
            return
        try:
            yield from self._rx.finditer(text, timeout=_limit(text))
        except TimeoutError:
            self._turn_off(text)

    def with_flags(self, flags: int) -> "Guarded":
        return Guarded(self.pattern, self.flags | flags, self.name, check=self._groupindex is not None)

    def _turn_off(self, text: str) -> None:
        self.limit_hit = _limit(text)
        self.slow = f"{turned_off(self.name or repr(self.pattern), self.limit_hit, f'{len(text):,} characters')} (hint: {HINT})"

    def __repr__(self) -> str:
        return f"Guarded({self.pattern!r})"


def compile(pattern: str, flags: int = 0, name: str = "", check: bool = True) -> Guarded:  # noqa: A001 - the re-like name
    return Guarded(pattern, flags, name, check)


def _limit(text: str) -> float:
    return LIMIT + PER_MB * len(text) / 1e6


def _flags(flags: int) -> int:
    import regex

    out = 0
    for flag, same in (
        (re.IGNORECASE, regex.IGNORECASE),
        (re.MULTILINE, regex.MULTILINE),
        (re.DOTALL, regex.DOTALL),
        (re.VERBOSE, regex.VERBOSE),
    ):
        if flags & flag:
            out |= same
    return out
