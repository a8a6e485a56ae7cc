"""OpenCode (npm opencode-ai), run offline: its fake model (the fake Anthropic API with
OpenCode's scenario replies), a private HOME (tests/agentdriver.opencode_env), and how to tell
from its screen that it is idle or busy. Used by scripts/agents/opencode.py (its recordings)
and tests/test_agents_e2e.py."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from agentdriver import opencode_env, Screen
from fakeapi import FakeAnthropic, Request, go_usage_limit

NAME = "opencode"
PACKAGE = "opencode-ai"
VERSION = "1.18.33"
BINARY = "opencode"
MODEL = "claude-haiku-4-5"  # no CLI or SDK marks it as retiring
ARGV: list[str] = []
COMPACT = "/compact"
COMPACTED = r"Compaction · .* · \d"
LIMIT_RESET = 7380  # seconds from the first limited answer to the reset (the gateway's retry-after): 2 hours 3 minutes
TOO_LONG = "prompt is too long: 204858 tokens > 200000 maximum"
SUMMARY = "## Goal\nContinue the test conversation.\n\n## Progress\nAnswered numbered turns."
IDLE = "ctrl+p commands"
BUSY = "esc interrupt"
ROWS = 40  # the PTY is 120x40 (common.recording)
KEY_DELAY = 0.05  # seconds between typed characters


def binary() -> Path:
    return Path(__file__).resolve().parent.parent / "agents" / "node_modules" / ".bin" / BINARY


# ---- the fake model -------------------------------------------------------------------


def _system(req: Request) -> str:
    system = req.body.get("system", "")
    return "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)


def is_compaction(req: Request) -> bool:
    """OpenCode 1.18's summary request: no tools, system "You are a context summarization
    agent...", the conversation quoted in one user message. (Its title request has no tools
    either: "You are a title generator...".)"""
    return not req.body.get("tools") and "context summarization agent" in _system(req)[:300]


def _last_user_text(req: Request) -> str:
    """The user's last words, not a tool result."""
    for message in reversed(req.body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        if texts:
            return texts[-1]
        return ""
    return ""


def _after_tool(req: Request) -> bool:
    messages = req.body.get("messages", [])
    last = messages[-1] if messages else {}
    content = last.get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


class Replies:
    """OpenCode's scenario replies, as a rule of the fake Anthropic API."""

    def __init__(self):
        self.overflowed: set[str] = set()
        self.refuse_compaction = False
        self.limit_resets: float | None = None  # when the usage limit `limit ...` hit resets

    def __call__(self, req: Request) -> dict:
        slow = {"delay": 2.0, "chunk": 6, "chunk_delay": 0.05}
        if is_compaction(req):
            if self.refuse_compaction:  # (OpenCode leaves the overflowing message out of it)
                self.refuse_compaction = False
                return {"status": 400, "message": TOO_LONG}
            return {"text": SUMMARY, "delay": 3.0, "chunk": 12, "chunk_delay": 0.05}
        if not req.body.get("tools"):
            return {"text": "Test session"}  # the title
        if _after_tool(req):
            return {"text": "The command finished.", **slow}
        text = _last_user_text(req).strip()
        first = text.splitlines()[0] if text else ""
        if first.startswith("overflow") and text not in self.overflowed:
            self.overflowed.add(text)
            self.refuse_compaction = first.startswith("overflow again")
            return {"status": 400, "message": TOO_LONG}
        if first.startswith("limit"):
            # OpenCode Go's usage limit until LIMIT_RESET seconds after the first answer, then
            # the turn is answered (OpenCode tries again by itself when retry-after is over)
            now = time.time()
            self.limit_resets = self.limit_resets or now + LIMIT_RESET
            if now < self.limit_resets - 1:
                return go_usage_limit(max(1, round(self.limit_resets - now)))
        if first.startswith("bash"):
            return {
                "tool_use": {"name": "bash", "input": {"command": "echo hello from bash && ls -la", "description": "Lists files"}},
                "delay": 1.0,
            }
        reply = {"text": f"Reply to: {(text.splitlines() or [''])[-1][:60]}", **slow}
        if first.startswith("big "):
            reply["usage"] = {"input_tokens": int(first.split()[1])}
        return reply


class Model(FakeAnthropic):
    """The fake Anthropic API answering as `Replies` says."""

    def __init__(self, model: str = MODEL):
        super().__init__(model=model)
        self.add(Replies(), times=None)


def environment(base: Path, api_url: str, extra: dict | None = None, model: str = MODEL) -> tuple[dict, Path]:
    """(env, project): private HOME/XDG/TMPDIR under BASE, opencode.json for the fake API."""
    env, project = opencode_env(base, api_url, model)
    return {**env, **(extra or {})}, project


view, hold, wait = Screen.shown, Screen.hold, Screen.wait_shown


def idle(screen, timeout: float = 60.0) -> None:
    """The idle footer is up and nothing is busy."""
    screen.settled(lambda text: IDLE in text and BUSY not in text, timeout, settle=0.0)


def typed(screen, text: str) -> None:
    """Key by key, as a person types (a burst would be taken as a paste)."""
    for ch in text:
        screen.child.send(ch)
        screen.pump(KEY_DELAY)


def say(screen, text: str, settle: float = 1.0) -> None:
    """Type a message, send it, wait for the reply to end."""
    typed(screen, text)
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, re.escape(BUSY), timeout=30)
    screen.pump(0.5)
    idle(screen)
    screen.pump(settle)


def quit(screen) -> None:
    screen.pump(1.0)
    screen.child.send("\x03")  # ctrl+c quits from an empty prompt
    screen.pump(0.5)


def ready(screen) -> None:
    wait(screen, re.escape(IDLE), timeout=90)
    screen.pump(2.0)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own plugin, given for the run in OPENCODE_CONFIG_CONTENT as ours is: it writes `marker` as it loads."""
    plugin = Path(env["HOME"]) / "mine.js"
    plugin.write_text(
        f'import fs from "node:fs";\nexport const Mine = async () => {{ fs.writeFileSync({json.dumps(str(marker))}, "loaded"); return {{}}; }};\n'
    )
    env["OPENCODE_CONFIG_CONTENT"] = json.dumps({"plugin": [plugin.as_uri()]})


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
