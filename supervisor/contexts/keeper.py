"""The context keeper: makes session contexts in the recorder process, on a thread of its
own, off every other thread's way.

When: as a compaction starts (the state before it is gone), when one finishes with no
fresh context (one made, or being made, within CONTEXT_FRESH), every few minutes or so much
new output, at the end of the session, and, for a resumed session, the resumed one's at the
start. One at a time; triggers that arrive meanwhile are folded into the next run. It is
given what it needs (the live screen, the output count, the pattern set, what to do with a
new context); it knows nothing of the recorder.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import CONTEXT_FRESH, Settings
from ..detection.patterns import PatternSet
from ..store.database import Store

_STOP = object()
CHECK_EVERY = 5.0  # seconds between checks for a periodic context (the thread's only wake-up)


@dataclass
class Session:
    """Which session the keeper works for, and where its files are."""

    db_path: str
    session_id: str
    transcript_dir: str | None = None  # the agent's transcript folder
    resume_from: str | None = None  # the session this one resumes
    handoff_from: str | None = None  # ... with another agent: the one that did the work


class ContextKeeper(threading.Thread):
    def __init__(
        self,
        session: Session,
        settings: Settings,
        *,
        screen: Callable[[], list[str]],
        output_chars: Callable[[], int],
        pattern_set: Callable[[], PatternSet | None],
        made: Callable[[dict, str], None],
        fail: Callable[[str, BaseException], None],
    ):
        super().__init__(name="supervise-contexts", daemon=True)
        self.session = session
        self.settings = settings
        self._screen = screen
        self._output_chars = output_chars
        self._pattern_set = pattern_set
        self._made = made
        self._fail = fail
        self._wanted: queue.SimpleQueue = queue.SimpleQueue()
        self._last_made: float | None = None
        self._asked: float | None = None  # when a context was last asked for (made or not yet)
        self._chars_at_last = 0
        self._store: Store | None = None

    def want(self, trigger: str) -> None:
        self._asked = time.monotonic()
        self._wanted.put(trigger)

    def on_event(self, kind: str, t: float, detail: dict) -> None:
        if kind == "compaction_started":
            self.want(kind)
        elif kind == "compaction_finished" and not self._fresh():
            self.want(kind)

    def _fresh(self) -> bool:
        """A context made lately, or one asked for or being made (in flight): it covers a
        compaction that just finished. (Without the second, a compaction that finished while
        its start's context was being made cost a second model call 55 ms later.)"""
        now = time.monotonic()
        return any(t is not None and now - t <= CONTEXT_FRESH for t in (self._last_made, self._asked))

    def run(self) -> None:
        # Imported now, in the background: the first round is often a compaction's, which
        # an agent's hook waits for.
        from . import rounds  # noqa: F401

        started = time.monotonic()
        while True:
            try:
                trigger = self._wanted.get(timeout=CHECK_EVERY)
            except queue.Empty:
                trigger = self._periodic(started)
                if trigger is None:
                    continue
            if trigger is _STOP:
                return
            if trigger == "resume":
                self.resume()
                continue
            while True:  # fold what piled up meanwhile into this run
                try:
                    extra = self._wanted.get_nowait()
                except queue.Empty:
                    break
                if extra is _STOP or extra == "resume":
                    self._wanted.put(extra)
                    break
            self.make(trigger)

    def _periodic(self, started: float) -> str | None:
        s = self.settings
        since = self._last_made or started
        if time.monotonic() - since < s.min_seconds:
            return None
        new_chars = self._output_chars() - self._chars_at_last
        if s.every_seconds and time.monotonic() - since >= s.every_seconds and new_chars:
            return "periodic"
        if s.every_chars and new_chars >= s.every_chars:
            return "periodic"
        return None

    def make(self, trigger: str) -> dict | None:
        """This session's next round, from what it showed since the last (and the screen
        now, unless it has ended: by then the final screen is in the log)."""
        from . import rounds

        self._asked = time.monotonic()
        try:
            session = self._db().get_session(self.session.session_id)
            screen = None if trigger == "session_end" else self._screen()
            self._chars_at_last = self._output_chars()
            transcript_dir = Path(self.session.transcript_dir) if self.session.transcript_dir else None
            row = rounds.make(
                self._db(),
                session,
                trigger,
                self.settings,
                screen=screen,
                live=True,
                transcript_dir=transcript_dir,
                pattern_set=self._pattern_set(),
            )
        except Exception as exc:
            self._fail("session context", exc)
            return None
        self._last_made = time.monotonic()
        self._made(row, session["id"])
        return row

    def resume(self) -> dict | None:
        """The resumed session's latest context, made anew first if the session went on
        after it (its last output is newer): that is what the new session is given."""
        from . import rounds

        whose = self.session.resume_from  # the session the context row belongs to
        try:
            assert whose is not None  # wanted only for a session that resumes one
            store = self._db()
            row = rounds.latest_or_new(store, store.get_session(whose), self.settings, os.environ)
            if self.session.handoff_from is not None:  # another agent's work: the new session's own first round
                whose = self.session.session_id
                row = rounds.handed_over(store, row, whose, self.session.handoff_from, self.settings)
        except Exception as exc:
            self._fail("session context", exc)
            return None
        self._made(row, whose)
        return row

    def _db(self) -> Store:
        """This thread's own connection, opened on first use."""
        if self._store is None:
            self._store = Store(Path(self.session.db_path))
        return self._store

    def stop(self) -> None:
        self._wanted.put(_STOP)
        self.join()
