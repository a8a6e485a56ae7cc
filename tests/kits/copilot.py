"""GitHub Copilot CLI (npm @github/copilot), run offline: its fake model, a private HOME, and
how to tell from its screen that it is idle, busy or done compacting.

Its "bring your own key" mode (COPILOT_PROVIDER_BASE_URL with COPILOT_PROVIDER_TYPE=anthropic)
sends every model call to the fake Anthropic Messages API (tests/fakeapi.py) and needs no
GitHub login; COPILOT_OFFLINE=true turns off everything else that goes out (authentication,
telemetry, web tools, GitHub's MCP server, auto-update).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

from agentdriver import Screen
from fakeapi import FakeAnthropic, Request

NAME = "copilot"
PACKAGE = "@github/copilot"
VERSION = "1.0.102"
BINARY = "copilot"
MODEL = "claude-haiku-4.5"  # a model its catalog knows (its window and output limits)

ARGV: list[str] = []
# Its footer at the prompt: "← open sidebar · Interactive · Manual Approval · / commands · ? help
# · tab next tab"; while a turn runs the footer is "◉ Working esc esc edit prompt" instead, and a
# dialog covers the footer; /compact puts "◎ Compacting conversation history (0s)" above the input
# box and leaves the footer up.
IDLE = r"/ commands · \? help"
BUSY = r"^ ?\S Working\b|Compacting conversation history \(\d+s\)"
PERMISSION = r"Do you want to run this command\?"
COMPACT = "/compact"
# "● Compaction completed" with "│ A new checkpoint has been added to your session."
COMPACTED = r"Compaction completed"


def binary() -> Path:
    return Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / BINARY


def settings() -> dict:
    """~/.copilot/settings.json: no banner, tips or update downloads."""
    return {"banner": "never", "autoUpdate": False, "showTipsOnStartup": False, "beep": False}


def environment(base: Path, api_url: str) -> tuple[dict[str, str], Path]:
    """(env, project): a private HOME (~/.copilot), XDG dirs and TMPDIR under `base`, Copilot
    CLI's BYOK provider pointed at `api_url`, offline, and an empty git repository to run in."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    for d in (home / ".copilot", proj, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".copilot" / "settings.json").write_text(json.dumps(settings(), indent=2))
    # the folder trusted as "Yes, and remember this folder" writes it: no trust dialog
    (home / ".copilot" / "config.json").write_text(json.dumps({"trustedFolders": [str(proj)]}, indent=2))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": api_url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": "fake-key",
        "COPILOT_MODEL": MODEL,
        "COPILOT_AUTO_UPDATE": "false",
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no update check or install
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
    }
    return env, proj


# What it asks for when it compacts (/compact or automatically): the conversation so far, then
# a user message that ends with this line, sent with tool_choice "none".
COMPACTION_MARK = "respond only with the summary text"
SUMMARY = (
    "<overview>\nSummary of the conversation so far: the user is testing the terminal client with short turns.\n</overview>\n"
    "<history>\n1. The user sent numbered test messages\n   - each was answered with a short reply\n</history>\n"
    "<work_done>\nWork completed:\n- [x] Answered the test turns\n</work_done>\n"
    "<next_steps>\nImmediate next steps:\n- Answer the next turn\n</next_steps>"
)
TOO_LONG = "prompt is too long: 204858 tokens > 200000 maximum"
RATE_LIMIT = (
    "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. "
    "For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers "
    "for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."
)
LIMIT_RETRY_AFTER = 2  # seconds
SHELL_COMMAND = "mkdir -p build && touch build/approved.txt"


def is_compaction(req: Request) -> bool:
    return COMPACTION_MARK in req.last_user_text()


def said(req: Request) -> str:
    """The user's words of the request's last message, without the date block it puts first
    ("<current_datetime>...</current_datetime>") and a hook's context it puts after them
    ("<system_reminder>...</system_reminder>")."""
    text = re.sub(r"\A\s*<current_datetime>.*?</current_datetime>\s*", "", req.last_user_text(), flags=re.S)
    return re.sub(r"\s*<system_reminder>.*?</system_reminder>\s*\Z", "", text, flags=re.S)


def _line(req: Request) -> str:
    last = said(req).strip().splitlines()
    return last[-1] if last else ""


def rate_limited(retry_after: int = LIMIT_RETRY_AFTER) -> dict:
    """An API key past its rate limit: 429 rate_limit_error with retry-after."""
    return {
        "status": 429,
        "message": RATE_LIMIT,
        "headers": {
            "retry-after": str(retry_after),
            "anthropic-ratelimit-input-tokens-limit": "50000",
            "anthropic-ratelimit-input-tokens-remaining": "0",
            "anthropic-ratelimit-input-tokens-reset": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + retry_after)),
        },
    }


class Model(FakeAnthropic):
    """The fake Anthropic API with Copilot CLI's scenarios: `Reply to: <last line>` after a
    moment, streamed; its compaction request gets a summary in its <overview>/<history> format;
    `big N ...` reports N input tokens; `overflow ...` answers 400 "prompt is too long" once per
    text; `limit ...` answers 429 rate_limit_error every time; `run ...` asks for its shell tool,
    then says "The command finished."."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = MODEL, delay: float = 1.5):
        super().__init__(host, port, model)
        self.delay = delay
        self.overflowed: set[str] = set()
        self.default = self.answer

    def answer(self, req: Request) -> dict:
        slow = {"delay": self.delay, "chunk": 6, "chunk_delay": 0.05}
        if is_compaction(req):
            return {"text": SUMMARY, "delay": 2.0, "chunk": 12, "chunk_delay": 0.05, "usage": {"input_tokens": 900}}
        if req.has_tool_result:
            return {"text": "The command finished.", **slow}
        text = said(req).strip()
        line = _line(req)
        if line.startswith("overflow") and text not in self.overflowed:
            self.overflowed.add(text)
            return {"status": 400, "message": TOO_LONG, "delay": 0.5}
        if line.startswith("limit"):
            return {**rate_limited(), "delay": 0.3}
        if line.startswith("run") and req.tool("bash"):
            return {"tool_use": {"name": "bash", "input": {"command": SHELL_COMMAND, "description": "Make the build folder"}}, "delay": 1.0}
        reply: dict = {"text": f"Reply to: {line[:80] or '(empty)'}", **slow}
        m = re.match(r"big (\d+)", line)
        if m:
            reply["usage"] = {"input_tokens": int(m.group(1))}
        return reply


def _idle_now(text: str) -> bool:
    return bool(re.search(IDLE, text)) and not re.search(BUSY, text, re.M)


def idle(screen, timeout: float = 60.0, settle: float = 1.0) -> None:
    """Its idle line is up and no busy line, for `settle` seconds."""
    screen.settled(lambda text: _idle_now(text), timeout, settle)


view, hold, wait = Screen.shown, Screen.hold, Screen.wait_shown


def ready(screen, timeout: float = 60.0) -> None:
    """Started, its footer drawn and nothing busy."""
    idle(screen, timeout, settle=2.0)


def send(screen, text: str, wait_for: str | None = None, timeout: float = 60) -> None:
    """Type a message, Enter on its own, wait for `wait_for` (the busy line if not given) and
    then for the prompt."""
    screen.type(text)
    wait(screen, wait_for or BUSY, timeout)
    idle(screen, timeout)


def quit(screen) -> None:
    """/exit, as a user leaves it."""
    screen.type("/exit")
    deadline = time.monotonic() + 20
    while screen.child.isalive() and time.monotonic() < deadline:
        screen.pump(0.2)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own userPromptSubmitted hook in ~/.copilot/hooks/: it writes `marker` as it runs."""
    folder = Path(env["HOME"]) / ".copilot" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    mine = {"type": "command", "bash": f"touch {shlex.quote(str(marker))}", "timeoutSec": 10}
    (folder / "mine.json").write_text(json.dumps({"version": 1, "hooks": {"userPromptSubmitted": [mine]}}))


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
