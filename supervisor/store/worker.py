"""A thread of a recorder that keeps part of the database up to date as the session runs (the
search index, the vectors of search by meaning): it owns a connection of its own, sleeps
until woken, and as the session ends makes a last pass; what fails is said as its part's."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from .database import Store


class Worker:
    PART = "worker"  # what a failure is said as
    NAME = "supervise-worker"  # the thread's

    def __init__(self, db_path: str, fail: Callable[[str, BaseException], None]):
        self.db_path = db_path
        self._fail = fail
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._work, name=self.NAME, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def finish(self, timeout: float | None = None) -> None:
        """The session has ended: its last pass, then the thread ends."""
        self._stopping.set()
        self._wake.set()
        self._thread.join(timeout)

    def _work(self) -> None:
        try:
            store = Store(Path(self.db_path))
        except Exception as exc:
            return self._fail(self.PART, exc)
        try:
            self._run(store)
        finally:
            store.close()

    def _run(self, store: Store) -> None:
        """The passes, until `_stopping` is set, and the last one."""
        raise NotImplementedError
