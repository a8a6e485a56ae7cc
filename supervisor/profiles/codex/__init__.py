"""Codex CLI (npm @openai/codex): its rollout files, resume by thread id, hook, MCP and summary backend.

Read off its screen and its rollout files (transcript.py). Given its context through its
SessionStart hook, added for one run by `-c` overrides with the hook's trust entry beside it
(hooktrust.py; the user's own hooks and config.toml untouched). Codex runs the hook as a turn
starts: after a compaction inside a turn, at once; after `/compact`, on a resume or at
start-up, as the user's next turn starts. So nothing is typed meanwhile (`door_at_prompt`):
the context goes to the model before the user's next words. A PreCompact hook, trusted the
same way, witnesses each compaction as it starts (it gives nothing).

`codex exec` summarizes on the user's own login (summary.py). supervise's MCP server is
given for one run by `-c` overrides (its config.toml untouched): Codex passes a server only
a few variables of its own environment, so what ours needs is named in `env`; and its
read-only tools run without asking (`approve`, for this server alone)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import Hooked, HookScript, McpServer, Resumed
from . import hooktrust, summary, transcript

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
    """A value as TOML reads it: JSON strings, numbers and booleans are TOML too (not ASCII-
    escaped: TOML takes no surrogate pairs); arrays and inline tables nest."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml(str(k))} = {toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def mcp_overrides(server: McpServer) -> list[str]:
    at = f"mcp_servers.{server.name}"
    settings = {"command": server.command, "args": list(server.args), "env": server.env, "default_tools_approval_mode": "approve"}
    return [arg for key, value in settings.items() for arg in ("-c", f"{at}.{key}={toml(value)}")]


def hook_overrides(command: str, at_start: bool, witness: str | None = None) -> list[str]:
    """The `-c` overrides that add our SessionStart hook running `command` (and our PreCompact
    hook running `witness`), trusted."""
    # "startup" only when there is something to give at the start (a resumed session started
    # fresh, a brief): a plain start has nothing. Codex's matcher is a regex.
    groups = {hooktrust.EVENT: hooktrust.group(command, "compact|resume" + ("|startup" if at_start else ""))}
    if witness is not None:
        groups[hooktrust.WITNESS] = hooktrust.group(witness, "manual|auto", hooktrust.WITNESS)
    state = {hooktrust.key(e): {"trusted_hash": hooktrust.trusted_hash(g, e)} for e, g in groups.items()}
    added = [arg for e, g in groups.items() for arg in ("-c", f"hooks.{e}={toml([g])}")]
    return [*added, "-c", f"hooks.state={toml(state)}"]


class Codex(HookScript):
    summary = summary
    transcript = transcript
    summary_rank = 1
    mcp_note = None
    door = "its SessionStart hook, added for the run with -c (trusted beside it)"
    door_at_prompt = True

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh:
            return Resumed(argv)
        if session.get("agent_session_id"):
            return Resumed([argv[0], RESUME, session["agent_session_id"], *argv[1:]])
        return Resumed(argv, note="supervise: Codex's own session id was not recorded: it starts a new conversation, given the context")

    def hooks(self, argv: list[str]) -> bool:
        # A user's own hooks given by -c (or hooks turned off, or a remote app server's hooks,
        # which run where our socket is not) are left alone: the context is typed instead.
        return not hooktrust.hooks_of_their_own(argv)

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked:
        overrides = hook_overrides(hook.command(), at_start, witness=hook.command("source=precompact"))
        return Hooked([argv[0], *overrides, *argv[1:]], self.hook_env(socket))

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked:
        return Hooked([argv[0], *mcp_overrides(server), *argv[1:]])

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [arg for k, v in server.env.items() for arg in ("--env", f"{k}={v}")]
        return ["codex", "mcp", "add", *env, server.name, "--", server.command, *server.args]


PROFILE = Codex("codex")
