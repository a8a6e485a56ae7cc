"""Telling the user when an agent needs them: a command of theirs, run on a state change.

With several agents running, the one waiting for a permission answer, the one that is done,
the one that hit its usage limit and the one compacting are the ones to look at. `Notices`
decides which changes are worth a notice (pure); `Runner` runs the user's command for each
(`[notify] command`, its placeholders {id} {name} {agent} {state} {reset_at} filled in, each
quoted for the shell: a session's name or a limit's text cannot inject a command), in a
thread of its own, killed past its time limit, so a slow or failing command never holds up
the session. A failure is reported once.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Callable

from ..config import Notify
from ..plaintext import plain
from .states import State

PLACEHOLDERS = ("id", "name", "agent", "state", "reset_at")


class Notices:
    """Which state changes deserve a notice: to `permission`, to `limited`, to `compacting`,
    and to `waiting` after working for `done_after` seconds or more (done). One per session
    and state within `debounce` seconds (a dialog answered and asked again at once is one)."""

    def __init__(self, settings: Notify):
        self.settings = settings
        self._working_since: float | None = None
        self._last: dict[str, float] = {}  # state -> when it was last noticed

    def change(self, state: State) -> str | None:
        """The notice's state for this change (None: no notice)."""
        worked = self._working_since
        self._working_since = state.since if state.name == "working" else (None if state.name == "waiting" else worked)
        name = state.name
        if name == "waiting":
            if worked is None or state.since - worked < self.settings.done_after:
                return None
            name = "done"
        elif name not in ("permission", "limited", "compacting"):
            return None
        last = self._last.get(name)
        if last is not None and state.since - last < self.settings.debounce:
            return None
        self._last[name] = state.since
        return name


def command_line(template: str, values: dict) -> str:
    """The user's command with each placeholder replaced by its value, quoted for the shell
    (and stripped of control characters)."""
    out = template
    for key in PLACEHOLDERS:
        out = out.replace("{" + key + "}", shlex.quote(plain(str(values.get(key) or ""), newlines=False)))
    return out


class Runner:
    """Runs notice commands one at a time, off the caller's thread."""

    def __init__(self, settings: Notify, fail: Callable[[str, BaseException], None]):
        self.settings = settings
        self._fail = fail
        self._queue: list[str] = []
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="supervise-notify", daemon=True)
        self._thread.start()

    def notify(self, values: dict) -> None:
        if not self.settings.command:
            return
        with self._cond:
            if len(self._queue) < 16:  # a command slower than the changes: the newest wait, the rest go
                self._queue.append(command_line(self.settings.command, values))
                self._cond.notify()

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue)
                line = self._queue.pop(0)
            try:
                self._run(line)
            except Exception as exc:
                self._fail("notify command", exc)

    def _run(self, line: str) -> None:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", line], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        try:
            _, err = proc.communicate(timeout=self.settings.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError(f"`{line}` still ran after {self.settings.timeout:.0f} s; it was stopped") from None
        if proc.returncode != 0:
            said = plain(err.decode("utf-8", "replace"), newlines=False).strip()[:200]
            raise RuntimeError(f"`{line}` exited with {proc.returncode}" + (f": {said}" if said else ""))
