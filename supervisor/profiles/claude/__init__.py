"""Claude Code (npm @anthropic-ai/claude-code): its hook, resume, transcript and summary backend.

Resumed by its own session id; given its context through a SessionStart hook in a per-run
settings file (it merges hooks from every settings source, so the user's own settings stay
untouched); its transcript read beside the screen (transcript.py); `claude -p` as a summary
backend on the user's login (summary.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import Hooked, HookScript, McpServer, Resumed, without_options
from . import summary, transcript

RESUME_FLAGS = ("--resume", "-r")
CONTINUE_FLAGS = ("--continue", "-c")
HOOK_TIMEOUT = 60  # seconds Claude Code gives the hook; ours gives up well before
STATUS = "session context"  # what its spinner says while our hook runs
SETTINGS_FILE = "claude-settings.json"
MCP_FILE = "claude-mcp.json"


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without any --resume [ID] / -r [ID] / --continue / -c: the old session's own
    resume flags must not fight the new one."""
    return without_options(argv, RESUME_FLAGS, CONTINUE_FLAGS)


def resume_argv(argv: list[str], agent_session_id: str | None) -> list[str]:
    """Resume Claude's own conversation when we know its id; else start it fresh."""
    argv = without_resume(argv)
    if agent_session_id:
        return [argv[0], "--resume", agent_session_id, *argv[1:]]
    return argv


def has_own_settings(argv: list[str]) -> bool:
    return any(a == "--settings" or a.startswith("--settings=") for a in argv[1:])


def settings(at_start: bool) -> dict:
    # "startup" only when there is something to give at the start (a resumed session started
    # fresh, a brief): a plain start has nothing.
    matcher = "compact|resume" + ("|startup" if at_start else "")
    return {
        "hooks": {
            # (no PreCompact witness: after /compact it prints that hook's command line on its screen)
            "SessionStart": [{"matcher": matcher, "hooks": [handler(hook.command())]}],
        }
    }


def handler(command: str) -> dict:
    # its spinner shows a hook's status message, else its command line (our paths)
    return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT, "statusMessage": STATUS}


def with_settings(argv: list[str], settings_path: Path) -> list[str]:
    """The command line that adds the settings file to the user's own."""
    return [argv[0], "--settings", str(settings_path), *argv[1:]]


def mcp_config(server: McpServer) -> dict:
    # alwaysLoad: its tools in the first request, not deferred behind ToolSearch (one round trip fewer)
    entry = {"type": "stdio", "command": server.command, "args": list(server.args), "env": server.env, "alwaysLoad": True}
    return {"mcpServers": {server.name: entry}}


def allowed(server: McpServer) -> str:
    """Its tools as Claude Code names them, allowed: a rule lets a deferred MCP tool run in
    every permission mode (auto mode's own check needs Anthropic's servers)."""
    return ",".join(f"mcp__{server.name}__{tool}" for tool in server.tools)


class ClaudeCode(HookScript):
    transcript = transcript
    summary = summary
    summary_rank = 0
    door = "its SessionStart hook, in a settings file of the run's own (--settings)"
    quiet_env = summary.QUIET_ENV
    mcp_note = None
    mcp_add_exists = r"MCP server \S+ already exists"  # `claude mcp add` refuses a name it has (exit 1)

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked:
        path = folder / MCP_FILE
        # `--flag=value`: both flags take several values, and a spaced one would take the
        # user's prompt after it as one more.
        extra = [f"--mcp-config={path}", f"--allowedTools={allowed(server)}"]
        return Hooked([argv[0], *extra, *argv[1:]], {}, {path: json.dumps(mcp_config(server), indent=2)})

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["claude", "mcp", "add", "--scope", "user", *env, server.name, "--", server.command, *server.args]

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        own = None if fresh else session.get("agent_session_id")
        note = None
        if not fresh and not own:
            note = (
                f"supervise: no Claude Code session id was recorded for {session['id']}; starting a new conversation "
                "and giving it the context"
            )
        return Resumed(resume_argv(argv, own), note=note)

    def hooks(self, argv: list[str]) -> bool:
        # A user's own --settings is left alone (and the context is typed instead).
        return not has_own_settings(argv)

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked:
        path = folder / SETTINGS_FILE
        return Hooked(with_settings(argv, path), self.hook_env(socket), {path: json.dumps(settings(at_start), indent=2)})


PROFILE = ClaudeCode("claude")
