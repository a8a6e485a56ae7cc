"""Gemini CLI (npm @google/gemini-cli): its session files, resume by session id, its hooks, `mcp add`.

Read off its screen and its session files (transcript.py). Its hooks come from its own
settings and extensions only (a settings file given for one run is read only if root owns
it), so its door is installed once, by the user: `supervise hooks install gemini` links an
extension of supervise's (its `gemini extensions link`), whose `BeforeAgent` hook asks for
whatever is due before each of the user's prompts (it has no hook after a compaction: the
context goes with the user's next words) and whose `SessionStart` hook asks for a resumed
session's context or a brief. Outside supervise the hooks print nothing. Until it is
installed, or with `-e` naming the extensions of a run, the context is typed. A summary
backend by name only: its `summary` says why it cannot be one."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import DoorInstall, Hooked, HookScript, McpServer, Resumed, without_options
from . import summary, transcript

RESUME_FLAGS = ("--resume", "-r")
EXTENSION = "supervise"  # the extension's name, as it lists it
HOOK_TIMEOUT = 60_000  # milliseconds it gives a hook; ours gives up well before
INSTALLED = ".gemini-extension-install.json"  # what its `extensions link` leaves in ~/.gemini/extensions/NAME
# its link would trust the folder it runs in for good; trusted for that command alone instead
LINK_ENV = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without a `--resume X` / `-r X` / `--resume=X` it was run with."""
    return without_options(argv, RESUME_FLAGS)


def handler(*args: str) -> dict:
    # named: its spinner shows a hook's name, else its command line; and a hook that cannot
    # run (supervise moved) must not hold the user's prompt back: Gemini CLI takes an exit
    # other than 0 or 1 for a refusal
    return {"type": "command", "name": EXTENSION, "command": f"{hook.command(*args)} || true", "timeout": HOOK_TIMEOUT}


def extension_files(folder: Path) -> dict[Path, str]:
    """The extension: its manifest and its hooks (SessionStart matches one source exactly)."""
    manifest = {
        "name": EXTENSION,
        "version": "1.0.0",
        "description": "Gives Gemini CLI its session context back under supervise; does nothing outside it.",
    }
    hooks = {
        "BeforeAgent": [{"hooks": [handler("source=prompt")]}],
        "SessionStart": [{"matcher": source, "hooks": [handler()]} for source in ("resume", "startup")],
        # a witness of /compress as it starts (its "auto" fires before each turn, compressing or not)
        "PreCompress": [{"matcher": "manual", "hooks": [handler("source=precompact")]}],
    }
    return {
        folder / "gemini-extension.json": json.dumps(manifest, indent=2),
        folder / "hooks" / "hooks.json": json.dumps({"hooks": hooks}, indent=2),
    }


def installed(env: Mapping[str, str]) -> bool:
    """Its extensions have ours linked, its hooks running this supervise's hook script."""
    try:
        link = json.loads((transcript.own_folder(env) / "extensions" / EXTENSION / INSTALLED).read_text(encoding="utf-8"))
        hooks = json.loads((Path(link["source"]) / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
        commands = [h["command"] for groups in hooks.values() for group in groups for h in group["hooks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(commands) and all(shlex.quote(hook.SCRIPT) in c for c in commands)


class Gemini(HookScript):
    summary = summary
    transcript = transcript
    summary_rank = 2
    mcp_note = "its MCP servers come from its settings files only (`supervise mcp install gemini` adds supervise's there)"
    door = "its BeforeAgent and SessionStart hooks, in an extension `supervise hooks install gemini` links once"
    door_at_prompt = True

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh or not session.get("agent_session_id"):
            return Resumed(argv)
        return Resumed([argv[0], "--resume", session["agent_session_id"], *argv[1:]])

    def hooks(self, argv: list[str]) -> bool:
        # `-e` names the run's extensions: ours among them or not, the user's choice stands
        return not any(a in ("-e", "--extensions") or a.startswith(("-e=", "--extensions=")) for a in argv[1:])

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked | None:
        return Hooked(argv, self.hook_env(socket)) if installed(env or {}) else None

    def door_here(self, env: Mapping[str, str]) -> str | None:
        return self.door if installed(env) else None

    def door_install(self, folder: Path) -> DoorInstall:
        return DoorInstall(
            extension_files(folder),
            ["gemini", "extensions", "link", str(folder), "--consent"],
            ["gemini", "extensions", "uninstall", EXTENSION],
            LINK_ENV,
            exists=r'Extension "[^"]+" is already installed',
            absent=r"Extension not found",
        )

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["gemini", "mcp", "add", "--scope", "user", *env, server.name, server.command, *server.args]


PROFILE = Gemini("gemini")
