"""An agent CLI as a summary backend: what it answers (`Answer`) or why not (`Failed`), and
how it is run headless: the model input on stdin, its output read whole (up to a cap), one
deadline for all of it, nothing left running after it.

The CLI runs in a session of its own (a process group) so that past the deadline it is
killed with whatever it started (node, a helper, an MCP server), and the group is killed
again once it has exited: a summary must never leave a process behind in the recorder.

It runs in a fresh, empty, private directory, never the user's project: a CLI reads its
project's instructions and settings from where it starts, and hooks or servers configured
there must not run for a summary, nor the project's instructions reach the summary model.
Messages are kept as the program said them, cut to a line; they are made plain where they
are stored or shown.
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
from typing import Protocol

# Not ours to pass on to a CLI run for a summary: the supervised session's id.
DROPPED_ENV = ("SUPERVISE_SESSION_ID",)
# The most a CLI may print: a context is a few KB of JSON, the wrapper around it a few more.
MAX_OUTPUT = 4 << 20
CHUNK = 1 << 16


class Settings(Protocol):
    """What a summary backend reads of the `[summary]` settings."""

    model: str
    cli_models: Mapping[str, str]
    timeout: float


@dataclass
class Answer:
    """What an agent CLI run headless answered."""

    data: object  # the context as the model filled it; None when it filled nothing
    model: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    missing: str = "no answer"  # when data is None: what came instead


class Failed(Exception):
    """The backend gave no answer to use (an error, a limit, a timeout): the reason, for the
    context row's `error`."""


@dataclass
class Finished:
    """An agent CLI's headless run, ended."""

    returncode: int
    stdout: str
    stderr: str


def run(argv: list[str], stdin: str, ends: float, env: Mapping[str, str], label: str, timeout: float) -> Finished:
    """`argv` given `stdin`, over by `ends` (time.monotonic()); `label` and `timeout` name it
    in the reasons given (Failed) when it cannot be run, runs past `ends` or prints too much."""
    with tempfile.TemporaryDirectory(prefix="supervise-summary-") as cwd:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
            )
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
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    assert stdin is not None and stdout is not None and stderr is not None  # started with three pipes
    got: dict[int, list[bytes]] = {stdout.fileno(): [], stderr.fileno(): []}
    total = 0
    with selectors.DefaultSelector() as sel:
        sel.register(stdout.fileno(), selectors.EVENT_READ)
        sel.register(stderr.fileno(), selectors.EVENT_READ)
        if data:
            os.set_blocking(stdin.fileno(), False)
            sel.register(stdin.fileno(), selectors.EVENT_WRITE)
        else:
            stdin.close()
        view = memoryview(data)
        while sel.get_map():
            left = ends - time.monotonic()
            if left <= 0:
                raise Failed(f"{label} timed out after {timeout:g}s")
            for key, _ in sel.select(left):
                fd = key.fd
                if fd not in got:  # stdin
                    try:
                        view = view[os.write(fd, view[:CHUNK]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # it stopped reading; what it printed says why
                        view = view[:0]
                    if not view:
                        sel.unregister(fd)
                        stdin.close()
                    continue
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    sel.unregister(fd)
                    continue
                total += len(chunk)
                if total > MAX_OUTPUT:
                    raise Failed(f"{label} printed more than {MAX_OUTPUT >> 20} MB")
                got[fd].append(chunk)
    return b"".join(got[stdout.fileno()]), b"".join(got[stderr.fileno()])


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


def whole(value) -> int:
    """A token count from a CLI's report: a positive whole number, else 0."""
    return value if isinstance(value, int) and value > 0 else 0


def first_line(text: str, limit: int = 200) -> str:
    """The gist of another program's message: one line, bounded."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " ".join(lines)[:limit]
