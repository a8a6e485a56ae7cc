"""What the command modules share: the store they read, times as the user reads them, the usage."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import NoReturn

from ..store.database import Store


def open_store(write: bool = True) -> Store:
    """The database; `write=False` for a command that only reads: it then works on a
    read-only data directory too."""
    return Store.open_default(write=write)


def local_time(iso: str | None) -> str:
    if not iso:
        return ""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


# `run`, `resume` and `summarize` take it alike.
BACKEND_HELP = (
    "Who makes the session contexts: auto (default: the API with a key, else an agent CLI that can summarize, on "
    "your own login (the session's own agent first), else the heuristic), api, such an agent CLI by name, heuristic."
)

MOST_USED = (
    ("supervise -- AGENT", "run an agent CLI ({known}, ...) under the supervisor"),
    ("supervise ps", "what each running agent is doing"),
    ("supervise sessions", "the recorded sessions, newest first"),
    ("supervise resume ID", "carry on a session (--with AGENT: hand it to another agent)"),
    ("supervise context ID", "the latest context prompt of a session"),
)


def usage_no_command() -> NoReturn:
    print("Usage: supervise [OPTIONS] -- AGENT [ARGS]...  |  supervise COMMAND [ARGS]...\n\nMost used:", file=sys.stderr)
    from .. import profiles

    known = profiles.clis()
    for command, what in MOST_USED:
        print(f"  {command:<22} {what.format(known=', '.join(known))}", file=sys.stderr)
    print(f"\nsupervise: no command given (hint: `supervise -- {known[0]}`, or `supervise --help` for every command)", file=sys.stderr)
    sys.exit(2)


PICK_HELP = "With no id: pick among every project's sessions, not only the current folder's."
