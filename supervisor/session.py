"""Run one supervised session: store row, child under a PTY, recorder, terminal restore."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ptyprocess import PtyProcess

from . import asciicast, paths, tty
from .errors import SuperviseError
from .pty_loop import PtyLoop
from .recorder import Recorder, RecorderConfig
from .store import COMPLETED, FAILED, INTERRUPTED, Store


@dataclass
class RunOptions:
    argv: list[str]
    name: str | None = None
    agent: str | None = None
    record_input: bool = False
    cwd: str = field(default_factory=os.getcwd)
    parent_id: str | None = None
    emulator: str = "avt"


def agent_name(argv: list[str], explicit: str | None) -> str:
    """The pattern set to use: --agent, else the command's basename (`/usr/bin/claude` -> `claude`)."""
    if explicit:
        return explicit
    return Path(argv[0]).name


def run(
    opts: RunOptions,
    *,
    env: Mapping[str, str] | None = None,
    stdin_fd: int | None = 0,
    stdout_fd: int | None = 1,
    stderr=None,
) -> int:
    env = dict(os.environ if env is None else env)
    stderr = stderr or sys.stderr
    store = Store.open_default(env)
    command = shlex.join(opts.argv)
    session = store.create_session(
        name=opts.name,
        command=command,
        argv=opts.argv,
        agent=agent_name(opts.argv, opts.agent),
        cwd=opts.cwd,
        pid=os.getpid(),
        parent_id=opts.parent_id,
    )
    sid = session["id"]
    try:
        sdir = paths.ensure_private_dir(paths.session_dir(sid, env))
    except SuperviseError:
        store.finish_session(sid, FAILED, 1)
        raise
    cast_path, log_path = sdir / "session.cast", sdir / "session.log"
    store.update_session(sid, cast_path=str(cast_path), log_path=str(log_path))

    executable = shutil.which(opts.argv[0], path=env.get("PATH", os.defpath))
    if executable is None:
        store.finish_session(sid, FAILED, 127)
        store.add_events(sid, [_event("spawn_failed", {"error": "command not found", "command": opts.argv[0]})])
        raise SuperviseError(
            f"command not found: {opts.argv[0]}",
            "check the spelling, or give the full path after `--`",
            exit_code=127,
        )

    cols, rows = tty.size(stdout_fd, stdin_fd, env=env)
    child_env = {**env, "SUPERVISE_SESSION_ID": sid}
    child_env.setdefault("TERM", "xterm-256color")
    try:
        proc = PtyProcess.spawn(opts.argv, cwd=opts.cwd, env=child_env, dimensions=(rows, cols))
    except (OSError, FileNotFoundError) as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        store.finish_session(sid, FAILED, code)
        store.add_events(sid, [_event("spawn_failed", {"error": str(exc)})])
        raise SuperviseError(f"cannot run {opts.argv[0]}: {exc}", exit_code=code) from exc
    store.update_session(sid, child_pid=proc.pid)

    header = asciicast.Header(
        width=cols,
        height=rows,
        timestamp=int(time.time()),
        command=command,
        title=opts.name,
        env={k: env[k] for k in ("TERM", "SHELL") if k in env},
    )
    recorder = Recorder(
        RecorderConfig(sid, store.path, cast_path, log_path, header, opts.emulator),
        on_error=lambda msg: print(msg, file=stderr),
    )
    recorder.start()
    recorder.event(0.0, "start", {"argv": opts.argv, "cols": cols, "rows": rows, "cwd": opts.cwd})
    loop = PtyLoop(
        proc,
        recorder,
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        size=lambda: tty.size(stdout_fd, stdin_fd, env=env),
        record_input=opts.record_input,
    )
    outcome = None
    try:
        with tty.raw(stdin_fd):
            try:
                outcome = loop.run()
            finally:
                recorder.close(timeout=30)
                _restore_modes(stdout_fd, recorder.modes.reset_sequence())
    finally:
        if outcome is None:  # an exception escaped the loop: the child must not outlive us
            _terminate(proc)
            store.finish_session(sid, FAILED, 1)
    detail = {"exit_code": outcome.exit_code}
    if outcome.signal:
        detail["signal"] = signal.Signals(outcome.signal).name
    store.add_events(sid, [_event("exit", detail, offset=time.monotonic() - loop.start)])
    if outcome.interrupted_by is not None:
        status = INTERRUPTED
    else:
        status = COMPLETED if outcome.exit_code == 0 else FAILED
    store.finish_session(sid, status, outcome.exit_code)
    store.close()
    how = f"exit {outcome.exit_code}"
    if outcome.signal:
        how = f"killed by {signal.Signals(outcome.signal).name}, exit {outcome.exit_code}"
    print(f"supervise: session {sid} {status} ({how}) · resume with: supervise resume {sid}", file=stderr)
    return outcome.exit_code


def _event(kind: str, detail: dict, offset: float = 0.0):
    from .store import Event, utcnow

    return Event(kind, detail, offset, utcnow())


def _restore_modes(stdout_fd: int | None, sequence: str) -> None:
    if not sequence or stdout_fd is None or not os.isatty(stdout_fd):
        return
    try:
        os.write(stdout_fd, sequence.encode())
    except OSError:
        pass


def _terminate(proc: PtyProcess) -> None:
    try:
        proc.terminate(force=True)
    except Exception:
        pass
