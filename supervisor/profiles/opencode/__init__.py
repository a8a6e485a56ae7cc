"""OpenCode (npm opencode-ai): its database, resume by session id, a plugin and MCP in its config variable.

Read off its screen and its database (transcript.py); resumed with `--session ID`
(`--continue`, the folder's last session, when its id was not read); its pattern file says
the rest. Both of supervise's additions are given for one run in OPENCODE_CONFIG_CONTENT, which
OpenCode merges over the user's own config files (a value the user set already is merged with,
not replaced): a plugin of ours (supervise.js, beside the user's own plugins), which asks the
recorder's hook socket for the context after a compaction and as the user sends a message and
puts it in the session before their words, nothing typed (typed when the user runs it without
external plugins); and supervise's MCP server, its tools named `supervise_*`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import Hooked, McpServer, Profile, Resumed, by_session_or_continue, js_door, without_options
from . import transcript

CONFIG_ENV = "OPENCODE_CONFIG_CONTENT"
PURE_ENV = "OPENCODE_PURE"  # external plugins off (as `--pure` sets it)
PLUGIN = Path(__file__).with_name("supervise.js")
# Given a plugin, its start-up waits for the `npm install` it starts in each config folder: offline,
# npm's retries make that over a minute; with none it fails at once. Set for the start-up only:
# the plugin unsets what UNSET_ENV names as it loads, so nothing the agent runs sees it.
NPM_RETRIES = "npm_config_fetch_retries"
UNSET_ENV = "SUPERVISE_HOOK_UNSET"
# Options that choose the session it opens (the resumed one replaces them): with a value, and not.
SESSION_VALUE = ("-s", "--session")
SESSION_FLAG = ("-c", "--continue", "--fork")


def without_session(argv: list[str]) -> list[str]:
    return without_options(argv, SESSION_VALUE, SESSION_FLAG)


# JSON with comments, as OpenCode reads its config: strings kept whole, comments and trailing commas dropped.
_COMMENTS = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING = re.compile(r'("(?:\\.|[^"\\])*")|,(?=\s*[}\]])')


def jsonc(text: str) -> object:
    kept = lambda m: m.group(1) or ""  # noqa: E731
    return json.loads(_TRAILING.sub(kept, _COMMENTS.sub(kept, text)))


def merged(mine: Mapping, theirs: Mapping) -> dict:
    """`theirs` with `mine` laid over it, table by table."""
    out = dict(theirs)
    for key, value in mine.items():
        out[key] = merged(value, out[key]) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) else value
    return out


def _passed(env: Mapping[str, str], name: str) -> dict | None:
    """The config object the user passes in variable `name` ({} if none); None when it is not one."""
    theirs: object = {}
    if env.get(name):
        try:
            theirs = jsonc(env[name])
        except ValueError:
            return None
    return theirs if isinstance(theirs, dict) else None


def their_config(env: Mapping[str, str], name: str) -> dict | None:
    """The config the user passes in variable `name` (empty if none), its `permission` as a
    table; None when it cannot be read (it stays as it is, and the agent says what is wrong)."""
    theirs = _passed(env, name)
    if theirs is None:
        return None
    if isinstance(theirs.get("permission"), str):  # "ask": every tool, as it reads it
        theirs["permission"] = {"*": theirs["permission"]}
    return theirs


def pure(argv: list[str], env: Mapping[str, str], name: str) -> bool:
    """Whether it runs without external plugins: `--pure`, or variable `name` true as it reads it."""
    return "--pure" in argv[1:] or (env.get(name) or "").lower() in ("1", "true")


def with_plugin(env: Mapping[str, str], name: str, path: Path) -> str | None:
    """The config the user passes in variable `name` with the plugin at `path` after their own
    plugins (it concatenates the lists of every config, not this one's with ours); None when
    theirs cannot be read (it stays as it is)."""
    theirs = _passed(env, name)
    if theirs is None or not isinstance(theirs.get("plugin", []), list):
        return None
    return json.dumps({**theirs, "plugin": [*theirs.get("plugin", []), path.as_uri()]})


def plugin_hook(argv: list[str], folder: Path, socket: str, env: Mapping[str, str], name: str, pure_env: str) -> Hooked | None:
    """Our plugin, copied into the run's private `folder`, given in config variable `name`;
    nothing (its context typed) when it runs without external plugins or theirs cannot be read."""
    path = folder / PLUGIN.name
    config = None if pure(argv, env, pure_env) else with_plugin(env, name, path)
    if config is None:
        return None
    return Hooked(argv, {name: config, hook.SOCKET_ENV: socket}, js_door(path, PLUGIN))


def mcp_config(server: McpServer) -> dict:
    entry = {"type": "local", "command": [server.command, *server.args], "environment": server.env, "enabled": True}
    # read-only lookups never stop at a prompt, even where the user has every tool ask
    return {"mcp": {server.name: entry}, "permission": {f"{server.name}_*": "allow"}}


class OpenCode(Profile):
    mcp_note = None
    transcript = transcript
    door = "a plugin for the run (OPENCODE_CONFIG_CONTENT)"

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        return by_session_or_continue(argv, session, fresh, without_session)

    def hooks(self, argv: list[str]) -> bool:
        return "--pure" not in argv[1:]

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked | None:
        env = env or {}
        hooked = plugin_hook(argv, folder, socket, env, CONFIG_ENV, PURE_ENV)
        if hooked is None or any(k.lower() == NPM_RETRIES for k in env):  # (npm reads its variables in any case)
            return hooked
        return Hooked(hooked.argv, {**hooked.env, NPM_RETRIES: "0", UNSET_ENV: NPM_RETRIES}, hooked.files)

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        theirs = their_config(env, CONFIG_ENV)
        if theirs is None:
            return None
        return Hooked(argv, {CONFIG_ENV: json.dumps(merged(mcp_config(server), theirs))})

    def mcp_add(self, server: McpServer) -> list[str]:
        # its `mcp add` takes the server on its command line, no question asked (seen on 1.18.33)
        env = [arg for k, v in server.env.items() for arg in ("--env", f"{k}={v}")]
        return ["opencode", "mcp", "add", server.name, *env, "--", server.command, *server.args]


PROFILE = OpenCode("opencode")
