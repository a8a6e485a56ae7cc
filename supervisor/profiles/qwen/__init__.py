"""Qwen Code (npm @qwen-code/qwen-code): read off its screen, given its context by its own hook.

Its own record is one JSON-lines file per session (transcript.py). It carries a session on
by its id (`--resume ID`), or the folder's last (`--continue`). Its hooks are given for one
run as its system defaults (`QWEN_CODE_SYSTEM_DEFAULTS_PATH`, a private file holding the
defaults it replaces and our hook): the lowest layer of its settings, read whatever the
folder's trust, and its hooks run beside the user's own. The hook (source `compact` after
a compaction, `resume` on `--resume`) puts the context in its system instruction.
supervise's MCP server is given for one run by `--mcp-config FILE` (over the servers of its
settings files), marked `trust` so its read-only tools run without a dialog."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import Hooked, HookScript, McpServer, Resumed, without_options
from . import transcript

MCP_FILE = "qwen-mcp.json"
DEFAULTS_FILE = "qwen-system-defaults.json"
DEFAULTS_ENV = "QWEN_CODE_SYSTEM_DEFAULTS_PATH"
SETTINGS_VERSION = 4  # a file of an older one it would migrate, and write back
HOOK_TIMEOUT = 60  # seconds it gives the hook; ours gives up well before


# options that carry a session on, and whether each takes a value
def without_resume(argv: list[str]) -> list[str]:
    """`argv` without the options it carried a session on with: the new ones replace them
    (`--resume` alone opens its session picker)."""
    return without_options(argv, ("--resume", "-r", "--session-id"), ("--continue", "-c"))


def mcp_config(server: McpServer) -> dict:
    entry = {"command": server.command, "args": list(server.args), "env": server.env, "trust": True}
    return {"mcpServers": {server.name: entry}}


def hidden_defaults(env: Mapping[str, str]) -> Path:
    """The system defaults file our own takes the place of (as Qwen Code finds it)."""
    if env.get(DEFAULTS_ENV):
        return Path(env[DEFAULTS_ENV])
    system = env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or "/etc/qwen-code/settings.json"
    return Path(system).parent / "system-defaults.json"


def defaults(hidden: dict, at_start: bool) -> dict:
    """The system defaults it is given: `hidden`'s, with our SessionStart hook added to its own."""
    matcher = "compact|resume" + ("|startup" if at_start else "")
    ours = {"matcher": matcher, "hooks": [{"type": "command", "command": hook.command(), "timeout": HOOK_TIMEOUT}]}
    witness = {"hooks": [{"type": "command", "command": hook.command("source=precompact"), "timeout": HOOK_TIMEOUT}]}
    hooks = dict(hidden.get("hooks") or {})
    hooks["SessionStart"] = [*(hooks.get("SessionStart") or []), ours]
    # a witness of each compaction as it starts; it prints nothing (its context would steer the summary)
    hooks["PreCompact"] = [*(hooks.get("PreCompact") or []), witness]
    return {**hidden, "$version": SETTINGS_VERSION, "hooks": hooks}


def read_defaults(path: Path) -> dict | None:
    """The defaults in `path` ({} for no file); None when they cannot be carried over as they are
    (not a settings object of this version: the context is typed instead)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and data.get("$version") == SETTINGS_VERSION and isinstance(data.get("hooks", {}), dict)
    return data if ok else None


class Qwen(HookScript):
    transcript = transcript
    mcp_note = None
    door = "its SessionStart hook, in system defaults of the run's own (QWEN_CODE_SYSTEM_DEFAULTS_PATH)"

    def hooks(self, argv: list[str]) -> bool:
        return not any(a in ("--bare", "--safe-mode") for a in argv[1:])  # those run no hooks

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked | None:
        hidden = read_defaults(hidden_defaults(env or {}))
        if hidden is None:
            return None
        path = folder / DEFAULTS_FILE
        text = json.dumps(defaults(hidden, at_start), indent=2)
        return Hooked(argv, {DEFAULTS_ENV: str(path), **self.hook_env(socket)}, {path: text})

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        argv = without_resume(argv)
        if fresh:
            return Resumed(argv)
        own = session.get("agent_session_id")
        if own:
            return Resumed([argv[0], "--resume", own, *argv[1:]])
        return Resumed(
            [argv[0], "--continue", *argv[1:]],
            note="supervise: Qwen Code's own session id was not recorded: it carries on this folder's last conversation",
        )

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        if any(a == "--mcp-config" or a.startswith("--mcp-config=") for a in argv[1:]):
            return None  # one file a run: the user's own stays
        path = folder / MCP_FILE
        return Hooked([argv[0], f"--mcp-config={path}", *argv[1:]], {}, {path: json.dumps(mcp_config(server), indent=2)})

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [f"--env={k}={v}" for k, v in server.env.items()]
        return ["qwen", "mcp", "add", "--scope", "user", "--trust", *env, server.name, server.command, *server.args]


PROFILE = Qwen("qwen")
