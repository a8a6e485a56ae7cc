"""Codex's hooks as `-c` overrides give them for one run (SessionStart, which gives the
context, and PreCompact, a witness of each compaction as it starts), and the trust entries that
let them run: Codex runs an unmanaged hook only when `hooks.state` holds the hash of its
definition (as `codex app-server`'s `hooks/list` shows it: `currentHash`, `trustStatus`).
tests/test_codex_hook.py checks these against the pinned release."""

from __future__ import annotations

import json

EVENT = "SessionStart"
WITNESS = "PreCompact"
EVENT_NAMES = {EVENT: "session_start", WITNESS: "pre_compact"}  # as its keys and hashes spell them


def key(event: str = EVENT) -> str:
    """A hook's key: the `-c` overrides' layer (its pseudo file), its event, group and handler index."""
    return f"/<session-flags>/config.toml:{EVENT_NAMES[event]}:0:0"


KEY = key()
TIMEOUT = 60  # seconds Codex gives the hook; ours gives up well before
# Tokens of additionalContext Codex passes on whole (over it, it saves the text to a file and
# gives the model a preview): well above a context prompt's size. (Not 2,500, its default: a
# value equal to the default is left out of the hash.)
CONTEXT_LIMIT = 20_000
CONFIG_FLAGS = ("-c", "--config")


def group(command: str, matcher: str, event: str = EVENT) -> dict:
    """A matcher group with one command handler (as config.toml spells it); only SessionStart's
    gives context (PreCompact refuses a limit for it)."""
    handler = {"type": "command", "command": command, "timeout": TIMEOUT, "async": False}
    if event == EVENT:
        handler["additionalContextLimit"] = CONTEXT_LIMIT
    return {"matcher": matcher, "hooks": [handler]}


def trusted_hash(group: dict, event: str = EVENT) -> str:
    """What Codex compares with `hooks.state.<key>.trusted_hash`: the SHA-256 of the group's
    identity (event, matcher, handlers) as compact JSON with sorted keys, not ASCII-escaped."""
    identity = {"event_name": EVENT_NAMES[event], "matcher": group["matcher"], "hooks": group["hooks"]}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib  # (it loads OpenSSL; every start-up imports every profile)

    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _options(argv: list[str]) -> list[str]:
    """`argv`'s words before a `--` (after it, all are its prompt's)."""
    words = argv[1:]
    return words[: words.index("--")] if "--" in words else words


def _overrides(argv: list[str]) -> list[str]:
    """The `key=value` of each `-c`/`--config` in `argv` (any of its spellings)."""
    out, rest = [], _options(argv)
    while rest:
        arg = rest.pop(0)
        if arg in CONFIG_FLAGS:
            if rest:
                out.append(rest.pop(0))
        elif arg.startswith("--config="):
            out.append(arg[len("--config=") :])
        elif arg.startswith("-c") and not arg.startswith("--"):
            out.append(arg[2:])
    return out


def hooks_of_their_own(argv: list[str]) -> bool:
    """Whether `argv` gives hooks of its own by `-c` (ours would replace theirs), turns hooks
    off, or runs against a remote app server (where its hooks run, our socket is not)."""
    for override in _overrides(argv):
        key, _, value = override.partition("=")
        key = key.strip().replace('"', "").replace("'", "")
        if key == "hooks" or key.startswith("hooks.") or (key == "features.hooks" and value.strip() != "true"):
            return True
    args = _options(argv)
    if any(a == "--remote" or a.startswith("--remote=") or a == "--disable=hooks" for a in args):
        return True
    return any(a == "--disable" and b == "hooks" for a, b in zip(args, args[1:]))
