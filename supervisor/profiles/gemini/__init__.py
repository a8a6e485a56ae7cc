"""Gemini CLI (npm @google/gemini-cli): its session files, resume by session id, `mcp add`.

Read off its screen and its session files (transcript.py), given its context by typing. A
summary backend by name only: its `summary` says why it cannot be one."""

from __future__ import annotations

from collections.abc import Mapping

from ..base import McpServer, Profile, Resumed, without_options
from . import summary, transcript

RESUME_FLAGS = ("--resume", "-r")


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without a `--resume X` / `-r X` / `--resume=X` it was run with."""
    return without_options(argv, RESUME_FLAGS)


class Gemini(Profile):
    summary = summary
    transcript = transcript
    summary_rank = 2
    mcp_note = "its MCP servers come from its settings files only (`supervise mcp install gemini` adds supervise's there)"

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh or not session.get("agent_session_id"):
            return Resumed(argv)
        return Resumed([argv[0], "--resume", session["agent_session_id"], *argv[1:]])

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["gemini", "mcp", "add", "--scope", "user", *env, server.name, server.command, *server.args]


PROFILE = Gemini("gemini")
