"""GitHub Copilot CLI (npm @github/copilot): its session files, resume by session id, its hooks, MCP.

Read off its screen and its session files, given its context by its own hooks: a plugin folder
of the run's own (`--plugin-dir`, beside the user's own plugins and hooks) whose `sessionStart`
hook asks for a resumed session's context or a brief, and whose `userPromptSubmitted` hook asks
before each of the user's prompts (it has no hook after a compaction: the context goes with the
user's next words, as a reminder of its own). Its own record is one
JSON-lines file per session (transcript.py). It carries a session on by its id (`--resume=ID`),
or its most recent one (`--continue`). supervise's MCP server is given for one run by
`--additional-mcp-config=@FILE` (over the servers of ~/.copilot/mcp-config.json), its tools
allowed without a dialog by `--allow-tool=NAME`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import Hooked, HookScript, McpServer, Resumed, without_options
from . import transcript

MCP_FILE = "copilot-mcp.json"
PLUGIN = "supervise"  # the plugin's name as it lists it
PLUGIN_DIR = "copilot-plugin"  # its folder, in the session's private folder
HOOK_TIMEOUT = 60  # seconds it gives a hook; ours gives up well before


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without the options it carried a session on with: the new ones replace them
    (`--resume` alone opens its session picker)."""
    return without_options(argv, ("--resume", "-r", "--session-id", "--connect"), ("--continue",))


def mcp_config(server: McpServer) -> dict:
    entry = {"type": "local", "command": server.command, "args": list(server.args), "env": server.env, "tools": ["*"]}
    return {"mcpServers": {server.name: entry}}


def plugin_files(folder: Path, at_start: bool) -> dict[Path, str]:
    """The plugin folder's files: its manifest, and its hooks in its own format (it reads
    `additionalContext` at the top of a hook's output; its events carry no source before a
    prompt). `sessionStart` (at its first prompt) only when something waits to be given then."""

    def handler(*args: str) -> list[dict]:
        return [{"type": "command", "bash": hook.command("shape=flat", *args), "timeoutSec": HOOK_TIMEOUT}]

    hooks = {"sessionStart": handler()} if at_start else {}
    hooks["userPromptSubmitted"] = handler("source=prompt")
    hooks["preCompact"] = handler("source=precompact")  # a witness of each compaction as it starts
    return {
        folder / ".plugin" / "plugin.json": json.dumps({"name": PLUGIN, "version": "1.0.0"}, indent=2),
        folder / "hooks" / "hooks.json": json.dumps({"version": 1, "hooks": hooks}, indent=2),
    }


class Copilot(HookScript):
    transcript = transcript
    # `--version` makes no network call; this keeps a start-up from downloading an update
    quiet_env = {"COPILOT_AUTO_UPDATE": "false"}
    version_timeout = 15.0  # its first run unpacks itself into ~/.cache/copilot
    mcp_note = None
    mcp_add_exists = r'Server "[^"]+" already exists'  # `copilot mcp add` refuses a name it has (exit 1)
    door = "its sessionStart and userPromptSubmitted hooks, in a plugin folder of the run's own (--plugin-dir)"
    door_at_prompt = True

    def hooks(self, argv: list[str]) -> bool:
        return True

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked:
        plugin = folder / PLUGIN_DIR
        files = plugin_files(plugin, at_start)
        return Hooked([argv[0], f"--plugin-dir={plugin}", *argv[1:]], self.hook_env(socket), files)

    def hook_command(self) -> str | None:
        return hook.command("shape=flat")

    def hook_reply(self, context: str) -> str:
        return hook.output(context, shape="flat")

    def hook_request(self) -> str:
        return '{"sessionId": "doctor", "source": "doctor"}'

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
