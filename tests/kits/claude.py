"""Claude Code (npm @anthropic-ai/claude-code), run offline: the fake Anthropic API (its
compaction answered after a moment, as a real summary takes), a private HOME where it is
onboarded and trusts the project, and how to tell from its screen that it is idle. Used by
tests/test_agents_e2e.py; its own deeper tests are tests/test_claude_e2e.py."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from agentdriver import CLAUDE_IDLE, CLAUDE_MODEL, claude_env
from fakeapi import FakeAnthropic, default_reply

NAME = "claude"
PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.330"
BINARY = "claude"
ARGV = ["--model", CLAUDE_MODEL]
IDLE = CLAUDE_IDLE
COMPACT = "/compact"
COMPACTED = r"Compacted"


def binary() -> Path:
    return Path(__file__).resolve().parent.parent / "agents" / "node_modules" / ".bin" / BINARY


class Model(FakeAnthropic):
    def __init__(self) -> None:
        super().__init__()
        # Answered at once, it may finish a turn or a compaction before it ever draws its
        # spinner, and `ps` never shows it working: a model takes a moment.
        self.default = lambda r: {**default_reply(r), "delay": 0.8}


def environment(base: Path, api_url: str) -> tuple[dict[str, str], Path]:
    project = base / "work"
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return claude_env(base / "claude-home", project, api_url), project


def idle(screen, timeout: float = 60.0) -> None:
    screen.wait(IDLE, timeout)
    screen.pump(0.5)
    screen.wait(IDLE, timeout)


def ready(screen) -> None:
    idle(screen)


def quit(screen) -> None:
    screen.child.sendcontrol("c")
    time.sleep(0.3)
    screen.child.sendcontrol("c")
    deadline = time.monotonic() + 10
    while screen.child.isalive() and time.monotonic() < deadline:
        screen.pump(0.2)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own SessionStart hook in ~/.claude/settings.json: it writes `marker` as it runs."""
    path = Path(env["HOME"]) / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(path.read_text()) if path.exists() else {}
    hook = {"type": "command", "command": f"touch {marker}"}
    settings.setdefault("hooks", {})["SessionStart"] = [{"matcher": "startup", "hooks": [hook]}]
    path.write_text(json.dumps(settings))


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
DOOR_SEES_COMPACT = False  # its PreCompact hook would print our command line on its screen: the screen sees the start
