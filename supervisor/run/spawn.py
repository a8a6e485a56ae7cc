"""Starting the agent: its program found as exec would find it, run by its job shell on a
PTY of its own, with a stdin pipe of its own where its profile asks for one."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping

from ptyprocess import PtyProcess

from ..terminal import jobshell


def spawn(
    argv: list[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    size: tuple[int, int],
    stdin_fd: int | None,
    shell: jobshell.Started | None = None,
) -> tuple[PtyProcess, int | None]:
    """The agent's process (its job shell's), and the write end of its stdin pipe (None: its
    stdin is its terminal). `stdin_fd`: ours, when the agent reads a stdin that is not a
    terminal in the mode its command line asks for; it gets a pipe if ours is not a
    terminal. `shell`: a job shell started already (else one is started here). Raises
    OSError as exec would (FileNotFoundError: no such program)."""
    program = find_program(argv[0], env, cwd)
    shell = shell or jobshell.start(stdin_fd, forked=False)
    proc = PtyProcess(shell.pid, shell.master)
    cols, rows = size
    try:
        proc.setwinsize(rows, cols)  # before the agent starts: it reads its size once, at first
    except OSError:
        pass
    # Its close (at our exit) sleeps this long before it looks whether the child still runs:
    # by then the loop has reaped it, and the user would wait for nothing.
    proc.delayafterclose = 0.0
    return proc, shell.launch(program, argv, cwd, dict(env), reads_stdin=stdin_fd is not None)


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
