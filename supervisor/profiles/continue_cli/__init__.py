"""Continue CLI (npm @continuedev/cli, the command `cn`): its session files, resume by forking its session.

Read off its screen and its session files (transcript.py); its pattern file says the rest.
Its hooks are never fired (1.5.47), so its door for the context is a rule file of the run's
own (`--rule PATH`, beside the user's rules): it reads the file again for every model request
and puts it in its system prompt, and supervise writes the context there once it is due. `--resume` carries on its most recent session, whatever folder
it was in; `--fork ID` starts a new session from session ID's conversation, so a session is
resumed by forking the one it recorded. supervise's MCP server is given for one run as a
block file passed with `--mcp PATH` (a path, unlike a Hub slug, is read as a local block):
its tools are offered to the model by their own names and, each allowed with `--allow NAME`,
run without a dialog (seen in 1.5.47 against a fake model)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed, without_options
from . import transcript

RESUME_FLAGS = ("--resume",)
FORK_FLAGS = ("--fork",)  # takes a session id
MCP_FILE = "continue-mcp.yaml"
RULE_FILE = "continue-context.md"


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without the `--resume` or `--fork ID` (`--fork=ID`) it was run with."""
    return without_options(argv, FORK_FLAGS, RESUME_FLAGS)


def mcp_block(server: McpServer) -> str:
    """A block of its config holding `server` (YAML, written as JSON, which YAML reads)."""
    entry = {"name": server.name, "command": server.command, "args": list(server.args), "env": dict(server.env)}
    return json.dumps({"name": server.name, "version": "0.0.1", "schema": "v1", "mcpServers": [entry]}, indent=1) + "\n"


class ContinueCli(Profile):
    transcript = transcript
    mcp_note = None
    mcp_add_note = "it has no `mcp add` command: its servers are listed in ~/.continue/config.yaml"
    version_timeout = 10.0  # a bundle of 30 MB: over a second to start on an idle machine
    # no telemetry; its release check at start-up cannot be turned off, and fails quietly offline
    quiet_env = {"CONTINUE_METRICS_ENABLED": "0", "CONTINUE_CLI_ENABLE_TELEMETRY": "0", "CONTINUE_CLI_AUTO_UPDATED": "1"}

    door = "a rule file of the run's own (--rule), read before each request"

    def hooks(self, argv: list[str]) -> bool:
        return True

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked:
        path = folder / RULE_FILE  # there (empty) from the start: a missing rule is a warning on its screen
        return Hooked([argv[0], "--rule", str(path), *argv[1:]], files={path: ""}, door_file=path)

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh:
            return Resumed(argv)
        if session.get("agent_session_id"):
            return Resumed([argv[0], "--fork", session["agent_session_id"], *argv[1:]])
        # its `--resume` opens its latest session of any folder: perhaps another project's
        return Resumed(argv, note="supervise: Continue's own session id was not recorded: it starts a new conversation, given the context")

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        block = folder / MCP_FILE
        allowed = [arg for tool in server.tools for arg in ("--allow", tool)]  # its MCP tools go by the server's names
        return Hooked([argv[0], "--mcp", str(block), *allowed, *argv[1:]], files={block: mcp_block(server)})

    def mcp_add(self, server: McpServer) -> list[str] | None:
        return None  # no `mcp add` command: its servers are listed in ~/.continue/config.yaml


PROFILE = ContinueCli("continue-cli")
