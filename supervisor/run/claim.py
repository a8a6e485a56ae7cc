"""One supervisor at a time carries a session on: its own, while it runs, or the one that
resumes it. The claim is an exclusive lock on a file in the session's folder, held for the
supervisor's life (the kernel lets it go however the process ends), with the holder's pid
written in it for the one that is refused.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from ..errors import SuperviseError
from ..paths import ensure_private_dir
from ..store.database import ACTIVE, Store, supervisor_alive

LOCK_NAME = "supervisor.lock"
HOLDER_TRIES, HOLDER_PAUSE = 40, 0.025  # up to a second for the holder to write its pid


class Claimed(SuperviseError):
    """Another live supervisor carries the session on."""

    def __init__(self, session_id: str, pid: int | None):
        self.pid = pid
        who = f"supervise pid {pid}" if pid else "another supervise"
        end = f", or `kill {pid}` to end it" if pid else ""
        super().__init__(
            f"session {session_id} is running under {who}",
            f"switch to the terminal it runs in{end}; --force resumes it anyway",
            exit_code=1,
        )


def claim_parent(store: Store, parent_id: str, folder: Path) -> int:
    """Carry on the parent session (`folder` its folder) only if no live supervisor does: its
    own (a session run by an older supervise holds no claim, so its row is asked too) or
    another resume's."""
    parent = store.get_session(parent_id)
    if parent["status"] == ACTIVE and parent["pid"] != os.getpid() and supervisor_alive(parent["pid"]):
        raise Claimed(parent_id, parent["pid"])
    return claim(parent_id, ensure_private_dir(folder))


def claim(session_id: str, folder: Path) -> int:
    """Take the session's claim: the open lock file's descriptor, to keep open while the
    session is carried on; Claimed if another supervisor holds it."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = holder(fd)
        os.close(fd)
        raise Claimed(session_id, pid) from None
    except OSError:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def holder(fd: int) -> int | None:
    """The pid the holder wrote; it writes it just after taking the lock, so a claim refused
    in between waits a moment for it."""
    for _ in range(HOLDER_TRIES):
        try:
            pid = int(os.pread(fd, 32, 0).decode().strip() or 0)
        except (OSError, ValueError):
            return None
        if pid:
            return pid
        time.sleep(HOLDER_PAUSE)
    return None
