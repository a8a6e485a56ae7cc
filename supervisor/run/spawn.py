"""Starting the agent: its program found as exec would find it, run under the job shell on a
PTY of its own, with a stdin pipe of its own where its profile asks for one."""

from __future__ import annotations

import errno
import functools
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from ptyprocess import PtyProcess

# The agent's session leader, so that Ctrl-Z works in the agent (see jobshell.py).
JOBSHELL = str(Path(__file__).resolve().parent.parent / "terminal" / "jobshell.py")


def spawn(
    argv: list[str], *, cwd: str, env: Mapping[str, str], size: tuple[int, int], stdin_fd: int | None
) -> tuple[PtyProcess, int | None]:
    """The agent's process, and the write end of its stdin pipe (None: its stdin is its
    terminal). `stdin_fd`: ours, when the agent reads a stdin that is not a terminal in the
    mode its command line asks for; it gets a pipe if ours is not a terminal. Raises OSError
    as exec would (FileNotFoundError: no such program)."""
    pipe = os.pipe() if stdin_fd is not None and not os.isatty(stdin_fd) else ()
    cols, rows = size
    try:
        program = find_program(argv[0], env, cwd)
        proc = PtyProcess.spawn(
            [sys.executable, "-S", "-P", JOBSHELL, program, *argv],
            cwd=cwd,
            env=dict(env),
            dimensions=(rows, cols),
            pass_fds=pipe[:1],
            preexec_fn=functools.partial(_in_child, pipe[0] if pipe else None),
        )
    except OSError:
        for fd in pipe:
            os.close(fd)
        raise
    # Its close (at our exit) sleeps this long before it looks whether the child still runs:
    # by then the loop has reaped it, and the user would wait for nothing.
    proc.delayafterclose = 0.0
    if not pipe:
        return proc, None
    os.close(pipe[0])  # the agent's end is the agent's; ours is the PTY loop's to close
    return proc, pipe[1]


def find_program(name: str, env: Mapping[str, str], cwd: str | None) -> str:
    """The agent's program as exec would find it (the job shell between us runs it)."""
    if "/" in name:
        path = os.path.join(cwd or os.getcwd(), name)
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return path
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "command not found", name)
    return found


def _in_child(stdin: int | None) -> None:
    """In the agent's process before exec. Python ignores SIGPIPE and SIGXFSZ, and an ignored
    signal survives exec: give the child the defaults a shell would (else `yes | head`
    complains of a broken pipe). A stdin pipe of its own replaces the terminal as fd 0."""
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if stdin is not None:
        os.dup2(stdin, 0)
