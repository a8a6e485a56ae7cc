"""GitHub Copilot CLI (npm @github/copilot): its session files, resume by session id, MCP.

Read off its screen and its session files, given its context by typing. Its own record is one
JSON-lines file per session (transcript.py). It carries a session on by its id (`--resume=ID`),
or its most recent one (`--continue`). supervise's MCP server is given for one run by
`--additional-mcp-config=@FILE` (over the servers of ~/.copilot/mcp-config.json), its tools
allowed without a dialog by `--allow-tool=NAME`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed, without_options
from . import transcript

MCP_FILE = "copilot-mcp.json"


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without the options it carried a session on with: the new ones replace them
    (`--resume` alone opens its session picker)."""
    return without_options(argv, ("--resume", "-r", "--session-id", "--connect"), ("--continue",))


def mcp_config(server: McpServer) -> dict:
    entry = {"type": "local", "command": server.command, "args": list(server.args), "env": server.env, "tools": ["*"]}
    return {"mcpServers": {server.name: entry}}


class Copilot(Profile):
    transcript = transcript
    # `--version` makes no network call; this keeps a start-up from downloading an update
    quiet_env = {"COPILOT_AUTO_UPDATE": "false"}
    version_timeout = 15.0  # its first run unpacks itself into ~/.cache/copilot
    mcp_note = None
    mcp_add_exists = r'Server "[^"]+" already exists'  # `copilot mcp add` refuses a name it has (exit 1)

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh:
            return Resumed(argv)
        own = session.get("agent_session_id")
        if own:
            return Resumed([argv[0], f"--resume={own}", *argv[1:]])
        return Resumed(
            [argv[0], "--continue", *argv[1:]],
            note="supervise: Copilot CLI's own session id was not recorded: it carries on its most recent session",
        )

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        path = folder / MCP_FILE  # a file, not the JSON itself: a command line is every user's to read
        added = [f"--additional-mcp-config=@{path}", f"--allow-tool={server.name}"]
        return Hooked([argv[0], *added, *argv[1:]], {}, {path: json.dumps(mcp_config(server), indent=2)})

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["copilot", "mcp", "add", *env, server.name, "--", server.command, *server.args]


PROFILE = Copilot("copilot")
