"""Qwen Code (npm @qwen-code/qwen-code), run offline: its fake model, a private HOME, and how
to tell from its screen that it is idle, busy or done compacting.

Qwen Code is a fork of Gemini CLI that speaks several providers; here it runs on its
`anthropic` auth type (settings.json `security.auth.selectedType`), so the fake Anthropic
Messages API (tests/fakeapi.py) serves it: `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and
`ANTHROPIC_MODEL`, no login.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from fakeapi import FakeAnthropic, Request

NAME = "qwen"
PACKAGE = "@qwen-code/qwen-code"
VERSION = "0.24.4"
BINARY = "qwen"
MODEL = "claude-sonnet-4-5"  # a 200k window to Qwen Code: automatic compaction from 167,000 tokens

ARGV: list[str] = []
IDLE = r"Type your message or @path/to/file"
# its spinner line "⠋ Initiating thoughtful gaze... (5s · esc to cancel)", a compaction's
# "Compressing chat history", its footer while a turn runs ("Enter to steer · Ctrl+Q to queue"),
# and a tool's approval dialog (it waits for an answer, not a message)
BUSY = r"esc to cancel\)|Compressing chat history|Enter to steer · |Allow execution of|Waiting for user confirmation"
PERMISSION = r"Allow execution of"  # its dialog: "Allow execution of: 'mkdir, touch'?" / "› 1. Yes, allow once"
LIMIT_SHOWN = r"Quota exhausted: "  # "✕ Quota exhausted: <the API's message>" under the turn
COMPACT = "/compress"
COMPACTED = r"Chat history compressed from \d+ to ~?\d+ tokens"

# What Qwen Code asks for when it compacts (its compression prompt's last line).
COMPRESSION_MARK = "<state_snapshot>"
SUMMARY = (
    "<analysis>The user sent a few short test messages.</analysis>\n"
    "<state_snapshot>\n"
    "  <overall_goal>Summary of the conversation so far: the user is testing the terminal client.</overall_goal>\n"
    "  <key_knowledge>Every message was answered with a short reply.</key_knowledge>\n"
    "  <current_plan>1. [DONE] Answer the test turns.</current_plan>\n"
    "</state_snapshot>"
)
TOO_LONG = "prompt is too long: 204858 tokens > 200000 maximum"
RETRY_AFTER = 7380  # seconds (2 hours 3 minutes) from the first `limit` answer to the reset
SHELL_COMMAND = "mkdir -p build && touch build/approved.txt"  # it writes: Qwen Code asks first


def binary() -> Path:
    return Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / BINARY


def _words(req: Request) -> str:
    last = req.last_user_text().strip().splitlines()
    return last[-1] if last else ""


class Model(FakeAnthropic):
    """The fake Anthropic API with Qwen Code's scenarios: `Reply to: <last line>`; its
    compression request gets a <state_snapshot> after 2 s (the spinner stays up a moment);
    `big N ...` reports N input tokens; `overflow ...` answers 400 "prompt is too long" (once per text);
    `limit ...` answers a spent usage quota (429, `retry-after`, the reset in the message); `run ...` asks for
    its shell tool (`run_shell_command`), then says "The command finished."."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = MODEL):
        super().__init__(host, port, model)
        self.default = self.answer
        self.overflowed: set[str] = set()  # each `overflow ...` text is refused once
        self.resets: float | None = None  # when the `limit` quota resets (epoch seconds)

    def usage_limit(self) -> dict:
        """A spent usage quota: 429 with `retry-after` and a message naming the quota and its
        reset (UTC). Qwen Code stops the turn at once on such a message ("quota" with
        "exceeded" and "reset at"); a plain 429 it retries for minutes with only its spinner."""
        now = time.time()
        self.resets = self.resets or now + RETRY_AFTER
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.resets))
        return {
            "status": 429,
            "message": f"You have exceeded your 5-hour usage quota. Your quota will reset at {at} UTC.",
            "headers": {"retry-after": str(max(1, round(self.resets - now)))},
        }

    def answer(self, req: Request) -> dict:
        if COMPRESSION_MARK in req.last_user_text():
            return {"text": SUMMARY, "delay": 2.0, "usage": {"input_tokens": 900}}
        line = _words(req)
        if req.has_tool_result:
            return {"text": "The command finished."}
        if line.startswith("overflow") and line not in self.overflowed:
            self.overflowed.add(line)
            return {"status": 400, "message": TOO_LONG}
        if line.startswith("limit"):
            return self.usage_limit()
        if line.startswith("run") and req.tool("run_shell_command"):
            return {"tool_use": {"name": "run_shell_command", "input": {"command": SHELL_COMMAND, "description": "Say hello."}}}
        reply: dict = {"text": f"Reply to: {line[:80] or '(empty)'}", "delay": 1.0}
        m = re.match(r"big (\d+)", line)
        if m:
            reply["usage"] = {"input_tokens": int(m.group(1))}
        return reply


def settings(**extra) -> dict:
    """~/.qwen/settings.json: the anthropic auth type on MODEL, asking before tools run, and
    nothing that updates, reports usage or makes calls of its own in the background."""
    data: dict = {
        "security": {"auth": {"selectedType": "anthropic"}, "folderTrust": {"enabled": False}},
        "model": {"name": MODEL},
        "general": {"enableAutoUpdate": False, "showSessionRecap": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
        "ui": {"hideTips": True, "enableFollowupSuggestions": False, "enableWelcomeBack": False, "enableUserFeedback": False},
        "tools": {"approvalMode": "default", "useRipgrep": False},
    }
    for key, value in extra.items():
        data.setdefault(key, {}).update(value)
    return data


def environment(base: Path, api_url: str, **extra) -> tuple[dict[str, str], Path]:
    """(env, project): a private HOME (~/.qwen/settings.json), XDG dirs and TMPDIR under
    `base`, Qwen Code pointed at `api_url`, and an empty git repository to run in. `extra`:
    more settings, table by table."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    for d in (home / ".qwen", proj, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings(**extra), indent=1))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "fake-key",
        "ANTHROPIC_MODEL": MODEL,
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no update check or install
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "NO_BROWSER": "true",
    }
    return env, proj


def _idle_now(text: str) -> bool:
    return bool(re.search(IDLE, text)) and not re.search(BUSY, text)


def ready(screen, timeout: float = 60.0) -> None:
    """Until its input box is up (the placeholder) and nothing is busy."""
    idle(screen, timeout)


def idle(screen, timeout: float = 60.0, settle: float = 1.0) -> None:
    """Until the placeholder shows and no busy line does, for `settle` seconds."""
    deadline = time.monotonic() + timeout
    since = None
    while time.monotonic() < deadline:
        screen.pump(0.1)
        if _idle_now(screen.text()):
            since = since or time.monotonic()
            if time.monotonic() - since >= settle:
                return
        else:
            since = None
    raise AssertionError(f"never idle; the screen shows:\n{screen.text()[-3000:]}")


def quit(screen) -> None:
    """/quit, as a user leaves it; it says goodbye and exits."""
    screen.type("/quit")
    screen.wait(r"Agent powering down|Goodbye|To continue this session", 30)
    screen.pump(1.0)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own SessionStart hook in ~/.qwen/settings.json: it writes `marker` as it runs."""
    path = Path(env["HOME"]) / ".qwen" / "settings.json"
    settings = json.loads(path.read_text())
    command = f"touch {marker}"
    settings.setdefault("hooks", {})["SessionStart"] = [{"matcher": "startup", "hooks": [{"type": "command", "command": command}]}]
    path.write_text(json.dumps(settings, indent=1))


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
