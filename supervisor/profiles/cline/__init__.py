"""Cline CLI (npm cline): its session files, resume by session id, its plugin door.

Read off its screen and its session files (transcript.py: a folder per session, each file
rewritten whole); its pattern file says the rest. Its hook files cannot give anything after a
compaction, and its plugins come from its own folders only, so its door is installed once, by
the user: `supervise hooks install cline` has `cline plugin install` copy supervise's plugin
(supervise.js) into ~/.cline/plugins. Its `beforeRun` hook asks for whatever is due as each of
the user's runs starts (a `/compact` runs outside any hook: its context goes with the user's
next words, after them, as a `<hook_context>` message of Cline's own); `beforeModel` gives a
compaction inside a run its context in the run's next requests. `--yolo` leaves plugins on.
Until it is installed the context is typed. `cline --id
ID` carries a session on; it has no flag for the folder's last one, so a session resumed
with no id recorded starts anew and is given its context.

supervise's MCP server is given for one run in a settings file of its own, named by
CLINE_MCP_SETTINGS_PATH (the user's servers copied in, ours laid over them). Its tools, named
`supervise__search` ..., run without a dialog under its default (auto-approve all); 3.0.65
has no rule that allows one tool, so where the user turned auto-approve off they ask."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import DoorInstall, Hooked, McpServer, Profile, Resumed, js_door, without_options
from . import transcript

PLUGIN = Path(__file__).with_name("supervise.js")
PLUGIN_NAME = "supervise"  # as `cline plugin uninstall` takes it
MCP_ENV = "CLINE_MCP_SETTINGS_PATH"
MCP_FILE = "cline_mcp_settings.json"
# Options that pick which session it opens (the one given replaces them), with a value.
_SESSION_VALUE = ("--id",)


def without_session(argv: list[str]) -> list[str]:
    """`argv` without the `--id ID` (`--id=ID`) it was run with."""
    return without_options(argv, _SESSION_VALUE)


def mcp_settings_path(env: Mapping[str, str]) -> Path:
    """Where it reads its MCP servers from (as it resolves it)."""
    if env.get(MCP_ENV, "").strip():
        return Path(env[MCP_ENV].strip()).expanduser()
    return transcript.data_dir(env) / "settings" / MCP_FILE


def mcp_entry(server: McpServer) -> dict:
    return {"command": server.command, "args": list(server.args), "env": dict(server.env), "disabled": False}


def plugin_files(folder: Path) -> dict[Path, str]:
    """The plugin, in a folder named for it: `cline plugin install` names what it installs after
    the folder (a package.json would have it run npm)."""
    return js_door(folder / PLUGIN_NAME / PLUGIN.name, PLUGIN)


def plugins_dir(env: Mapping[str, str]) -> Path:
    """Where `cline plugin install` puts what it installs (its config folder's plugins)."""
    top = env.get("CLINE_DIR", "").strip()
    home = env.get("HOME") or os.path.expanduser("~")
    return (Path(top).expanduser() if top else Path(home) / ".cline") / "plugins" / "_installed" / "local"


def installed(env: Mapping[str, str]) -> bool:
    """Its plugins hold a copy of this supervise's plugin (one an older supervise left is not)."""
    ours = {path.name: text for path, text in plugin_files(Path()).items()}

    def same(package: Path) -> bool:
        try:
            return all((package / name).read_text(encoding="utf-8") == text for name, text in ours.items())
        except OSError:
            return False

    return any(same(package) for package in plugins_dir(env).glob(f"{PLUGIN_NAME}-*/package"))


class Cline(Profile):
    transcript = transcript
    # `--version` makes no network call; this keeps a start-up from looking for an update
    quiet_env = {"CLINE_NO_AUTO_UPDATE": "1"}
    version_timeout = 10.0  # a 150 MB binary: over two seconds to start the first time
    mcp_note = None
    door = "its beforeRun and beforeModel hooks, in a plugin `supervise hooks install cline` installs once"
    door_at_prompt = True  # its `/compact` runs outside every hook: the context goes as the next run starts

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        """`cline --id ID` carries its own session on; with none recorded it starts anew."""
        argv = without_session(argv)
        if fresh:
            return Resumed(argv)
        if session.get("agent_session_id"):
            return Resumed([argv[0], "--id", session["agent_session_id"], *argv[1:]])
        note = "supervise: cline has no flag that opens the folder's last session (`cline --id ID` opens one): it starts anew, with the context given"
        return Resumed(argv, note=note)

    def hooks(self, argv: list[str]) -> bool:
        return True  # `--yolo` turns its hook files off, not its plugins

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked | None:
        return Hooked(argv, {hook.SOCKET_ENV: socket}) if installed(env or {}) else None

    def door_here(self, env: Mapping[str, str]) -> str | None:
        return self.door if installed(env) else None

    def door_install(self, folder: Path) -> DoorInstall:
        return DoorInstall(
            plugin_files(folder),
            # --force: a copy installed before is replaced by this supervise's
            ["cline", "plugin", "install", str(folder / PLUGIN_NAME), "--force"],
            ["cline", "plugin", "uninstall", PLUGIN_NAME],
            exists=r"Plugin is already installed at \S+",
            absent=r'No plugin found matching "[^"]*"',
        )

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        theirs: object = {}
        path = mcp_settings_path(env)
        if path.is_file():
            try:
                theirs = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None  # theirs stays as it is, and it says what is wrong with it
        if not isinstance(theirs, dict):
            return None
        servers = theirs.get("mcpServers")
        servers = dict(servers) if isinstance(servers, dict) else {}
        servers[server.name] = mcp_entry(server)
        mine = folder / MCP_FILE
        content = json.dumps({**theirs, "mcpServers": servers}, indent=2) + "\n"
        return Hooked(argv, {MCP_ENV: str(mine)}, files={mine: content})

    def mcp_add(self, server: McpServer) -> list[str]:
        # it takes no environment for a server: `env` sets what ours needs
        command = ["env", *(f"{k}={v}" for k, v in server.env.items()), server.command] if server.env else [server.command]
        return ["cline", "mcp", "add", server.name, "--yes", "--", *command, *server.args]


PROFILE = Cline("cline")
