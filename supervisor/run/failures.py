"""What failed in the recorder, by part: said once as it happens, counted each time (the
detail in recorder.err, which is the recorder's stderr), and said again with its count as
the session ends if it failed more than once. The rest of the session goes on."""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from ..store.damage import damaged, is_damage

TRACEBACKS = 20  # a part's failures written out whole to recorder.err; past that, counted


class Failures:
    def __init__(self, report: Callable[[str], None], db_path: Path, err_path: Path):
        self._report, self._db_path, self._err_path = report, db_path, err_path
        self.counts: dict[str, int] = {}  # each part that failed: how often

    def __call__(self, where: str, exc: BaseException) -> None:
        count = self.counts[where] = self.counts.get(where, 0) + 1
        if count <= TRACEBACKS:  # (a full disk may refuse it)
            with contextlib.suppress(OSError):
                print(f"supervise: {where} failed (#{count}):", file=sys.stderr)
                traceback.print_exception(exc, file=sys.stderr)
        if count > 1:
            return
        if is_damage(exc):  # said as every command says it, with the fix
            said = damaged(self._db_path)
            self._report(f"supervise: {where} failed: {said.message}; the session goes on (hint: {said.hint})")
            return
        self._report(f"supervise: {where} failed ({exc}); the session goes on")

    def again(self) -> list[str]:
        """One line for each part that failed more than once (the first time was said then)."""
        return [f"supervise: {where} failed {n} times in this session; see {self._err_path}" for where, n in self.counts.items() if n > 1]
