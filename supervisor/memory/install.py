"""`supervise mcp install AGENT`: supervise's MCP server added to an agent's own
configuration, by the agent's own `mcp add` command (its profile's), for its sessions
outside supervise too."""

from __future__ import annotations

import os

from .. import agentcmd, profiles
from ..errors import SuperviseError
from ..plaintext import quoted
from . import launch


def command(agent: str) -> list[str]:
    """The agent's command that adds the server, or why there is none."""
    if agent not in profiles.shipped():
        raise SuperviseError(f"no agent '{quoted(agent)}'", f"use one of: {', '.join(a for a in profiles.clis())}", exit_code=2)
    profile = profiles.get(agent)
    added = profile.mcp_add(launch.server(os.environ))
    if added is None:
        why = profile.mcp_add_note or profile.mcp_note or "it has no command that adds an MCP server to its own configuration"
        given = "run under supervise, it is given the server for each run; " if profile.mcp_note is None else ""
        raise SuperviseError(
            f"{agent} cannot be given an MCP server by `supervise mcp install`: {why}", f"{given}see docs/memory.md", exit_code=2
        )
    return added


def run(agent: str, argv: list[str]) -> str | None:
    """Run the agent's command; None when it added the server, or what the agent said when
    its config has a server of that name already (run twice: nothing to do)."""
    return agentcmd.run(argv, "add the server", profiles.get(agent).mcp_add_exists)
