"""Run one supervised session: store row, child under a PTY, recorder, terminal restore."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..channel import Compacted, Done, Error, Inbox, Injected, Message, Modes, Outbox, RecorderConfig
from ..detection import patterns, transcript
from ..detection.patterns import PatternSet
from ..errors import SuperviseError
from ..giveback import claude
from ..giveback.hook import SOCKET_ENV
from ..store.database import ACTIVE, COMPLETED, FAILED, INTERRUPTED, Store, supervisor_alive, utcnow
from ..store.events import EventSink
from ..terminal import tty
from ..terminal.pty_loop import PtyLoop
from .claim import Claimed, claim
from .spawn import spawn

# How long the supervisor waits for the recorder at the end before leaving it to finish alone.
RECORDER_WAIT = 15.0


@dataclass
class RunOptions:
    argv: list[str]
    name: str | None = None
    agent: str | None = None
    record_input: bool = False
    cwd: str = field(default_factory=os.getcwd)
    parent_id: str | None = None
    handoff_from: str | None = None  # the parent was another agent's session: that agent
    emulator: str = "avt"
    pattern_files: list[str] = field(default_factory=list)
    inject: str = "auto"  # give the agent its context back after compaction / on resume: auto | type | off
    summary_backend: str | None = None  # --summary-backend; None: the config's (it is not stored: resume takes its own)
    on_limit: str | None = None  # --on-limit; None: the config's (not stored either)
    notify: str | None = None  # --notify; None: the config's (not stored either)
    force: bool = False  # resume the parent even while another supervisor carries it on

    @property
    def stored(self) -> dict:
        """What `supervise resume` needs to run the session again the same way."""
        return {"record_input": self.record_input, "emulator": self.emulator,
                "pattern_files": [str(Path(p).resolve()) for p in self.pattern_files], "inject": self.inject}


def choose_patterns(opts: RunOptions, env: Mapping[str, str]) -> tuple[str, PatternSet | None]:
    """The agent name and its pattern set: --agent, else the command's name
    (`/usr/bin/claude` selects the set whose commands include `claude`). Every pattern file
    is validated first: a broken one stops the session before it starts."""
    sets = patterns.load_all([Path(p) for p in opts.pattern_files], env)
    wanted = opts.agent or Path(opts.argv[0]).name
    chosen = patterns.select(sets, wanted)
    if opts.agent and chosen is None:
        raise SuperviseError(
            f"no pattern set for agent '{opts.agent}'",
            f"use one of: {', '.join(sorted(sets))}, or add a file to {patterns.user_dir(env)}",
            exit_code=2,
        )
    return (chosen.agent if chosen else wanted), chosen


def run(
    opts: RunOptions,
    *,
    env: Mapping[str, str] | None = None,
    stdin_fd: int | None = 0,
    stdout_fd: int | None = 1,
    stderr=None,
) -> int:
    """Run the agent under supervision; its exit code. What the run makes for itself alone
    (the hook's socket folder) is removed on every way out."""
    with contextlib.ExitStack() as cleanup:
        return _run(opts, cleanup, env, stdin_fd, stdout_fd, stderr)


def _run(opts: RunOptions, cleanup: contextlib.ExitStack, env: Mapping[str, str] | None, stdin_fd: int | None,
         stdout_fd: int | None, stderr) -> int:
    env = dict(os.environ if env is None else env)
    stderr = stderr or sys.stderr
    agent, pattern_set = choose_patterns(opts, env)
    if pattern_set is None and agent in patterns.KNOWN_AGENTS:
        print(
            f"supervise: no pattern set for {agent} ({patterns.KNOWN_AGENTS[agent]}): its compactions will not be "
            f"detected and no context given back · see: supervise patterns list",
            file=stderr,
        )
    store = Store.open_default(env)  # a database that cannot be opened stops us here, before the agent starts
    if opts.parent_id and not opts.force:
        cleanup.callback(os.close, _claim_parent(store, opts.parent_id, env))
    command = shlex.join(opts.argv)
    sid = store.free_id()
    session = dict(name=opts.name, command=command, argv=opts.argv, agent=agent, cwd=opts.cwd, pid=os.getpid(),
                   parent_id=opts.parent_id, options=opts.stored)
    try:
        sdir = paths.ensure_private_dir(paths.session_dir(sid, env))
    except SuperviseError:
        store.create_session(sid, **session, status=FAILED, exit_code=1, ended=utcnow())
        raise
    cleanup.callback(os.close, claim(sid, sdir))
    cast_path, log_path = sdir / "session.cast", sdir / "session.log"
    session.update(cast_path=str(cast_path), log_path=str(log_path))

    cols, rows = tty.size(stdout_fd, stdin_fd, env=env)
    child_env = {**env, "SUPERVISE_SESSION_ID": sid}
    child_env.setdefault("TERM", "xterm-256color")
    inject = opts.inject if pattern_set is not None else "off"
    spawn_argv, hook_socket = list(opts.argv), None
    # Claude Code takes the context through its SessionStart hook: nothing to type, and it
    # cannot land in a dialog. Our settings file goes with this run only; a user's own
    # --settings is left alone (and the context is typed instead).
    if inject == "auto" and agent == "claude" and not claude.has_own_settings(opts.argv):
        paths.sweep_socket_dirs(supervisor_alive)
        socket_dir = paths.socket_dir()
        cleanup.callback(shutil.rmtree, socket_dir, ignore_errors=True)
        hook_socket = str(socket_dir / "hook.sock")
        spawn_argv = claude.with_hook(opts.argv, sdir / "claude-settings.json", resumed=opts.parent_id is not None)
        child_env[SOCKET_ENV] = hook_socket
    # The agent first, then its row and the recorder while it starts: the recorder's own
    # start-up (its imports, the database) overlaps the agent's, and output waits in the
    # pipe to it meanwhile.
    start = time.monotonic()
    started_wall = time.time()
    try:
        proc, stdin_pipe = spawn(spawn_argv, cwd=opts.cwd, env=child_env, size=(cols, rows),
                                 stdin_fd=stdin_fd if pattern_set and pattern_set.reads_stdin(opts.argv) else None)
    except OSError as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        store.create_session(sid, **session, status=FAILED, exit_code=code, ended=utcnow())
        EventSink(store, sid).emit("spawn_failed", 0.0, {"error": str(exc), "command": opts.argv[0]}, None)
        if code == 127:
            raise SuperviseError(f"command not found: {opts.argv[0]}", "check the spelling, or give the full path after `--`",
                                 exit_code=127) from exc
        raise SuperviseError(f"cannot run {opts.argv[0]}: {exc}", exit_code=code) from exc
    # From here on, a run that fails (the database, the recorder, the loop itself) stops the
    # agent rather than leave it unsupervised, and marks its session failed.
    cleanup.push(_on_failure(lambda: _terminate(proc)))
    store.create_session(sid, **session, child_pid=proc.pid)
    cleanup.push(_on_failure(lambda: _finish(store, sid, FAILED, 1), store.close))
    header = {
        "width": cols,
        "height": rows,
        "timestamp": int(started_wall),
        "command": command,
        "title": opts.name,
        "env": {k: env[k] for k in ("TERM", "SHELL") if k in env},
    }
    config = RecorderConfig(
        sid,
        str(store.path),
        str(cast_path),
        str(log_path),
        header,
        opts.emulator,
        agent=pattern_set.agent if pattern_set else None,
        pattern_files=[str(Path(p).resolve()) for p in opts.pattern_files],
        start_monotonic=start,
        started_wall=started_wall,
        transcript_dir=str(transcript.project_dir(child_env, opts.cwd)) if agent == "claude" else None,
        inject=inject,
        hook_socket=hook_socket,
        resume_from=opts.parent_id,
        handoff_from=opts.handoff_from,
    )
    # The recorder loads its settings from its environment: a flag travels there.
    recorder_env = dict(env)
    if opts.summary_backend:
        recorder_env["SUPERVISE_SUMMARY_BACKEND"] = opts.summary_backend
    if opts.on_limit:
        recorder_env["SUPERVISE_ON_LIMIT"] = opts.on_limit
    if opts.notify:
        recorder_env["SUPERVISE_NOTIFY"] = opts.notify
    outbox, inbox, recorder = _start_recorder(config, recorder_env, sdir)
    outbox.event(0.0, "start", {"argv": opts.argv, "cols": cols, "rows": rows, "cwd": opts.cwd})

    notes: list[str] = []
    given: list[dict] = []  # injections
    compacted = [False]  # was there anything to give back, besides a resumed session's context?

    def on_message(message: Message) -> None:
        if isinstance(message, Error):
            notes.append(message.text)
        elif isinstance(message, Injected):
            given.append(message.detail)
        elif isinstance(message, Compacted):
            compacted[0] = True

    terminal = tty.Raw(stdin_fd)
    loop = PtyLoop(
        proc,
        outbox,
        inbox=inbox,
        on_message=on_message,
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        size=lambda: tty.size(stdout_fd, stdin_fd, env=env),
        record_input=opts.record_input,
        start=start,
        stop=terminal.stop,
        stdin_pipe=stdin_pipe,
    )
    outcome = None
    with terminal:
        try:
            outcome = loop.run()
        finally:
            t_end = time.monotonic() - loop.start
            detail = {"exit_code": outcome.exit_code if outcome else 1}
            if outcome and outcome.signal:
                detail["signal"] = signal.Signals(outcome.signal).name
            outbox.event(t_end, "exit", detail)
            outbox.end(t_end, detail)
            outbox.drain(RECORDER_WAIT)
            outbox.close()
            modes = ""
            for message in inbox.read_until(Modes, RECORDER_WAIT):
                if isinstance(message, Modes):
                    modes = message.sequence
                else:
                    on_message(message)
            _restore_modes(stdout_fd, modes)
    # The text log is complete once the recorder has rendered everything; don't hold the
    # user's shell for long if it is far behind (it finishes in the background).
    for message in inbox.read_until(Done, RECORDER_WAIT):
        on_message(message)
    inbox.close()
    if pattern_set is not None:  # an agent we know: contexts are made for it
        notes.extend(_injection_notes(sid, opts, inject, given, compacted[0]))
    if outbox.broken:
        notes.append(f"supervise: the recorder stopped ({outbox.broken}); see {sdir / 'recorder.err'}")
    if outcome.interrupted_by is not None:
        status = INTERRUPTED
    else:
        status = COMPLETED if outcome.exit_code == 0 else FAILED
    lost = _finish(store, sid, status, outcome.exit_code)
    if lost:
        notes.append(lost)
    store.close()
    how = f"exit {outcome.exit_code}"
    if outcome.signal:
        how = f"killed by {signal.Signals(outcome.signal).name}, exit {outcome.exit_code}"
    notes.append(f"supervise: session {sid} {status} ({how}) · resume with: supervise resume {sid}")
    _tell(stderr, dict.fromkeys(notes))
    return outcome.exit_code


def _claim_parent(store: Store, parent_id: str, env: Mapping[str, str]) -> int:
    """Carry on the parent session only if no live supervisor does: its own (a session run
    by an older supervise holds no claim, so its row is asked too) or another resume's."""
    parent = store.get_session(parent_id)
    if parent["status"] == ACTIVE and parent["pid"] != os.getpid() and supervisor_alive(parent["pid"]):
        raise Claimed(parent_id, parent["pid"])
    return claim(parent_id, paths.ensure_private_dir(paths.session_dir(parent_id, env)))


def _injection_notes(sid: str, opts: RunOptions, inject: str, given: list[dict], compacted: bool) -> list[str]:
    """One line after the agent exits on what was given back (or how to get it)."""
    if given:
        how = ", ".join(f"{d.get('reason')} via {d.get('channel')}" + ("" if d.get("confirmed") else " (not confirmed)") for d in given)
        return [f"supervise: gave the agent its session context {len(given)} time(s): {how}"]
    if not compacted and not opts.parent_id:
        return []
    whose = sid if compacted else opts.parent_id
    if inject == "off":
        return [f"supervise: context injection was off; the session context: supervise context {whose}"]
    return [f"supervise: the session context was not given to the agent; see it with: supervise context {whose}"]


def _finish(store: Store, sid: str, status: str, exit_code: int) -> str | None:
    """Store how the session ended; if the database can't take it (a full disk), say so
    instead of failing: the child's status stays ours, and the session reads as interrupted."""
    try:
        store.finish_session(sid, status, exit_code)
    except sqlite3.Error as exc:
        return (f"supervise: the session's end was not stored ({exc}); it will read as interrupted "
                f"(hint: free some space in {store.path.parent})")
    return None


def _tell(stderr, lines) -> None:
    """The last words to the user; a terminal that was closed (SIGHUP) can't take them, and
    that must not turn the child's exit status into a traceback."""
    try:
        for line in lines:
            print(line, file=stderr)
        stderr.flush()
    except OSError:
        pass


def _start_recorder(config: RecorderConfig, env: Mapping[str, str], sdir: Path) -> tuple[Outbox, Inbox, subprocess.Popen]:
    """Start the recorder process (its own session, so terminal signals don't reach it)."""
    frames_r, frames_w = os.pipe()
    back_r, back_w = os.pipe()
    try:
        with paths.open_private(sdir / "recorder.err", "a") as err:
            proc = subprocess.Popen(
                # -P: the user's current directory is not searched first (a folder named
                # `supervisor` there, such as a supervisord checkout, must not replace ours).
                [sys.executable, "-P", "-m", "supervisor.run.recorder", config.to_json(), str(frames_r), str(back_w)],
                pass_fds=(frames_r, back_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
    except OSError as exc:
        for fd in (frames_r, frames_w, back_r, back_w):
            os.close(fd)
        raise SuperviseError(f"cannot start the recorder: {exc.strerror or exc}; the agent was stopped",
                             f"check free space in {sdir.parent} and free memory, then run it again") from exc
    os.close(frames_r)
    os.close(back_w)
    return Outbox(frames_w), Inbox(back_r), proc


def _restore_modes(stdout_fd: int | None, sequence: str) -> None:
    if not sequence or stdout_fd is None or not os.isatty(stdout_fd):
        return
    try:
        os.write(stdout_fd, sequence.encode())
    except OSError:
        pass


def _on_failure(*actions: Callable[[], object]):
    """An exit callback for an ExitStack: the actions, in order, only when leaving by an
    exception."""

    def on_exit(exc_type, exc, tb) -> bool:
        if exc_type is not None:
            for action in actions:
                action()
        return False  # (the exception goes on)

    return on_exit


def _terminate(proc) -> None:
    """The run failed: the agent must not outlive it (and its PTY is closed)."""
    try:
        proc.close(force=True)
    except Exception:
        pass
