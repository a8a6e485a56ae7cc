"""OpenCode (npm opencode-ai): its database, resume by session id, MCP in its config variable.

Read off its screen and its database (transcript.py), given its context by typing; resumed with
`--session ID` (`--continue`, the folder's last session, when its id was not read); its
pattern file says the rest. supervise's MCP server is given for one run in
OPENCODE_CONFIG_CONTENT, which OpenCode merges over the user's own config files (a value
the user set already is merged with, not replaced); its tools are named `supervise_*`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from ..base import Hooked, McpServer, Profile, Resumed, by_session_or_continue, without_options
from . import transcript

CONFIG_ENV = "OPENCODE_CONFIG_CONTENT"
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


def their_config(env: Mapping[str, str], name: str) -> dict | None:
    """The config the user passes in variable `name` (empty if none), its `permission` as a
    table; None when it cannot be read (it stays as it is, and the agent says what is wrong)."""
    theirs: object = {}
    if env.get(name):
        try:
            theirs = jsonc(env[name])
        except ValueError:
            return None
    if not isinstance(theirs, dict):
        return None
    if isinstance(theirs.get("permission"), str):  # "ask": every tool, as it reads it
        theirs["permission"] = {"*": theirs["permission"]}
    return theirs


def mcp_config(server: McpServer) -> dict:
    entry = {"type": "local", "command": [server.command, *server.args], "environment": server.env, "enabled": True}
    # read-only lookups never stop at a prompt, even where the user has every tool ask
    return {"mcp": {server.name: entry}, "permission": {f"{server.name}_*": "allow"}}


class OpenCode(Profile):
    mcp_note = None
    transcript = transcript

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        return by_session_or_continue(argv, session, fresh, without_session)

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
