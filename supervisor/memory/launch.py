"""How an agent starts supervise's MCP server: the command (this Python, this supervise) and
what it needs of the environment. Light to import: every run asks it before the agent starts."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from ..profiles.base import McpServer
from .tooldefs import NAME

TOOLS = ("search", "session", "excerpt", "brief")
# Where the database is (paths.data_dir): an agent may start its servers with an environment of its own.
DATA_VARS = ("SUPERVISE_HOME", "XDG_DATA_HOME")
SESSION_VAR = "SUPERVISE_SESSION_ID"
SCOPE_VAR = "SUPERVISE_MCP_ALL_PROJECTS"


def server(
    env: Mapping[str, str], project: str | None = None, session_id: str | None = None, all_projects: bool | None = None
) -> McpServer:
    """The server for a run in `project` (the asking session `session_id`, left out of its
    own brief); with neither, it takes the project of the folder the agent starts it in.
    `all_projects`: the run's [memory] mcp_all_projects, carried to it (None: the server
    reads the user's settings itself, as one in an agent's own config does)."""
    args = ["-P", "-m", "supervisor", "mcp"]  # -P: a folder named like our package in the project is not imported
    if project:
        args += ["--project", project]
    passed = {k: env[k] for k in DATA_VARS if env.get(k)}
    if session_id:
        passed[SESSION_VAR] = session_id
    if all_projects is not None:
        passed[SCOPE_VAR] = "1" if all_projects else "0"
    return McpServer(NAME, sys.executable, tuple(args), passed, TOOLS)
