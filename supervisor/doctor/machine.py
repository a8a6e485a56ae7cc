"""This machine's own parts: the terminal, the data directory, the database, the pattern files and the agents' hooks."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import paths, profiles
from ..detection import patterns
from ..errors import SuperviseError
from ..plaintext import plain
from ..store.damage import REPAIR, damaged, is_damage
from .report import REINSTALL, Check

LOW_DISK = 100 * 1024 * 1024


# -- the terminal ------------------------------------------------------------------------------


def terminal_verdict(stdin_tty: bool, stdout_tty: bool, term: str | None, size: tuple[int, int] | None) -> Check:
    if not (stdin_tty and stdout_tty):
        which = " and ".join(n for n, tty in (("stdin", stdin_tty), ("stdout", stdout_tty)) if not tty)
        which += " are not terminals" if " and " in which else " is not a terminal"
        return Check("terminal", "warn", f"{which}: supervise records the same, but an agent's screen needs one")
    if not term or term == "dumb":
        return Check("terminal", "warn", f"TERM is {term or 'not set'}: agents draw for a dumb terminal", "export TERM=xterm-256color")
    cols, rows = size or (0, 0)
    if not cols or not rows:
        return Check("terminal", "warn", f"{term}, but the terminal reports no size ({cols}x{rows})", "stty cols 120 rows 40")
    if cols < 40 or rows < 10:
        return Check("terminal", "warn", f"{term}, {cols}x{rows}: too small for an agent's screen", "make the window larger")
    return Check("terminal", "ok", f"{term}, {cols}x{rows}")


def terminal(env: Mapping[str, str]) -> Check:
    size: tuple[int, int] | None
    try:
        columns, lines = os.get_terminal_size(sys.stdout.fileno())
        size = (columns, lines)
    except (OSError, ValueError):
        size = None
    return terminal_verdict(os.isatty(0), os.isatty(1), env.get("TERM"), size)


def native_verdict(missing: list[str]) -> Check:
    if not missing:
        return Check("native", "ok", "the PTY loop's copy of output and the recording's escapes run in C")
    return Check(
        "native",
        "warn",
        f"built without a C compiler: {' and '.join(missing)} in Python, so floods of output pass slower",
        f"install gcc and the Python headers (e.g. apt install gcc python3-dev), then {REINSTALL}",
    )


def native() -> Check:
    """The parts of a flood's hot path built in C (each has a Python twin)."""
    from ..recording import asciicast
    from ..terminal import pty_loop

    missing = [
        what
        for what, built in (("the PTY loop's copy", pty_loop.native is not None), ("the recording's escapes", asciicast.ESCAPES_IN_C))
        if not built
    ]
    return native_verdict(missing)


# -- the data directory and the database ---------------------------------------------------------


def data_dir_verdict(path: Path, mode: int, free: int, created: bool) -> Check:
    q = shlex.quote(str(path))
    if mode & 0o077:
        return Check(
            "data dir",
            "warn",
            f"{path} is mode {mode:04o}: others may read your recordings",
            f"chmod 700 {q} (supervise also does when it opens the database)",
        )
    if free < LOW_DISK:
        return Check("data dir", "warn", f"{path}: only {free // 2**20} MB free", "free some space, or set SUPERVISE_HOME elsewhere")
    return Check("data dir", "ok", f"{path} ({'created, ' if created else ''}private, writable, {free / 2**30:.1f} GB free)")


def data_dir(path: Path) -> Check:
    created = not path.exists()
    try:
        if created:
            paths.ensure_private_dir(path)  # as any supervise command would
        mode = stat.S_IMODE(path.stat().st_mode)
        fd, probe = tempfile.mkstemp(prefix=".doctor-probe-", dir=path)  # unique: a running supervise is not disturbed
        os.close(fd)
        os.unlink(probe)
        free = shutil.disk_usage(path).free
    except SuperviseError as exc:
        return Check("data dir", "problem", exc.message, exc.hint)
    except OSError as exc:
        return Check(
            "data dir",
            "problem",
            f"cannot write to {path}: {exc.strerror or exc}",
            "fix its owner or permissions, or set SUPERVISE_HOME to a writable directory",
        )
    return data_dir_verdict(path, mode, free, created)


def database_verdict(
    path: Path, integrity: list[str], sessions: int, mode: int, unlisted: int = 0, missing: Sequence[tuple[str, str]] = ()
) -> Check:
    if integrity != ["ok"]:
        said = damaged(path)  # what every command says when it meets the damage
        return Check("database", "problem", said.message, said.hint)
    counted = f"{path} ({sessions} session{'s' if sessions != 1 else ''}, integrity ok)"
    if unlisted:
        return Check(
            "database",
            "warn",
            f"{counted}; {unlisted} recording{'s are' if unlisted != 1 else ' is'} not in the database ({path.parent / 'sessions'})",
            f"`{REPAIR}` brings {'them' if unlisted != 1 else 'it'} back",
        )
    if missing:
        sid, where = missing[0]
        many = len(missing) != 1
        return Check(
            "database",
            "warn",
            f"{counted}; the recording{'s' if many else ''} of {len(missing)} session{'s are' if many else ' is'} missing "
            f"({'such as ' if many else ''}{sid}'s {plain(where, newlines=False)})",
            "if the data folder was moved, set SUPERVISE_HOME to where it is now; "
            f"else {'they were' if many else 'it was'} removed, and `supervise show ID` still has the events",
        )
    if mode & 0o077:
        return Check("database", "warn", f"{path} is mode {mode:04o}: others may read it", f"chmod 600 {shlex.quote(str(path))}")
    return Check("database", "ok", counted)


def missing_recordings(store) -> list[tuple[str, str]]:
    """(id, where) of each session that had a recording which is not where the database says."""
    from ..recording.export import started

    rows = store.conn.execute(
        "select id, cast_path, child_pid, status from sessions where coalesce(cast_path, '') != '' order by started"
    ).fetchall()
    found = [(sid, store.located(cast), {"cast_path": cast, "child_pid": child, "status": status}) for sid, cast, child, status in rows]
    return [(sid, where) for sid, where, row in found if started(row) and not os.path.exists(where)]


def database(path: Path) -> Check:
    from ..store.database import Store
    from ..store.repair import unlisted

    try:
        store = Store(path, write=False)  # creates or migrates it where it can be written; a damaged file is left as it is
    except SuperviseError as exc:
        return Check("database", "problem", exc.message, exc.hint)
    lost, missing = 0, []
    try:
        integrity = [row[0] for row in store.conn.execute("PRAGMA integrity_check").fetchall()]
        sessions = store.count_sessions()
        lost = len(unlisted(store, path.parent / "sessions"))
        missing = missing_recordings(store)
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):  # busy, locked: the file may well be fine
            return Check("database", "problem", f"cannot read database {path}: {exc}", "run again once nothing else holds it")
        integrity, sessions = [str(exc)], 0
    finally:
        store.close()
    return database_verdict(path, integrity, sessions, stat.S_IMODE(path.stat().st_mode), lost, missing)


# -- pattern files and the agent CLIs ------------------------------------------------------------


def pattern_files(env: Mapping[str, str]) -> tuple[list[Check], dict[str, patterns.PatternSet]]:
    """A check per broken file (every one, not only the first), else one ok; and the sets
    that loaded, by agent (later files win, as when a session starts)."""
    shipped_dir, user_dir = patterns.builtin_dir(), patterns.user_dir(env)
    shipped = sorted(shipped_dir.glob("*.toml")) if shipped_dir.is_dir() else []
    yours = sorted(user_dir.glob("*.toml")) if user_dir.is_dir() else []
    checks, sets = [], {}
    for path in [*shipped, *yours]:
        try:
            loaded = patterns.load_file(path)
        except SuperviseError as exc:
            checks.append(Check("patterns", "problem", exc.message, f"{exc.hint or 'fix it'}, or remove {path}"))
            continue
        sets[loaded.agent] = loaded
    if not shipped:
        checks.append(Check("patterns", "problem", f"no shipped pattern files in {shipped_dir}", REINSTALL))
    missing = [a for a in profiles.shipped() if patterns.select(sets, a) is None]
    if missing and shipped:
        checks.append(
            Check(
                "patterns",
                "warn",
                f"no pattern set for {', '.join(missing)}: their compactions go undetected",
                "see `supervise patterns list`",
            )
        )
    if not checks:
        checks.append(Check("patterns", "ok", f"{len(shipped)} shipped ({shipped_dir}), {len(yours)} yours ({user_dir})"))
    return checks, sets


# -- an agent's hook ------------------------------------------------------------------------------


def hook_script(profile: profiles.Profile, timeout: float = 10.0) -> list[Check]:
    """Run the agent's hook command exactly as the agent would (`sh -c`), against a socket of
    our own that answers a test context: it must print it back. None to run: no check."""
    from ..giveback.hookserver import HookServer

    command = profile.hook_command()
    if command is None:
        return []
    probe = "supervise doctor test context"
    failures: list[BaseException] = []
    with tempfile.TemporaryDirectory(prefix="supervise-doctor-") as folder:
        sock = os.path.join(folder, "hook.sock")
        server = HookServer(
            sock, lambda request: probe if request.get("source") == "doctor" else None, lambda what, exc: failures.append(exc)
        )
        server.start()
        try:
            proc = subprocess.run(
                ["sh", "-c", command],
                input=profile.hook_request(),
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**os.environ, **profile.hook_env(sock)},
            )
        except subprocess.TimeoutExpired:
            return [Check("hook", "problem", f"`{command}` did not finish in {timeout:g} s", REINSTALL)]
        finally:
            server.close()
    if proc.returncode == 0 and proc.stdout.strip() == profile.hook_reply(probe):
        return [Check("hook", "ok", f"{command} (gave a test context back)")]
    said = plain(proc.stderr or proc.stdout or "no output", newlines=False).strip()[:160]
    if failures:
        said += f"; the socket said: {failures[0]}"
    return [
        Check(
            "hook",
            "problem",
            f"`{command}` (exit {proc.returncode}) gave no context back: {said}",
            f"{profile.name} would get no context after a compaction; {REINSTALL}",
        )
    ]
