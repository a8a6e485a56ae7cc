"""pi (npm @mariozechner/pi-coding-agent) run offline against the fake Anthropic API: its
binary, the fake model's scenario behaviour, a private environment, and how to drive it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from agentdriver import Screen
from fakeapi import FakeAnthropic, Request

NAME = "pi"
PACKAGE = "@mariozechner/pi-coding-agent"
VERSION = "0.73.1"
BINARY = "pi"
# a model no CLI or SDK marks as retiring (claude-sonnet-4-5 retires 2026-11-30); 200k window
MODEL = "claude-haiku-4-5"
SUMMARY = (
    "## Goal\nSummary of the conversation so far: continue the test conversation.\n\n"
    "## Progress\n### Done\n- [x] Answered numbered turns.\n\n## Next Steps\n1. Answer the next turn."
)


def binary() -> Path:
    return Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / BINARY


TOO_LONG = "prompt is too long: 204858 tokens > 200000 maximum"
# the Messages API's answer to a key past its rate limit (HTTP 429, rate_limit_error, with
# retry-after): the SDK pi uses waits retry-after and tries twice more, then pi itself retries
# the turn three times (2, 4, 8 s) before it gives up
RATE_LIMIT = (
    "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. "
    "For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers "
    "for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."
)
LIMIT_RETRY_AFTER = 2  # seconds (the SDK would sleep a longer one out in full, silently)


def is_compaction(req: Request) -> bool:
    """pi's summary request: system "You are a context summarization assistant...", the
    conversation quoted in <conversation> tags, no tools."""
    system = req.body.get("system", "")
    text = "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)
    return not req.has_tools and "context summarization assistant" in text[:200]


def rate_limited(retry_after: int = LIMIT_RETRY_AFTER) -> dict:
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
    """The fake Anthropic API with pi's scenario behaviour: `Reply to: <last line>` after a
    moment, streamed; `big N ...` reports N input tokens; `overflow ...` answers 400 "prompt
    is too long" once per text; `limit ...` answers 429 rate_limit_error every time; `bash
    ...` calls the bash tool, then "The command finished."; a compaction request gets a
    summary in pi's format."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = MODEL, delay: float = 1.5):
        super().__init__(host, port, model)
        self.delay = delay
        self.overflowed: set[str] = set()
        self.default = self.reply

    def reply(self, req: Request) -> dict:
        slow = {"delay": self.delay, "chunk": 6, "chunk_delay": 0.05}
        if is_compaction(req):
            return {"text": SUMMARY, "delay": 2.0, "chunk": 12, "chunk_delay": 0.05}
        if req.has_tool_result:
            return {"text": "The command finished.", **slow}
        text = req.last_user_text().strip()
        first = text.splitlines()[0] if text else ""
        if first.startswith("overflow") and text not in self.overflowed:
            self.overflowed.add(text)
            return {"status": 400, "message": TOO_LONG, "delay": 0.5}
        if first.startswith("limit"):
            return {**rate_limited(), "delay": 0.3}
        if first.startswith("bash"):
            return {"tool_use": {"name": "bash", "input": {"command": "echo hello from bash && ls -a"}}, "delay": 1.0}
        reply = {"text": f"Reply to: {(text.splitlines() or [''])[-1][:60]}", **slow}
        if first.startswith("big "):
            reply["usage"] = {"input_tokens": int(first.split()[1])}
        return reply


def environment(base: Path, api_url: str) -> tuple[dict[str, str], Path]:
    """(env, project): a private HOME, XDG dirs and TMPDIR under `base`; ~/.pi/agent/models.json
    points pi's Anthropic provider at `api_url`, settings.json picks MODEL with thinking off;
    no update check, telemetry or package install; an empty git repository as the project."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    agent = home / ".pi" / "agent"
    for d in (agent, proj, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": api_url}}}, indent=2))
    settings = {
        "defaultProvider": "anthropic",
        "defaultModel": MODEL,
        "defaultThinkingLevel": "off",
        "enableInstallTelemetry": False,
        "collapseChangelog": True,
        "lastChangelogVersion": VERSION,
    }
    (agent / "settings.json").write_text(json.dumps(settings, indent=2))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "ANTHROPIC_API_KEY": "fake-key",
        "PI_OFFLINE": "1",  # no update check, package check or telemetry, no fd/ripgrep download
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no package installs
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
    }
    return env, proj


ARGV: list[str] = []
# The footer's context figure, at the prompt and while busy: "↑588 ↓11 $0.001 0.3%/200k (auto)"
# ("?/200k (auto)" right after a compaction); idle while no busy line is up.
IDLE = r"(?:\d+\.\d%|\?)/\d+(?:\.\d+)?[kM]\b"
# the loader above the input box: "⠋ Working...", "Compacting context... (escape to cancel)",
# "Auto-compacting... (escape to cancel)", "Retrying (1/3) in 2s... (escape to cancel)"
BUSY = r"Working\.\.\.|Compacting context\.\.\.|Auto-compacting\.\.\.|Retrying \(\d+/\d+\) in"
COMPACT = "/compact"
# the chat is redrawn with a "[compaction]" block: "Compacted from 1,234 tokens (ctrl+o to expand)"
COMPACTED = r"Compacted from [\d,]+ tokens"


def idle(screen, timeout: float = 60.0, settle: float = 1.0) -> None:
    """Its idle line is up and no busy line, for `settle` seconds."""
    screen.settled(lambda text: re.search(IDLE, text) and not re.search(BUSY, text), timeout, settle)


view, hold, wait = Screen.shown, Screen.hold, Screen.wait_shown


def ready(screen) -> None:
    """Started and waiting for a message (its header and footer drawn)."""
    wait(screen, IDLE, timeout=60)
    idle(screen, settle=1.5)


def send(screen, text: str, wait_for: str | None = None, timeout: float = 60) -> None:
    """Type a message, Enter on its own, wait for `wait_for` (the busy line if not given) and
    then for the prompt."""
    screen.type(text)
    wait(screen, wait_for or BUSY, timeout)
    idle(screen, timeout)


def quit(screen) -> None:
    """ctrl+d on an empty input box exits."""
    screen.pump(0.5)
    screen.child.sendcontrol("d")
    deadline = time.monotonic() + 15
    while screen.child.isalive() and time.monotonic() < deadline:
        screen.pump(0.2)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own extension in ~/.pi/agent/extensions: it writes `marker` as it loads."""
    folder = Path(env["HOME"]) / ".pi" / "agent" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mine.js").write_text(
        f'import fs from "node:fs";\nexport default function () {{ fs.writeFileSync({json.dumps(str(marker))}, "loaded"); }}\n'
    )


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
