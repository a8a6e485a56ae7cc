"""`supervise agent`: supervise's own coding agent, every command in a hardened Docker sandbox.

The container and its hardening are sandbox.py's; the file tools act on the workspace with
every path resolved inside it first (tools.py)."""

import sys

from ..profiles.supervise_agent import AGENT, RESUME_FLAG

__all__ = ["AGENT", "RESUME_FLAG", "command_line"]


def command_line(task: list[str], **options) -> list[str]:
    """The agent program's command line, as the supervisor spawns it: an option given (not
    None, not False) becomes its flag (`max_steps` -> `--max-steps`); the defaults are the
    program's own (__main__.py), in one place."""
    flags: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is not None and value is not False:
            flags += [flag, str(value)]
    return [sys.executable, "-P", "-m", "supervisor.agent", *flags, "--", *task]
