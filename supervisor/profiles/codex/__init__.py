"""Codex CLI (npm @openai/codex): its rollout files, resume by thread id, MCP and summary backend.

Read off its screen and its rollout files (transcript.py), given its context by typing.

`codex exec` summarizes on the user's own login (summary.py). supervise's MCP server is
given for one run by `-c` overrides (its config.toml untouched): Codex passes a server only
a few variables of its own environment, so what ours needs is named in `env`; and its
read-only tools run without asking (`approve`, for this server alone)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed
from . import summary, transcript

RESUME = "resume"  # `codex resume [ID]`: a subcommand, before any option


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without a `resume [ID|--last]` it was run with: the new one replaces it."""
    if len(argv) > 1 and argv[1] == RESUME:
        rest = argv[2:]
        if rest and (rest[0] == "--last" or not rest[0].startswith("-")):
            rest = rest[1:]
        return [argv[0], *rest]
    return list(argv)


def toml(value: object) -> str:
    """A value as TOML reads it: JSON strings and arrays are TOML too; a table is inline."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def mcp_overrides(server: McpServer) -> list[str]:
    at = f"mcp_servers.{server.name}"
    settings = {"command": server.command, "args": list(server.args), "env": server.env, "default_tools_approval_mode": "approve"}
    return [arg for key, value in settings.items() for arg in ("-c", f"{at}.{key}={toml(value)}")]


class Codex(Profile):
    summary = summary
    transcript = transcript
    summary_rank = 1
    mcp_note = None

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh:
            return Resumed(argv)
        if session.get("agent_session_id"):
            return Resumed([argv[0], RESUME, session["agent_session_id"], *argv[1:]])
        return Resumed(argv, note="supervise: Codex's own session id was not recorded: it starts a new conversation, given the context")

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked:
        return Hooked([argv[0], *mcp_overrides(server), *argv[1:]])

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [arg for k, v in server.env.items() for arg in ("--env", f"{k}={v}")]
        return ["codex", "mcp", "add", *env, server.name, "--", server.command, *server.args]


PROFILE = Codex("codex")
