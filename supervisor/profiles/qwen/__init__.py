"""Qwen Code (npm @qwen-code/qwen-code): read off its screen, given its context by typing.

Its own record is one JSON-lines file per session (transcript.py). It carries a session on
by its id (`--resume ID`), or the folder's last (`--continue`). supervise's MCP server is
given for one run by `--mcp-config FILE` (over the servers of its settings files), marked
`trust` so its read-only tools run without a dialog."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed, without_options
from . import transcript

MCP_FILE = "qwen-mcp.json"


# options that carry a session on, and whether each takes a value
def without_resume(argv: list[str]) -> list[str]:
    """`argv` without the options it carried a session on with: the new ones replace them
    (`--resume` alone opens its session picker)."""
    return without_options(argv, ("--resume", "-r", "--session-id"), ("--continue", "-c"))


def mcp_config(server: McpServer) -> dict:
    entry = {"command": server.command, "args": list(server.args), "env": server.env, "trust": True}
    return {"mcpServers": {server.name: entry}}


class Qwen(Profile):
    transcript = transcript
    mcp_note = None

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh:
            return Resumed(argv)
        own = session.get("agent_session_id")
        if own:
            return Resumed([argv[0], "--resume", own, *argv[1:]])
        return Resumed(
            [argv[0], "--continue", *argv[1:]],
            note="supervise: Qwen Code's own session id was not recorded: it carries on this folder's last conversation",
        )

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        if any(a == "--mcp-config" or a.startswith("--mcp-config=") for a in argv[1:]):
            return None  # one file a run: the user's own stays
        path = folder / MCP_FILE
        return Hooked([argv[0], f"--mcp-config={path}", *argv[1:]], {}, {path: json.dumps(mcp_config(server), indent=2)})

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["qwen", "mcp", "add", "--scope", "user", "--trust", *env, server.name, server.command, *server.args]


PROFILE = Qwen("qwen")
