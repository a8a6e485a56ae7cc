"""Kilo Code CLI (npm @kilocode/cli), built on OpenCode: its database, resume by session id.

Read off its screen and its database (transcript.py, OpenCode's under its own name); resumed with
`--session ID` as OpenCode is; its pattern file says the rest. It runs OpenCode's plugins, so it
is given its context as OpenCode is: our plugin (OpenCode's supervise.js) in KILO_CONFIG_CONTENT,
beside the user's own, nothing typed (typed when the user runs it without external plugins).

supervise's MCP server is given for one run in KILO_CONFIG_CONTENT too, which it merges over the
user's own config files as OpenCode does its own variable; its tools are named `supervise_*`.
When the user has set KILO_PERMISSION (a permission table laid over every config, its new rules
after the config's; the last rule that matches wins), the tools' rule goes there instead. Both
come with KILO_NO_DAEMON: a daemon of its own already running would serve the run with the
plugins and servers it was started with, not these."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed, by_session_or_continue, without_options
from ..opencode import mcp_config, merged, plugin_hook, their_config
from . import transcript

CONFIG_ENV = "KILO_CONFIG_CONTENT"
PERMISSION_ENV = "KILO_PERMISSION"
PURE_ENV = "KILO_PURE"
NO_DAEMON_ENV = "KILO_NO_DAEMON"
# Options that pick which session it opens (the one given replaces them), with a value or not.
_SESSION_VALUE = ("-s", "--session")
_SESSION_FLAG = ("-c", "--continue", "--fork", "--cloud-fork")


def without_session(argv: list[str]) -> list[str]:
    """`argv` without the options it was run with that choose a session."""
    return without_options(argv, _SESSION_VALUE, _SESSION_FLAG)


def permission_overlay(value: str | None, server: McpServer) -> str | None:
    """The user's KILO_PERMISSION with the server's tools allowed after their own rules (a
    "*" there would otherwise ask); None when they set none, or one it cannot read (it skips
    that itself)."""
    if not value:
        return None
    try:
        theirs = json.loads(value)
    except ValueError:
        return None
    if isinstance(theirs, str):
        theirs = {"*": theirs}
    if not isinstance(theirs, dict):
        return None
    rule = f"{server.name}_*"
    return json.dumps({**{k: v for k, v in theirs.items() if k != rule}, rule: "allow"})


def own_process(env: Mapping[str, str]) -> dict[str, str]:
    """What keeps the run in a process of its own, with its own config (any value is taken as set)."""
    return {NO_DAEMON_ENV: env.get(NO_DAEMON_ENV) or "1"}


class Kilo(Profile):
    # `--version` makes no network call; these keep a start-up from updating or reporting
    quiet_env = {"KILO_DISABLE_AUTOUPDATE": "1", "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_MODELS_FETCH": "1"}
    version_timeout = 10.0
    mcp_note = None
    transcript = transcript
    door = "a plugin for the run (KILO_CONFIG_CONTENT)"

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        return by_session_or_continue(argv, session, fresh, without_session)

    def hooks(self, argv: list[str]) -> bool:
        return "--pure" not in argv[1:]

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked | None:
        hooked = plugin_hook(argv, folder, socket, env or {}, CONFIG_ENV, PURE_ENV)
        return None if hooked is None else Hooked(hooked.argv, {**hooked.env, **own_process(env or {})}, hooked.files)

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        theirs = their_config(env, CONFIG_ENV)
        if theirs is None:
            return None
        mine = mcp_config(server)
        overlay = permission_overlay(env.get(PERMISSION_ENV), server)
        if overlay is None:
            return Hooked(argv, {CONFIG_ENV: json.dumps(merged(mine, theirs)), **own_process(env)})
        # the rule only in the overlay: a key the config has already keeps its place before theirs
        del mine["permission"]
        return Hooked(argv, {CONFIG_ENV: json.dumps(merged(mine, theirs)), PERMISSION_ENV: overlay, **own_process(env)})

    def mcp_add(self, server: McpServer) -> list[str]:
        env = [arg for k, v in server.env.items() for arg in ("--env", f"{k}={v}")]
        return ["kilo", "mcp", "add", server.name, *env, "--", server.command, *server.args]


PROFILE = Kilo("kilo")
