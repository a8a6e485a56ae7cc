"""Run an agent CLI headless: the model input on stdin, its output read whole (up to a cap),
one deadline for all of it, nothing left running after it.

The CLI runs in a session of its own (a process group) so that past the deadline it is
killed with whatever it started (node, a helper, an MCP server), and the group is killed
again once it has exited: a summary must never leave a process behind in the recorder.

It runs in a fresh, empty, private directory, never the user's project: a CLI reads its
project's instructions and settings from where it starts (CLAUDE.md and .claude/, AGENTS.md,
GEMINI.md and .gemini/), and hooks or servers configured there must not run for a summary,
nor the project's instructions reach the summary model.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass

from . import Failed

# The most a CLI may print: a context is a few KB of JSON, the wrapper around it a few more.
MAX_OUTPUT = 4 << 20
CHUNK = 1 << 16


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run(argv: list[str], stdin: str, ends: float, env: Mapping[str, str], label: str, timeout: float) -> Finished:
    """`argv` given `stdin`, over by `ends` (time.monotonic()); `label` and `timeout` name it
    in the reasons given (Failed) when it cannot be run, runs past `ends` or prints too much."""
    with tempfile.TemporaryDirectory(prefix="supervise-summary-") as cwd:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=dict(env), cwd=cwd, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise Failed(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        with proc:
            try:
                out, err = _exchange(proc, stdin.encode(), ends, label, timeout)
                try:
                    proc.wait(max(0.0, ends - time.monotonic()))
                except subprocess.TimeoutExpired:  # it closed its output but went on
                    raise Failed(f"{label} timed out after {timeout:g}s") from None
            finally:
                _kill_group(proc)
    return Finished(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


def _exchange(proc: subprocess.Popen, data: bytes, ends: float, label: str, timeout: float) -> tuple[bytes, bytes]:
    """Write `data` to the child's stdin while reading its stdout and stderr, until both end."""
    got: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    total = 0
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout.fileno(), selectors.EVENT_READ)
        sel.register(proc.stderr.fileno(), selectors.EVENT_READ)
        if data:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        view = memoryview(data)
        while sel.get_map():
            left = ends - time.monotonic()
            if left <= 0:
                raise Failed(f"{label} timed out after {timeout:g}s")
            for key, _ in sel.select(left):
                fd = key.fd
                if fd not in got:  # stdin
                    try:
                        view = view[os.write(fd, view[:CHUNK]):]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # it stopped reading; what it printed says why
                        view = view[:0]
                    if not view:
                        sel.unregister(fd)
                        proc.stdin.close()
                    continue
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    sel.unregister(fd)
                    continue
                total += len(chunk)
                if total > MAX_OUTPUT:
                    raise Failed(f"{label} printed more than {MAX_OUTPUT >> 20} MB")
                got[fd].append(chunk)
    return b"".join(got[proc.stdout.fileno()]), b"".join(got[proc.stderr.fileno()])


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the child's process group (it leads it), then reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
        pass
