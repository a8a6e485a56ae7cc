"""Gemini CLI (npm @google/gemini-cli), run offline: the fake Gemini API (tests/fake_gemini.py),
a private HOME with its settings, and how to tell from its screen that it is idle or busy.
Used by scripts/agents/gemini.py (its recordings) and tests/test_agents_e2e.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

from conftest import SUPERVISE
from fake_gemini import FakeGemini

NAME = "gemini"
PACKAGE = "@google/gemini-cli"
VERSION = "0.61.0"
BINARY = "gemini"

ARGV: list[str] = []
IDLE = r"Type your message or @path/to/file"
BUSY = r"\(esc to cancel,|Compressing chat history|Allow execution of"
COMPACT = "/compress"
COMPACTED = r"Chat history compressed from \d+ to \d+ tokens"


def binary() -> Path:
    return Path(__file__).resolve().parent.parent / "agents" / "node_modules" / ".bin" / BINARY


class Model(FakeGemini):
    """The fake Gemini API as tests/fake_gemini.py scripts it: `Fake reply to: TEXT`."""


def settings(footer_pct: bool = False, threshold: float | None = None) -> dict:
    data: dict = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "ui": {"theme": "Default"},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
    }
    if footer_pct:
        data["ui"]["footer"] = {"hideContextPercentage": False}
    if threshold is not None:
        data["model"] = {"compressionThreshold": threshold}
    return data


def environment(base: Path, api_url: str, config: dict | None = None) -> tuple[dict[str, str], Path]:
    """A private HOME with ~/.gemini/settings.json, XDG dirs and TMPDIR under `base`, the API
    key and base URL of the fake, nothing fetched; returns (env, project folder)."""
    home, work, tmp = base / "home", base / "work", base / "tmp"
    for d in (home / ".gemini", work, tmp, home / ".config", home / ".cache", home / ".local" / "share", home / ".local" / "state"):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(config or settings(), indent=1))
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    # (not CI: under CI=true it takes itself for a batch job and wants its prompt on stdin)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "CLOUD_SHELL", "XDG_")) and k != "CI"}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        TMPDIR=str(tmp),
        GEMINI_API_KEY="fake-key",
        GOOGLE_GEMINI_BASE_URL=api_url,
        GEMINI_CLI_NO_RELAUNCH="true",
        NO_BROWSER="true",
        TERM="xterm-256color",
        COLORTERM="truecolor",
        npm_config_registry="http://127.0.0.1:9/",
    )
    return env, work


def idle(screen, timeout: float = 60.0, settle: float = 1.0) -> None:
    """Until the input placeholder is up and no busy line is, for `settle` seconds."""
    deadline = time.monotonic() + timeout
    since = None
    while time.monotonic() < deadline:
        screen.pump(0.1)
        text = screen.text()
        if re.search(IDLE, text) and not re.search(BUSY, text):
            since = since or time.monotonic()
            if time.monotonic() - since >= settle:
                return
        else:
            since = None
    raise AssertionError(f"never idle; the screen shows:\n{screen.text()[-3000:]}")


def ready(screen) -> None:
    screen.wait(IDLE, 60)
    idle(screen, 60, settle=2.0)


def quit(screen) -> None:
    screen.type("/quit")
    screen.wait(r"Agent powering down|Goodbye", 30)
    screen.pump(1.0)


def install(env: dict[str, str]) -> None:
    """supervise's door, installed as a user installs it (its extension, linked by Gemini CLI)."""
    subprocess.run([*SUPERVISE, "hooks", "install", NAME], env=env, check=True, capture_output=True, timeout=120)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own BeforeAgent hook in ~/.gemini/settings.json: it writes `marker` as it runs."""
    path = Path(env["HOME"]) / ".gemini" / "settings.json"
    data = json.loads(path.read_text())
    mine = {"type": "command", "command": f"touch {shlex.quote(str(marker))}"}
    data["hooks"] = {"BeforeAgent": [{"hooks": [mine]}]}
    path.write_text(json.dumps(data, indent=1))


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
