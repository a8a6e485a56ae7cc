"""`supervise agent`: supervise's own coding agent, every command in a hardened Docker sandbox.

The container and its hardening are sandbox.py's; the file tools act on the workspace with
every path resolved inside it first (tools.py)."""

import sys

AGENT = "supervise-agent"  # its pattern set, and the agent name its sessions are stored with
RESUME_FLAG = "--resume-from"


def resume_argv(argv: list[str], from_session: str | None) -> list[str]:
    """The agent's command line to resume a session: its options without the task (it asks
    at its prompt) nor -p; with `--resume-from ID` to carry on that session's conversation
    (None: a fresh conversation, which is given the session's context instead)."""
    options = argv[: argv.index("--")] if "--" in argv else list(argv)
    out, skip = [], False
    for arg in options:
        if skip:
            skip = False
            continue
        if arg == RESUME_FLAG:
            skip = True
            continue
        if arg not in ("-p", "--print"):
            out.append(arg)
    if from_session:
        out += [RESUME_FLAG, from_session]
    return [*out, "--"]


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
