"""Cline CLI (npm cline) run offline against the fake Anthropic API: its binary, the fake
model's scenario behaviour, a private environment, and how to drive it.

Cline CLI 3.x is a compiled Bun program with a full-screen TUI on the alternate screen. Its
provider comes from `~/.cline/data/settings/providers.json` (what `cline auth` writes): the
`anthropic` provider with a `baseUrl` ending in /v1 sends its Messages calls to the fake.
Run as is, it starts a "hub" daemon (a local WebSocket server, `cline --cline-hub-daemon`)
that outlives it; in sandbox mode (CLINE_SANDBOX=1 and its data folder) it keeps its runtime
in its own process and starts none."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from agentdriver import Screen
from conftest import SUPERVISE
from fakeapi import FakeAnthropic, Request

NAME = "cline"
PACKAGE = "cline"
VERSION = "3.0.65"
BINARY = "cline"
# a model no CLI or SDK marks as retiring (claude-sonnet-4-5 retires 2026-11-30); 200k window
MODEL = "claude-haiku-4-5"
# in the template its compaction request asks for ("## Goal", "## State", "## Next", ...)
SUMMARY = (
    "## Goal\nSummary of the conversation so far: continue the test conversation.\n\n"
    "## State\n- Done: answered numbered turns\n- In Progress: none\n- Blocked: none\n\n"
    "## Next\nAnswer the next turn.\n\n## Files\nRead: none\nEdited: none"
)
TOO_LONG = "prompt is too long: 204858 tokens > 200000 maximum"
# seconds: the Anthropic SDK inside it sleeps retry-after out in full, silently, before each of
# its retries (7380 kept it "Thinking..." for two hours)
LIMIT_RETRY_AFTER = 2
ARGV: list[str] = []
ROWS = 40  # the PTY the recorder and the tests use is 120x40
KEY_DELAY = 0.03  # seconds between typed characters
# the footer's mode switch, drawn while it waits for input
IDLE = re.compile(r"○ Plan ● Act \(Tab\)|● Plan ○ Act \(Tab\)")
# working: "⠦ Thinking... (esc to cancel)", then the reply streamed after a spinner glyph
# ("⠙ Reply to: tu"), which becomes "*" once it is done
BUSY = re.compile(r"\(esc to cancel\)|^ [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ", re.M)
COMPACT = "/compact"
# the rule drawn in the chat when a compaction is done: "── ✻ Context compacted (manual) · 4 → 3 messages ✻ ──"
COMPACTED = re.compile(r"✻ (?:Context compacted|Compacted working context)")


def binary() -> Path:
    return Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / BINARY


# ---- the fake model -------------------------------------------------------------------


def _system(req: Request) -> str:
    system = req.body.get("system", "")
    return "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)


def is_compaction(req: Request) -> bool:
    """Its summary request: no tools, system "Summarize the provided coding session into a
    concise continuation note...", the conversation quoted in one user message."""
    return not req.has_tools and _system(req).startswith("Summarize the provided coding session")


def last_user_text(req: Request) -> str:
    """The user's last words: not a tool result, nor its `<user_input mode="act">` wrapper, nor
    a hook's or plugin's context (a `<hook_context>` message of Cline's own after them)."""
    for message in reversed(req.body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts = [content]
        else:
            texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        texts = [t for t in texts if not t.lstrip().startswith("<hook_context")]
        if not texts and content:
            continue
        text = texts[-1] if texts else ""
        m = re.fullmatch(r"\s*<user_input[^>]*>(.*)</user_input>\s*", text, re.S)
        return m.group(1) if m else text
    return ""


said = last_user_text  # the user's words of a request (tests/test_agents_e2e.py)


def rate_limited(retry_after: int) -> dict:
    """The Anthropic API's rate limit on an API key: 429 rate_limit_error with retry-after."""
    return {
        "status": 429,
        "message": "This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.",
        "headers": {"retry-after": str(retry_after)},
    }


class Model(FakeAnthropic):
    """The fake API with the scenarios' answers, keyed on the first word of the user's last
    message: `big N` asks for a shell command and reports N input tokens (its next request, in
    the same run, is then measured against them), `bash` asks for a shell command, `overflow`
    is refused as too long (once per text), `limit` is refused by the rate limit every time
    (retry-after LIMIT_RETRY_AFTER), supervise's context is answered "Noted: going on from
    there."; any other turn is `Reply to: <last line>`."""

    def __init__(self, model: str = MODEL, delay: float = 1.5):
        super().__init__(model=model)
        self.delay = delay
        self.overflowed: set[str] = set()
        self.default = self.answer

    def answer(self, req: Request) -> dict:
        slow = {"delay": self.delay, "chunk": 6, "chunk_delay": 0.05}
        if is_compaction(req):
            return {"text": SUMMARY, "delay": 2.0, "chunk": 12, "chunk_delay": 0.05}
        if not req.has_tools:
            return {"text": "Test session"}
        text = last_user_text(req).strip()
        first = text.splitlines()[0] if text else ""
        if first.startswith("[supervise]"):  # a context given back: taken, not quoted (a quote is an echo)
            return {"text": "Noted: going on from there.", **slow}
        if req.has_tool_result:
            return {"text": "The command finished.", **slow}
        if first.startswith("overflow") and text not in self.overflowed:
            self.overflowed.add(text)
            return {"status": 400, "message": TOO_LONG, "delay": 0.5}
        if first.startswith("limit"):
            return {**rate_limited(LIMIT_RETRY_AFTER), "delay": 0.3}
        if first.startswith(("bash", "big ")):
            reply: dict = {"tool_use": {"name": "run_commands", "input": {"commands": ["echo hello from bash && ls -a"]}}, "delay": 1.0}
            if first.startswith("big "):
                reply["usage"] = {"input_tokens": int(first.split()[1])}
            return reply
        return {"text": f"Reply to: {(text.splitlines() or [''])[-1][:60]}", **slow}


# ---- the environment -------------------------------------------------------------------


def environment(base: Path, api_url: str, model: str = MODEL, window: int | None = None) -> tuple[dict[str, str], Path]:
    """(env, project): a private HOME, XDG dirs and TMPDIR under `base` where it uses
    `anthropic/<model>` at `api_url` (with a context window of `window` tokens, if given),
    starts no hub daemon and fetches, updates and reports nothing; an empty git repository
    as its project."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    data = home / ".cline" / "data"
    settings = data / "settings"
    for d in (home, proj, settings, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    provider = {"provider": "anthropic", "apiKey": "fake-key", "model": model, "baseUrl": f"{api_url}/v1"}
    if window:  # read for a model its catalog does not know (for one it knows, the catalog's wins)
        provider["contextWindow"] = window
    providers = {
        "version": 1,
        "lastUsedProvider": "anthropic",
        "modes": {},
        # updatedAt is required: without it the file is refused and the sign-in menu opens
        "providers": {"anthropic": {"settings": provider, "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}},
    }
    (settings / "providers.json").write_text(json.dumps(providers, indent=2))
    (settings / "global-settings.json").write_text(json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}, indent=2))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "CLINE_SANDBOX": "1",  # its runtime in its own process: no hub daemon left behind
        "CLINE_SANDBOX_DATA_DIR": str(data),
        "CLINE_NO_AUTO_UPDATE": "1",
        "CLINE_DISABLE_CLINE_PASS_NOTICE": "1",  # a subscription offer over the first screen
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no plugin or skill installs
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
    }
    return env, proj


# ---- driving it --------------------------------------------------------------------------


def idle(screen, timeout: float = 60.0, settle: float = 1.0) -> None:
    """Its idle line is up and no busy line, for `settle` seconds."""
    screen.settled(lambda text: IDLE.search(text) and not BUSY.search(text), timeout, settle)


view, hold, wait = Screen.shown, Screen.hold, Screen.wait_shown


def ready(screen, timeout: float = 60.0) -> None:
    """Its prompt is up and takes a message."""
    wait(screen, IDLE, timeout)
    idle(screen, settle=1.5)


def typed(screen, text: str) -> None:
    """Key by key, as a person types."""
    for ch in text:
        screen.child.send(ch)
        screen.pump(KEY_DELAY)


def say(screen, text: str, wait_for: str | None = None, timeout: float = 60.0) -> None:
    """Type a message, send it, wait for `wait_for` (the reply to it if not given) and then
    for the prompt."""
    typed(screen, text)
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, wait_for or "Reply to: " + re.escape(text[:30]), timeout)
    idle(screen, timeout)


def quit(screen) -> None:
    """Ctrl+C from an empty prompt exits, printing its session summary."""
    screen.pump(0.5)
    screen.child.send("\x03")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and screen.child.isalive():
        screen.pump(0.2)


def install(env: dict[str, str]) -> None:
    """supervise's door, installed as a user installs it (its plugin, copied in by Cline's own command)."""
    subprocess.run([*SUPERVISE, "hooks", "install", NAME], env=env, check=True, capture_output=True, timeout=120)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own plugin in ~/.cline/plugins: it writes `marker` as each run starts."""
    plugins = Path(env["HOME"]) / ".cline" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / "mine.js").write_text(
        'import fs from "node:fs";\n'
        'export default { name: "mine", manifest: { capabilities: ["hooks"] },\n'
        f'  hooks: {{ beforeRun() {{ fs.writeFileSync({json.dumps(str(marker))}, "ran"); }} }} }};\n'
    )


# its `/compact` runs outside every plugin hook: its door sees no compaction start, only the screen and its record do
DOOR_SEES_COMPACT = False
HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
