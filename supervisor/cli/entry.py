"""The `supervise` command. `supervise -- AGENT [ARGS]`, the common case, starts the agent
without loading the command-line library (Typer and the commands' definitions: 30 ms before
the agent could start); everything else goes to app.py."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ..errors import SuperviseError


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) > 1 and argv[0] == "--":
        guarded(lambda: sys.exit(_run(argv[1:])))
    from .app import main as cli_main

    cli_main(argv)


def _run(command: list[str]) -> int:
    from .. import config
    from ..run.session import RunOptions, run

    config.load()  # a setting that is wrong stops here, not in the recorder
    return run(RunOptions(argv=command))


def guarded(call: Callable[[], object]) -> None:
    """Run `call`; our errors as their one line and exit status, anything else as an internal
    error with the hint for its traceback."""
    try:
        call()
    except SuperviseError as exc:
        if os.environ.get("SUPERVISE_DEBUG"):
            raise
        print(str(exc), file=sys.stderr)
        sys.exit(exc.exit_code)
    except Exception as exc:
        if os.environ.get("SUPERVISE_DEBUG"):
            raise
        print(f"supervise: internal error: {exc!r} (hint: rerun with SUPERVISE_DEBUG=1 for the traceback)", file=sys.stderr)
        sys.exit(1)
