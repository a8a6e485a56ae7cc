"""Codex CLI (npm @openai/codex): read off its screen, given its context by typing, a summary backend.

`codex exec` summarizes on the user's own login (summary.py). supervise's MCP server is
given for one run by `-c` overrides (its config.toml untouched): Codex passes a server only
a few variables of its own environment, so what ours needs is named in `env`; and its
read-only tools run without asking (`approve`, for this server alone)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile
from . import summary


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
    summary_rank = 1
    mcp_note = None

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked:
        return Hooked([argv[0], *mcp_overrides(server), *argv[1:]])

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [arg for k, v in server.env.items() for arg in ("--env", f"{k}={v}")]
        return ["codex", "mcp", "add", *env, server.name, "--", server.command, *server.args]


PROFILE = Codex("codex")
