"""A session's last round: its recorder makes it after the user has their shell back, so a
command that needs it (`supervise context`, `resume`) waits for that recorder while it is at
work, and makes the round itself if the session ended without it (its recorder killed, or
out of its grace, however busy the machine was).

The recorder holds a lock on LOCK_NAME in the session's folder until it is done (the kernel
lets go of it however the process ends): while it is held, the last round may yet come.
Whether a round covers what the session showed is read from what it read (the log's offset
it reached) and from when the recording was last written, never from a grace period.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ..store.database import ACTIVE, supervisor_alive

LOCK_NAME = "recorder.lock"
WAIT_STEP = 0.05  # seconds between looks at the lock while waiting for a recorder


def hold(folder: Path) -> int | None:
    """Take the recorder's lock on the session's folder: its descriptor, to close once the
    last round is made (the process's end closes it anyway). None if there is no lock to be
    had (a folder that cannot be written): the recorder goes on without it."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # (a command looking holds it for an instant)
    except OSError:
        os.close(fd)
        return None
    return fd


def folder(session: dict) -> Path | None:
    return Path(session["cast_path"]).parent if session.get("cast_path") else None


def at_work(session: dict) -> bool:
    """Is the session's recorder still running (its last round may yet come)?"""
    where = folder(session)
    if where is None:
        return False
    try:
        fd = os.open(where / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False  # never taken: no recorder, or one from before the lock
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def ended(session: dict) -> bool:
    """The session is over: stored so, or its supervisor is gone (killed)."""
    return session["status"] != ACTIVE or not supervisor_alive(session.get("pid"))


def wait(session: dict, timeout: float, now: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Wait, at most `timeout` seconds, for an ended session's recorder to be done; whether
    it is (a running session's recorder is not waited for). The recorder gives itself the
    same time once its supervisor is gone."""
    if not ended(session):
        return False
    deadline = now() + timeout
    while at_work(session):
        if now() >= deadline:
            return False
        sleep(WAIT_STEP)
    return True


def stale(row: dict, session: dict) -> bool:
    """Did the session show more after round `row` read it? A session-end round read it all;
    otherwise, its text log grew past where the round stopped, or its recording was written
    after the round began (a killed session's log may lack the end its recording has)."""
    if row["trigger"] == "session_end":
        return False
    offset = row.get("log_offset")
    if offset is not None and _size(session.get("log_path")) > offset:
        return True
    began = datetime.fromisoformat(row["created"]).timestamp() - (row.get("duration_ms") or 0) / 1000
    return _written(session.get("cast_path")) > began


def showed(session: dict) -> bool:
    """Did the session show anything (a round of it has something to read)?"""
    if _size(session.get("log_path")) > 0:
        return True
    try:
        with open(session["cast_path"], "rb") as fh:
            fh.readline()  # the header
            return bool(fh.read(1))
    except (OSError, KeyError, TypeError):
        return False


def _size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def _written(path: str | None) -> float:
    try:
        return os.stat(path).st_mtime if path else 0.0
    except OSError:
        return 0.0
