"""Run one supervised session: store row, child under a PTY, recorder, terminal restore."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .. import commandline, config, paths, profiles, project
from ..channel import Compacted, Done, Error, Inbox, Injected, Message, Modes, Outbox
from ..detection import patterns
from ..detection.patterns import PatternSet
from ..errors import SuperviseError
from ..plaintext import quoted
from ..redact import redact
from ..store import migrations, projects
from ..store.database import COMPLETED, FAILED, INTERRUPTED, Event, Store, utcnow
from ..terminal import jobshell, tty
from ..terminal.child import Outcome
from ..terminal.pty_loop import PtyLoop
from . import exitnotes, extras, recorderstart
from .claim import claim, claim_parent
from .spawn import spawn

# How long the supervisor waits for the recorder at the end before leaving it to finish alone.
RECORDER_WAIT = 15.0


@dataclass
class RunOptions:
    """How a session is run: the command and every option given."""

    argv: list[str]
    name: str | None = None
    agent: str | None = None
    record_input: bool = False
    cwd: str = field(default_factory=os.getcwd)
    parent_id: str | None = None
    handoff_from: str | None = None  # the parent was another agent's session: that agent
    agent_session_id: str | None = None  # the agent's own session carried on (its record may be a file it appends to)
    emulator: str = "avt"
    pattern_files: list[str] = field(default_factory=list)
    inject: str = "auto"  # give the agent its context back after compaction / on resume: auto | type | off
    summary_backend: str | None = None  # --summary-backend; None: the config's (it is not stored: resume takes its own)
    on_limit: str | None = None  # --on-limit; None: the config's (not stored either)
    notify: str | None = None  # --notify; None: the config's (not stored either)
    force: bool = False  # resume the parent even while another supervisor carries it on
    brief: bool | None = None  # --brief/--no-brief as given (the setting itself: settings)
    settings: config.Settings | None = None  # as the command resolved them (None: resolved here, with the flags above)

    @property
    def stored(self) -> dict:
        """What `supervise resume` needs to run the session again the same way."""
        return {
            "record_input": self.record_input,
            "emulator": self.emulator,
            "pattern_files": [str(Path(p).resolve()) for p in self.pattern_files],
            "inject": self.inject,
        }


def choose_patterns(opts: RunOptions, env: Mapping[str, str]) -> tuple[str, PatternSet | None]:
    """The agent name and its pattern set: --agent, else the command's name
    (`/usr/bin/AGENT` selects the set whose commands include `AGENT`). Every pattern file
    is validated first: a broken one stops the session before it starts."""
    sets = patterns.load_all([Path(p) for p in opts.pattern_files], env)
    agent, chosen = patterns.agent_for(sets, opts.argv, opts.agent)
    if opts.agent and chosen is None:
        raise SuperviseError(
            f"no pattern set for agent '{opts.agent}'",
            f"use one of: {', '.join(sorted(sets))}, or add a file to {patterns.user_dir(env)}",
            exit_code=2,
        )
    return agent, chosen


def run(
    opts: RunOptions,
    *,
    env: Mapping[str, str] | None = None,
    stdin_fd: int | None = 0,
    stdout_fd: int | None = 1,
    stderr=None,
    shell: jobshell.Started | None = None,
) -> int:
    """Run the agent under supervision; its exit code. What the run makes for itself alone
    (the hook's socket folder) is removed on every way out. `shell`: the agent's job shell,
    started already on `stdin_fd` (it ends if the run stops before the agent starts)."""
    with contextlib.ExitStack() as cleanup:
        if shell is not None:
            cleanup.callback(shell.discard)
        return _run(opts, cleanup, env, stdin_fd, stdout_fd, stderr, shell)


@dataclass
class Plan:
    """What a run is, decided before the agent starts."""

    sid: str
    sdir: Path
    agent: str
    pattern_set: PatternSet | None
    profile: profiles.Profile
    settings: config.Settings
    session: dict  # its row
    size: tuple[int, int]
    argv: list[str]  # what is spawned (the agent's command, with what its hook needs)
    env: dict[str, str]  # the agent's environment
    inject: str
    hook_socket: str | None = None
    hook_listener: socket.socket | None = None  # listening at hook_socket, handed to the recorder
    door_file: str | None = None


@dataclass
class Supervised:
    """What the run came to, for the report."""

    outcome: Outcome | None  # the PTY loop's, once it has run
    notes: list[str]
    given: list[dict]  # injections
    compacted: bool  # was there anything to give back, besides a resumed session's context?
    recorder_broken: str | None


def _run(
    opts: RunOptions,
    cleanup: contextlib.ExitStack,
    env: Mapping[str, str] | None,
    stdin_fd: int | None,
    stdout_fd: int | None,
    stderr,
    shell: jobshell.Started | None,
) -> int:
    env = dict(os.environ if env is None else env)
    stderr = stderr or sys.stderr
    store, plan = _plan(opts, cleanup, env, stdin_fd, stdout_fd, stderr)
    proc, stdin_pipe, start, started_wall = _spawn(opts, plan, store, cleanup, stdin_fd, shell)
    outbox, inbox, _recorder = recorderstart.start(
        recorderstart.config_of(opts, plan, str(store.path), start, started_wall), {**env, **config.passed_on(plan.settings)}, plan.sdir
    )
    if plan.hook_listener is not None:  # the recorder's alone now: were it gone, a hook is refused at once, not left waiting
        plan.hook_listener.close()
    # what its row says of the run, also here: a repair that lost the row takes it back from here
    facts = {k: v for k, v in plan.session.items() if k not in ("command", "argv", "cwd", "pid", "cast_path", "log_path")}
    outbox.event(0.0, "start", {"argv": plan.session["argv"], "cols": plan.size[0], "rows": plan.size[1], "cwd": opts.cwd, **facts})
    done = _supervise(opts, proc, stdin_pipe, start, outbox, inbox, env, stdin_fd, stdout_fd)
    return _report(opts, plan, store, done, stderr)


def _plan(
    opts: RunOptions, cleanup: contextlib.ExitStack, env: dict[str, str], stdin_fd: int | None, stdout_fd: int | None, stderr
) -> tuple[Store, Plan]:
    """Everything decided and made before the agent starts: its pattern set and profile, the
    settings, the store and the session's folder (claimed), the hook's files and socket."""
    agent, pattern_set = choose_patterns(opts, env)
    profile = profiles.get(agent)
    if pattern_set is None and agent in profiles.shipped():  # an install without its pattern files, or a user file that renamed it
        print(
            f"supervise: no pattern set for {agent}: its compactions will not be "
            f"detected and no context given back · see: supervise patterns list",
            file=stderr,
        )
    settings = opts.settings or config.load(env, backend=opts.summary_backend, on_limit=opts.on_limit, notify=opts.notify)
    migrations.apply_apart(paths.db_path(env))  # the session's process never holds what migrating takes
    store = Store.open_default(env)  # a database that cannot be opened stops us here, before the agent starts
    store.not_waiting_for_disk()  # the agent's start and end: its row is made again from its folder
    if opts.parent_id and not opts.force:
        cleanup.callback(os.close, claim_parent(store, opts.parent_id, paths.session_dir(opts.parent_id, env)))
    sid = store.free_id()
    where = project.of(opts.cwd)
    key = projects.key_of(store, opts.cwd)  # what it is known by, wherever it is
    projects.carry(store, opts.cwd, key)
    session = dict(
        name=redact(opts.name) if opts.name else opts.name,
        command=commandline.shown(opts.argv),
        argv=commandline.masked(opts.argv),
        agent=agent,
        cwd=opts.cwd,
        project=where.root,
        project_key=key,
        branch=where.branch,
        pid=os.getpid(),
        parent_id=opts.parent_id,
        options=opts.stored,
    )
    try:
        sdir = paths.ensure_private_dir(paths.session_dir(sid, env))
    except SuperviseError:
        store.create_session(sid, **session, status=FAILED, exit_code=1, ended=utcnow())
        raise
    cleanup.callback(os.close, claim(sid, sdir))
    commandline.keep(sdir, opts.argv)
    session.update(cast_path=str(sdir / "session.cast"), log_path=str(sdir / "session.log"))
    child_env = {**env, "SUPERVISE_SESSION_ID": sid}
    child_env.setdefault("TERM", "xterm-256color")
    plan = Plan(
        sid,
        sdir,
        agent,
        pattern_set,
        profile,
        settings,
        session,
        tty.size(stdout_fd, stdin_fd, env=env),
        list(opts.argv),
        child_env,
        opts.inject if pattern_set is not None else "off",
    )
    extras.add(plan, opts.argv, cleanup, env, resumed=opts.parent_id is not None, project=where.root, say=partial(print, file=stderr))
    return store, plan


def _spawn(opts: RunOptions, plan: Plan, store: Store, cleanup: contextlib.ExitStack, stdin_fd: int | None, shell: jobshell.Started | None):
    """The agent first, then its row (and the recorder) while it starts: the recorder's own
    start-up (its imports, the database) overlaps the agent's, and output waits in the pipe
    to it meanwhile. Returns the process, its stdin pipe if any, and when it started."""
    start = time.monotonic()
    started_wall = time.time()
    stdin = stdin_fd if plan.pattern_set is not None and plan.pattern_set.reads_stdin(opts.argv) else None
    try:
        proc, stdin_pipe = spawn(plan.argv, cwd=opts.cwd, env=plan.env, size=plan.size, stdin_fd=stdin, shell=shell)
    except OSError as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        store.create_session(plan.sid, **plan.session, status=FAILED, exit_code=code, ended=utcnow())
        store.add_event(plan.sid, Event("spawn_failed", {"error": str(exc), "command": opts.argv[0]}, 0.0, utcnow()))
        name, hint = quoted(opts.argv[0]), "check the spelling, or give the full path after `--`"  # (quoted: no control keys)
        if code == 127:
            raise SuperviseError(f"command not found: {name}", hint, exit_code=127) from exc
        raise SuperviseError(f"cannot run {name}: {exc.strerror or exc}", exit_code=code) from exc
    # From here on, a run that fails (the database, the recorder, the loop itself) stops the
    # agent rather than leave it unsupervised, and marks its session failed.
    cleanup.push(_on_failure(lambda: _terminate(proc)))
    plan.session["started"] = utcnow()
    store.create_session(plan.sid, **plan.session, child_pid=proc.pid)
    cleanup.push(_on_failure(lambda: _finish(store, plan.sid, FAILED, 1), store.close))
    return proc, stdin_pipe, start, started_wall


def _supervise(
    opts: RunOptions,
    proc,
    stdin_pipe,
    start: float,
    outbox: Outbox,
    inbox: Inbox,
    env: Mapping[str, str],
    stdin_fd: int | None,
    stdout_fd: int | None,
) -> Supervised:
    """The PTY loop until the agent exits, then the recorder's last words: the terminal's
    modes restored, the text log finished (or left to finish in the background)."""
    done = Supervised(None, [], [], False, None)

    def on_message(message: Message) -> None:
        if isinstance(message, Error):
            done.notes.append(message.text)
        elif isinstance(message, Injected):
            done.given.append(message.detail)
        elif isinstance(message, Compacted):
            done.compacted = True

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
    with terminal:
        try:
            done.outcome = loop.run(terminal.typed_ahead)
        finally:
            t_end = time.monotonic() - loop.start
            detail: dict[str, int | str] = {"exit_code": done.outcome.exit_code if done.outcome is not None else 1}
            if done.outcome is not None and done.outcome.signal:
                detail["signal"] = signal.Signals(done.outcome.signal).name
            if done.outcome is not None and done.outcome.interrupted_by is not None:  # (the session reads `interrupted`)
                detail["interrupted_by"] = signal.Signals(done.outcome.interrupted_by).name
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
    last = inbox.read_until(Done, RECORDER_WAIT)
    for message in last:
        on_message(message)
    if not inbox.closed and not any(isinstance(m, Done) for m in last):
        done.notes.append("supervise: the output outran the recorder; it finishes the text log and search index in the background")
    inbox.close()
    done.recorder_broken = outbox.broken
    return done


def _report(opts: RunOptions, plan: Plan, store: Store, done: Supervised, stderr) -> int:
    """The session's end, stored, and the last words to the user; the agent's exit code."""
    outcome, notes = done.outcome, done.notes
    assert outcome is not None  # _supervise returns only once the loop has run
    if plan.pattern_set is not None:  # an agent we know: contexts are made for it
        notes.extend(exitnotes.injection(plan.sid, opts.parent_id, plan.inject, done.given, done.compacted))
    if plan.settings.memory.brief and not opts.parent_id:
        notes.extend(exitnotes.brief(plan.sid, opts.argv, opts.brief, plan.pattern_set is not None, plan.inject, store, done.given))
    if done.recorder_broken:
        notes.append(f"supervise: the recorder stopped ({done.recorder_broken}); see {plan.sdir / 'recorder.err'}")
    if outcome.interrupted_by is not None:
        status = INTERRUPTED
    else:
        status = COMPLETED if outcome.exit_code == 0 else FAILED
    lost = _finish(store, plan.sid, status, outcome.exit_code)
    if lost:
        notes.append(lost)
    store.close()
    how = f"exit {outcome.exit_code}"
    if outcome.signal:
        how = f"killed by {signal.Signals(outcome.signal).name}, exit {outcome.exit_code}"
    notes.append(f"supervise: session {plan.sid} {status} ({how}) · resume with: supervise resume {plan.sid}")
    _tell(stderr, dict.fromkeys(notes))
    return outcome.exit_code


def _finish(store: Store, sid: str, status: str, exit_code: int) -> str | None:
    """Store how the session ended; if the database can't take it (a full disk), say so
    instead of failing: the child's status stays ours, and the session reads as interrupted."""
    try:
        store.finish_session(sid, status, exit_code)
    except sqlite3.Error as exc:
        return (
            f"supervise: the session's end was not stored ({exc}); it will read as interrupted "
            f"(hint: free some space in {store.path.parent})"
        )
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
