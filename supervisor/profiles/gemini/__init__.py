"""Gemini CLI (npm @google/gemini-cli): read off its screen, given its context by typing.

A summary backend by name only: its `summary` says why it cannot be one."""

from __future__ import annotations

from ..base import McpServer, Profile
from . import summary


class Gemini(Profile):
    summary = summary
    summary_rank = 2
    mcp_note = "its MCP servers come from its settings files only (`supervise mcp install gemini` adds supervise's there)"

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["gemini", "mcp", "add", "--scope", "user", *env, server.name, server.command, *server.args]


PROFILE = Gemini("gemini")
