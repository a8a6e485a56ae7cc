"""The `supervise` command. `supervise -- AGENT [ARGS]`, the common case, starts the agent
without loading the command-line library (Typer and the commands' definitions: 30 ms before
the agent could start), and so do `supervise mcp`, which an agent starts and waits for, and
`supervise --version`; everything else goes to app.py."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

from ..errors import SuperviseError


def main() -> None:
    _standard_fds()
    argv = sys.argv[1:]
    try:
        if len(argv) > 1 and argv[0] == "--":
            guarded(lambda: sys.exit(_run(argv[1:])))
        if argv in (["--version"], ["-V"]):  # what scripts and status lines ask, often
            from .. import __version__

            guarded(lambda: print(f"supervise {__version__}"))
            return
        served = _mcp_options(argv)
        if served is not None:
            from ..memory import mcpentry

            guarded(lambda: sys.exit(mcpentry.main(*served)))
        from .app import main as cli_main

        cli_main(argv)
    except KeyboardInterrupt:
        # Ctrl-C where a command did not take it itself (a search, a doctor check): the user
        # asked it to stop, and knows why; what is left of its output is dropped.
        if os.environ.get("SUPERVISE_DEBUG"):
            raise
        _quiet_stdout()
        sys.exit(130)


def _standard_fds() -> None:
    """A closed stdin, stdout or stderr (`supervise -- cat <&-`) becomes /dev/null: else the
    next file we open (the database, the agent's PTY) would take its number and be read or
    written as if it were the terminal."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _mcp_options(argv: list[str]) -> tuple[str | None, bool] | None:
    """`mcp [--project DIR] [--all|-a]` as (folder, everywhere); None for anything else (help,
    `mcp install`, a typo), which the command-line library answers."""
    if argv[:1] != ["mcp"]:
        return None
    folder, everywhere, rest = None, False, argv[1:]
    while rest:
        if rest[0] in ("--all", "-a"):
            everywhere, rest = True, rest[1:]
        elif rest[0] == "--project" and len(rest) > 1 and folder is None:
            folder, rest = rest[1], rest[2:]
        elif rest[0].startswith("--project=") and folder is None:
            folder, rest = rest[0].removeprefix("--project="), rest[1:]
        else:
            return None
    return folder, everywhere


def _run(command: list[str]) -> int:
    from ..terminal import jobshell

    # The agent's job shell first, while this process is small: it is ready on the agent's
    # PTY by the time supervise has imported itself and planned the run.
    shell = jobshell.start(0, forked=True)
    try:
        from .. import config
        from ..run.session import RunOptions, run

        settings = config.load(warn=config.to_stderr)  # a setting that is wrong stops here, before the agent starts
    except BaseException:
        shell.discard()
        raise
    return run(RunOptions(argv=command, settings=settings), shell=shell)


def guarded(call: Callable[[], object]) -> None:
    """Run `call`; our errors as their one line and exit status, anything else as an internal
    error with the hint for its traceback."""
    try:
        try:
            call()
        except SystemExit as done:
            _incomplete_said(done.code)
            raise
        sys.stdout.flush()  # a full disk or a closed pipe shows here, while we can still say so
        _incomplete_said(0)
    except SuperviseError as exc:
        if os.environ.get("SUPERVISE_DEBUG"):
            raise
        print(str(exc), file=sys.stderr)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # The reader took what it wanted (`supervise show ID | head -1`): done, as `cat` would be.
        _quiet_stdout()
        sys.exit(0)
    except OSError as exc:
        if not _is_stdout_failure(exc):
            _internal(exc)
        _quiet_stdout()
        print(f"supervise: cannot write the output: {exc.strerror or exc} (hint: check the file or disk it goes to)", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:
        if _damage_said(exc):
            sys.exit(1)
        _internal(exc)


def _incomplete_said(code: object) -> None:
    """An answer given past a damaged page of the database: said in one line, and not a success."""
    if "supervisor.store.damage" not in sys.modules:  # (no database was read)
        return
    from ..store import damage

    lines = damage.take()
    if not lines:
        return
    sys.stdout.flush()
    for line in lines:
        print(line, file=sys.stderr)
    sys.exit(code if isinstance(code, int) and code else 1)


def _damage_said(exc: Exception) -> bool:
    """A query that met a damaged database (a bad page found only now): the line `doctor` gives."""
    if "sqlite3" not in sys.modules or os.environ.get("SUPERVISE_DEBUG"):  # (no database was opened)
        return False
    from .. import paths
    from ..store.damage import damaged, is_damage

    if not is_damage(exc):
        return False
    print(str(damaged(paths.db_path())), file=sys.stderr)
    return True


def _internal(exc: BaseException) -> None:
    if os.environ.get("SUPERVISE_DEBUG"):
        raise exc
    print(f"supervise: internal error: {exc!r} (hint: rerun with SUPERVISE_DEBUG=1 for the traceback)", file=sys.stderr)
    sys.exit(1)


def _is_stdout_failure(exc: OSError) -> bool:
    """A write to our standard output failed (ENOSPC on /dev/full, EIO): raised from the
    flush of stdout, whose error carries no file name."""
    return exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EPIPE) and exc.filename is None


def _quiet_stdout() -> None:
    """Nothing more goes to a stdout that failed (not even at exit, whose flush would fail again)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
