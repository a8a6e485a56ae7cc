"""What supervise does for Claude Code in particular: its command line on resume, and a
per-run settings file that adds our SessionStart hook without touching the user's own
settings (Claude Code merges hooks from every settings source)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from .. import paths

RESUME_FLAGS = ("--resume", "-r")
CONTINUE_FLAGS = ("--continue", "-c")
HOOK_TIMEOUT = 60  # seconds Claude Code gives the hook; ours gives up well before


def without_resume(argv: list[str]) -> list[str]:
    """`argv` without any --resume [ID] / -r [ID] / --continue / -c: the old session's own
    resume flags must not fight the new one."""
    out: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
            if not arg.startswith("-"):
                continue
        if arg in RESUME_FLAGS:
            skip_value = True
            continue
        if arg in CONTINUE_FLAGS or arg.startswith("--resume="):
            continue
        out.append(arg)
    return out


def resume_argv(argv: list[str], agent_session_id: str | None) -> list[str]:
    """Resume Claude's own conversation when we know its id; else start it fresh."""
    argv = without_resume(argv)
    if agent_session_id:
        return [argv[0], "--resume", agent_session_id, *argv[1:]]
    return argv


def has_own_settings(argv: list[str]) -> bool:
    return any(a == "--settings" or a.startswith("--settings=") for a in argv[1:])


def hook_command() -> str:
    script = Path(__file__).resolve().parent / "hook.py"
    return f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(script))}"


def settings(resumed: bool) -> dict:
    # "startup" only for a resumed session started fresh: a plain start has nothing to give.
    matcher = "compact|resume" + ("|startup" if resumed else "")
    return {"hooks": {"SessionStart": [{"matcher": matcher, "hooks": [
        {"type": "command", "command": hook_command(), "timeout": HOOK_TIMEOUT}]}]}}


def with_hook(argv: list[str], settings_path: Path, resumed: bool) -> list[str]:
    """Write the settings file (private) and return the command line that uses it."""
    with paths.open_private(settings_path, "w", encoding="utf-8") as fh:
        json.dump(settings(resumed), fh, indent=2)
    return [argv[0], "--settings", str(settings_path), *argv[1:]]
