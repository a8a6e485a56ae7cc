"""The agent's process as the loop sees it: the signals passed on to it, signalling its
process groups, and how it ended."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from ptyprocess import PtyProcess

# SIGTSTP reaches us only from `kill`: a typed Ctrl-Z is a byte to the agent, raw. Either
# way the agent stops, and we stop with it (the loop's `_child_stopped`).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP)
HANDLED = (signal.SIGWINCH, signal.SIGCHLD, *FORWARDED)
# A signal that ends the run is passed on; an agent that does not end by it gets the next of
# these, each this long after the one before. SIGINT ends the run only where our stdin is not a
# terminal: there it is the user's Ctrl-C; at a terminal in raw mode Ctrl-C is a key for the
# agent, and a SIGINT sent to us is passed on as that key would be.
KILL_GRACE = 3.0
_LADDERS: dict[int, tuple[int, ...]] = {
    signal.SIGINT: (signal.SIGTERM, signal.SIGKILL),
    signal.SIGTERM: (signal.SIGKILL,),
    signal.SIGHUP: (signal.SIGKILL,),
    signal.SIGQUIT: (signal.SIGKILL,),
}


def escalation(signum: int, now: float, at_terminal: bool) -> list[tuple[float, int]]:
    """After `signum` reached us at `now`: the signals still to send, and when ([]: none, the
    signal does not end the run). `at_terminal`: our stdin is a terminal."""
    if signum == signal.SIGINT and at_terminal:
        return []
    return [(now + KILL_GRACE * (i + 1), then) for i, then in enumerate(_LADDERS.get(signum, ()))]


@dataclass
class Outcome:
    """How the child ended."""

    exit_code: int  # shell convention: 128+N when killed by signal N
    signal: int | None  # the signal that killed the child, if any
    interrupted_by: int | None  # a signal we received and forwarded (SIGTERM, SIGHUP...)


def exit_code_from_status(status: int) -> tuple[int, int | None]:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return 128 + sig, sig
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return 1, None


def signal_groups(proc: PtyProcess, signum: int) -> None:
    """Signal the job shell (which relays it) and, for SIGKILL and SIGCONT that it cannot
    relay in time, the agent's own group, in the foreground of its terminal."""
    groups = [proc.pid]
    if signum in (signal.SIGKILL, signal.SIGCONT):
        try:
            groups.append(os.tcgetpgrp(proc.fd))
        except OSError:
            pass
    for group in dict.fromkeys(groups):
        try:
            os.killpg(group, signum)
        except OSError:
            pass


def ignore(signum, frame) -> None:
    """The handler while the loop runs: signals are read from the wakeup pipe instead."""


def drain_pipe(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except (BlockingIOError, InterruptedError):
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)
