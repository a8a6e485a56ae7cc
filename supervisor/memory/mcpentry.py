"""`supervise mcp`: supervise's MCP server on stdio, started by an agent. Its checks (not a
terminal; its project), then the handshake, answered from the tools' definitions alone; the
store, the search and the user's settings are loaded after it, while the agent reads the
answer, so an agent that waits for its servers before its first turn waits for no import.
Light to import: `supervise mcp` comes here without the command-line library (cli/entry.py)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..errors import SuperviseError
from . import stdio, tooldefs

LOOKUPS_CLOSE = 2.0  # seconds the lookups' count may take to go out when the agent closes us
NOT_A_TERMINAL = SuperviseError(
    "mcp serves an agent over its standard input and output, not a terminal",
    "an agent starts it: run one under supervise, or see `supervise mcp install --help`",
    exit_code=2,
)


def main(folder: str | None, everywhere: bool) -> int:
    """Serve until the client closes stdin (0), or Ctrl-C (130). `folder`: --project's;
    `everywhere`: --all."""
    from .. import __version__, project

    if sys.stdin.isatty():
        raise NOT_A_TERMINAL
    scope = project.scope(folder, everywhere)
    # Ctrl-C ends it at once: a read-only server has nothing to finish.
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    memory = Loaded(lambda: _memory(scope, everywhere))
    about = {"name": tooldefs.NAME, "version": __version__, "instructions": tooldefs.INSTRUCTIONS}

    def call(name: str, arguments: dict) -> tuple[str, bool]:
        text = tooldefs.call(memory.get(), name, arguments)
        return text, tooldefs.failed(text)

    try:
        return stdio.Server(about, tooldefs.listed(), call, warm=memory.get).serve()
    finally:
        memory.close()


class Loaded:
    """What the tools look things up in, made once, by whichever thread asks first (the
    handshake's warm-up, as a rule); the others wait for it."""

    def __init__(self, make: Callable[[], tuple[Any, Callable[[float], None]]]):
        self._make = make
        self._lock = threading.Lock()
        self._started = False
        self._done = threading.Event()
        self._made: tuple[Any, Callable[[float], None]] | None = None

    def get(self) -> Any:
        with self._lock:
            mine, self._started = not self._started, True
        if mine:
            try:
                self._made = self._make()
            finally:
                self._done.set()
        self._done.wait()
        if self._made is None:
            raise RuntimeError("the memory tools could not be loaded")
        return self._made[0]

    def close(self) -> None:
        if self._made is not None:
            self._made[1](LOOKUPS_CLOSE)


def _memory(scope: str | None, everywhere: bool):
    """The Memory the tools use, and the close of its lookups' count (telemetry)."""
    from .. import config, paths
    from ..telemetry.lookups import Lookups
    from . import launch
    from .mcpserver import Memory

    from .embedclient import client

    try:
        settings = config.load(mcp_all_projects=True if everywhere else None, warn=config.to_stderr)
        wide, embeddings, telemetry = settings.memory.mcp_all_projects, client(settings.memory), settings.telemetry
    except SuperviseError as exc:  # the agent keeps its server, kept to its project; doctor says what is wrong
        print(f"{exc}; the MCP server answers for its own project only", file=sys.stderr)
        wide, embeddings, telemetry = everywhere, None, config.Telemetry()  # (and counts nothing)
    lookups = Lookups(telemetry, "mcp", scope)
    return Memory(paths.db_path(), scope, os.environ.get(launch.SESSION_VAR), lookups.count, wide, embeddings), lookups.close
