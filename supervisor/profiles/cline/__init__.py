"""Cline CLI (npm cline): its session files, resume by session id.

Read off its screen and its session files (transcript.py: a folder per session, each file
rewritten whole), given its context by typing; its pattern file says the rest. `cline --id
ID` carries a session on; it has no flag for the folder's last one, so a session resumed
with no id recorded starts anew and is given its context.

supervise's MCP server is given for one run in a settings file of its own, named by
CLINE_MCP_SETTINGS_PATH (the user's servers copied in, ours laid over them). Its tools, named
`supervise__search` ..., run without a dialog under its default (auto-approve all); 3.0.65
has no rule that allows one tool, so where the user turned auto-approve off they ask."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed, without_options
from . import transcript

MCP_ENV = "CLINE_MCP_SETTINGS_PATH"
MCP_FILE = "cline_mcp_settings.json"
# Options that pick which session it opens (the one given replaces them), with a value.
_SESSION_VALUE = ("--id",)


def without_session(argv: list[str]) -> list[str]:
    """`argv` without the `--id ID` (`--id=ID`) it was run with."""
    return without_options(argv, _SESSION_VALUE)


def mcp_settings_path(env: Mapping[str, str]) -> Path:
    """Where it reads its MCP servers from (as it resolves it)."""
    if env.get(MCP_ENV, "").strip():
        return Path(env[MCP_ENV].strip()).expanduser()
    return transcript.data_dir(env) / "settings" / MCP_FILE


def mcp_entry(server: McpServer) -> dict:
    return {"command": server.command, "args": list(server.args), "env": dict(server.env), "disabled": False}


class Cline(Profile):
    transcript = transcript
    # `--version` makes no network call; this keeps a start-up from looking for an update
    quiet_env = {"CLINE_NO_AUTO_UPDATE": "1"}
    version_timeout = 10.0  # a 150 MB binary: over two seconds to start the first time
    mcp_note = None

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        """`cline --id ID` carries its own session on; with none recorded it starts anew."""
        argv = without_session(argv)
        if fresh:
            return Resumed(argv)
        if session.get("agent_session_id"):
            return Resumed([argv[0], "--id", session["agent_session_id"], *argv[1:]])
        note = "supervise: cline has no flag that opens the folder's last session (`cline --id ID` opens one): it starts anew, with the context given"
        return Resumed(argv, note=note)

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        theirs: object = {}
        path = mcp_settings_path(env)
        if path.is_file():
            try:
                theirs = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None  # theirs stays as it is, and it says what is wrong with it
        if not isinstance(theirs, dict):
            return None
        servers = theirs.get("mcpServers")
        servers = dict(servers) if isinstance(servers, dict) else {}
        servers[server.name] = mcp_entry(server)
        mine = folder / MCP_FILE
        content = json.dumps({**theirs, "mcpServers": servers}, indent=2) + "\n"
        return Hooked(argv, {MCP_ENV: str(mine)}, files={mine: content})

    def mcp_add(self, server: McpServer) -> list[str]:
        # it takes no environment for a server: `env` sets what ours needs
        command = ["env", *(f"{k}={v}" for k, v in server.env.items()), server.command] if server.env else [server.command]
        return ["cline", "mcp", "add", server.name, "--yes", "--", *command, *server.args]


PROFILE = Cline("cline")
