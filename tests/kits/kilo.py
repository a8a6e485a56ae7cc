"""Kilo Code CLI (npm @kilocode/cli) run offline against the fake Anthropic API: its binary,
the fake model's scenario behaviour, a private environment, and how to drive it.

Kilo Code CLI 7.x is built on OpenCode: a full-screen TUI on the alternate screen, configured by
`$XDG_CONFIG_HOME/kilo/kilo.json` (and KILO_CONFIG_CONTENT laid over it), whose `anthropic`
provider is pointed at the fake API by `provider.anthropic.options.baseURL`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from agentdriver import Screen
from fakeapi import FakeAnthropic, Request

NAME = "kilo"
PACKAGE = "@kilocode/cli"
VERSION = "7.7.7"
BINARY = "kilo"
# a model no CLI or SDK marks as retiring (claude-sonnet-4-5 retires 2026-11-30); 200k window
MODEL = "claude-haiku-4-5"
# in the anchored summary's template its compaction request asks for
SUMMARY = (
    "## Objective\n- Summary of the conversation so far: continue the test conversation.\n\n"
    "## Important Details\n- (none)\n\n## Work State\n### Completed\n- Answered numbered turns.\n\n"
    "### Active\n- (none)\n\n### Blocked\n- (none)\n\n## Next Move\n1. Answer the next turn.\n\n"
    "## Relevant Files\n- (none)"
)
TOO_LONG = "prompt is too long: 204858 tokens > 200000 maximum"
LIMIT_RESET = 7380  # seconds from the first `limit` answer to the reset: 2 hours 3 minutes
ARGV: list[str] = []
ROWS = 40  # the PTY the recorder and the tests use is 120x40
KEY_DELAY = 0.05  # seconds between typed characters
# the footer while it waits for input, and while it works
IDLE = re.compile(r"ctrl\+p commands")
BUSY = re.compile(r"esc interrupt")
COMPACT = "/compact"
# the compaction's line gains its duration once the summary is written
COMPACTED = re.compile(r"Compaction · .* · \d+(?:\.\d+)?m?s")


def binary() -> Path:
    return Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / BINARY


# ---- the fake model -------------------------------------------------------------------


def _system(req: Request) -> str:
    system = req.body.get("system", "")
    return "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)


def is_compaction(req: Request) -> bool:
    """Its summary request: no tools, the conversation quoted in one user message
    ("Here is the conversation so far: <conversation>...</conversation>", then "Create a new
    anchored summary..." or, after an earlier one, its `<prior-summary>` to combine); its
    title request has no tools either (system "You are a title generator...")."""
    return not req.body.get("tools") and "</conversation>" in last_user_text(req)


def last_user_text(req: Request) -> str:
    """The user's last words: not a tool result, nor the blocks it adds after a message
    (`<environment_details>`: the time and the folder; `<system-reminder>`: an agent switch)."""
    for message in reversed(req.body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        texts = [t for t in texts if not t.lstrip().startswith(("<environment_details>", "<system-reminder>"))]
        return texts[-1] if texts else ""
    return ""


def rate_limited(retry_after: int) -> dict:
    """The Anthropic API's rate limit on an API key: 429 rate_limit_error with retry-after."""
    return {
        "status": 429,
        "message": "This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.",
        "headers": {"retry-after": str(retry_after)},
    }


class Model(FakeAnthropic):
    """The fake API with the scenarios' answers, keyed on the first word of the user's last
    line: `big N` reports N input tokens, `bash` asks for a bash tool call, `overflow` is
    refused as too long (once per text), `limit` is refused by the rate limit until
    LIMIT_RESET seconds after the first; any other turn is `Reply to: <last line>`."""

    def __init__(self, model: str = MODEL):
        super().__init__(model=model)
        self.overflowed: set[str] = set()
        self.toast_up = False  # an overflow's toast is on screen: its compaction waits it out
        self.limit_resets: float | None = None
        self.default = self.answer

    def answer(self, req: Request) -> dict:
        slow = {"delay": 1.5, "chunk": 6, "chunk_delay": 0.05}
        if is_compaction(req):
            # after an overflow, once its toast (~5 s) is gone: the summary scrolls the view,
            # and a row the toast was drawn over would change under it
            delay, self.toast_up = (7.0 if self.toast_up else 2.0), False
            return {"text": SUMMARY, "delay": delay, "chunk": 12, "chunk_delay": 0.05}
        if not req.body.get("tools"):
            return {"text": "Test session"}  # the title
        if req.has_tool_result:
            return {"text": "The command finished.", **slow}
        text = last_user_text(req).strip()
        first = text.splitlines()[0] if text else ""
        if first.startswith("overflow") and text not in self.overflowed:
            self.overflowed.add(text)
            self.toast_up = True
            return {"status": 400, "message": TOO_LONG}
        if first.startswith("limit"):
            now = time.time()
            self.limit_resets = self.limit_resets or now + LIMIT_RESET
            if now < self.limit_resets - 1:
                return rate_limited(max(1, round(self.limit_resets - now)))
        if first.startswith("bash"):
            return {"tool_use": {"name": "bash", "input": {"command": "echo hello from bash && ls -la", "description": "Lists files"}}}
        reply = {"text": f"Reply to: {(text.splitlines() or [''])[-1][:60]}", **slow}
        if first.startswith("big "):
            reply["usage"] = {"input_tokens": int(first.split()[1])}
        return reply


# ---- the environment -------------------------------------------------------------------


def config(api_url: str, model: str = MODEL) -> dict:
    return {
        "$schema": "https://app.kilo.ai/config.json",
        "model": f"anthropic/{model}",
        "small_model": f"anthropic/{model}",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"anthropic": {"options": {"baseURL": f"{api_url}/v1", "apiKey": "fake-key"}}},
    }


def environment(base: Path, api_url: str, model: str = MODEL) -> tuple[dict[str, str], Path]:
    """(env, project): a private HOME, XDG dirs and TMPDIR under `base` where it uses
    `anthropic/<model>` at `api_url` and fetches, installs and reports nothing; an empty git
    repository as its project."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    for d in (home, proj, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    folder = dirs["XDG_CONFIG_HOME"] / "kilo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kilo.json").write_text(json.dumps(config(api_url, model), indent=2))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "ANTHROPIC_API_KEY": "fake-key",
        "KILO_DISABLE_MODELS_FETCH": "1",
        "KILO_DISABLE_AUTOUPDATE": "1",
        "KILO_DISABLE_LSP_DOWNLOAD": "1",
        "KILO_DISABLE_SHARE": "1",
        "KILO_DISABLE_DEFAULT_PLUGINS": "1",
        "KILO_DISABLE_CLAUDE_CODE": "1",
        "KILO_DISABLE_SESSION_INGEST": "1",
        "KILO_TELEMETRY_LEVEL": "off",
        "KILO_NO_DAEMON": "1",
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no plugin installs
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
    }
    return env, proj


# ---- driving it --------------------------------------------------------------------------

view, hold, wait = Screen.shown, Screen.hold, Screen.wait_shown


def ready(screen, timeout: float = 90.0) -> None:
    """Its prompt is up and takes a message."""
    wait(screen, IDLE, timeout)
    screen.pump(2.0)


def idle(screen, timeout: float = 60.0) -> None:
    """The idle footer is up and nothing is busy."""
    screen.settled(lambda text: IDLE.search(text) and not BUSY.search(text), timeout, settle=0.0)


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
    wait(screen, BUSY, timeout=30)
    screen.pump(0.5)
    idle(screen)
    screen.pump(settle)


def quit(screen) -> None:
    """Ctrl+C twice from an empty prompt ("ctrl+c again to exit" after the first)."""
    screen.pump(1.0)
    screen.child.send("\x03")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "ctrl+c again to exit" not in view(screen):
        screen.pump(0.2)
    screen.child.send("\x03")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and screen.child.isalive():
        screen.pump(0.2)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own plugin, given for the run in KILO_CONFIG_CONTENT as ours is: it writes `marker` as it loads."""
    plugin = Path(env["HOME"]) / "mine.js"
    plugin.write_text(
        f'import fs from "node:fs";\nexport const Mine = async () => {{ fs.writeFileSync({json.dumps(str(marker))}, "loaded"); return {{}}; }};\n'
    )
    env["KILO_CONFIG_CONTENT"] = json.dumps({"plugin": [plugin.as_uri()]})


said = last_user_text  # the user's words of a request (tests/test_agents_e2e.py)

HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
