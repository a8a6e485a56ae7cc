"""Continue CLI (npm @continuedev/cli, binary `cn`) run offline against the fake Anthropic API:
its binary, the fake model's scenario behaviour, a private environment, and how to drive it."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

from agentdriver import Screen
from fakeapi import FakeAnthropic, Request

NAME = "continue-cli"
PACKAGE = "@continuedev/cli"
VERSION = "1.5.47"
BINARY = "cn"
# a model no CLI or SDK marks as retiring (claude-sonnet-4-5 retires 2026-11-30)
MODEL = "claude-haiku-4-5"
# Continue counts the context itself (gpt-tokenizer, x1.23 for a Claude model), never from the
# API's usage: a small window lets `big N` replies fill it. It compacts by itself once its
# count of system prompt, tools and history reaches window - max_tokens - a buffer
# (8000 - 1000 - 1400 = 5600 here, about 2,600 of them its system prompt and tools); its footer
# shows the history's share of the window ("Context: 75%").
CONTEXT_LENGTH = 8000
MAX_TOKENS = 1000
# what Continue asks the model when it compacts (/compact or automatically), as the last user message
COMPACTION_PROMPT = "Please provide a concise summary of our conversation so far"
SUMMARY = (
    "Summary of the conversation so far: the user sent numbered test turns and each was answered "
    "with a short reply. Current work: waiting for the next turn."
)


def too_long(n: int) -> str:
    """The API's 400 for a prompt past the window, its count a little higher each time (as a
    growing conversation's is)."""
    return f"prompt is too long: {204858 + 1000 * n} tokens > 200000 maximum"


# the Messages API's answer to a key past its rate limit (HTTP 429, rate_limit_error); Continue 1.5.47
# shows it at once as the turn's error (one request: its backoff does not reach a streamed turn's
# error, and it never reads retry-after)
RATE_LIMIT = (
    "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. "
    "For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers "
    "for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."
)
LIMIT_RETRY_AFTER = 7380  # seconds: 2 hours 3 minutes


def binary() -> Path:
    return Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / BINARY


def is_compaction(req: Request) -> bool:
    return req.last_user_text().lstrip().startswith(COMPACTION_PROMPT)


def is_title(req: Request) -> bool:
    """The title request after the first turn: no tools, "...please reply with a title for the chat"."""
    return not req.has_tools and "reply with a title for the chat" in req.last_user_text()


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


def filler(tokens: int) -> str:
    """About `tokens` tokens as Continue counts them for a Claude model, in few screen rows: rows
    of the runic letter ᚠ, about 3.7 tokens each to its tokenizer (o200k, x1.23). Plain words
    would be one token each, and hundreds of rows make its TUI redraw the whole screen; rows
    shorter than the screen are drawn alike in its live area and, a column narrower, for good."""
    letters = round(tokens / 3.7) if tokens > 0 else 0
    return "".join("\n" + "ᚠ" * min(100, letters - i) for i in range(0, letters, 100))


class Model(FakeAnthropic):
    """The fake Anthropic API with Continue's scenario behaviour: `Reply to: <last line>` after a
    moment, streamed; `big N ...` answers with about N tokens of filler (Continue counts the
    context from the text, not from the API's usage); `overflow ...` answers 400 "prompt is
    too long" once per text (`overflow again ...`: and the next compaction request too);
    `limit ...` answers 429 rate_limit_error every time; `bash ...`
    calls the Bash tool, then "The command finished."; a compaction request gets a summary; the
    title request "Test session"."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = MODEL, delay: float = 1.5):
        super().__init__(host, port, model)
        self.delay = delay
        self.overflowed: set[str] = set()
        self.refuse_compaction = False
        self.too_long = 0  # how many 400s it has answered
        self.default = self.reply

    def overflow(self) -> dict:
        self.too_long += 1
        return {"status": 400, "message": too_long(self.too_long - 1), "delay": 0.5}

    def reply(self, req: Request) -> dict:
        slow = {"delay": self.delay, "chunk": 6, "chunk_delay": 0.05}
        if is_compaction(req):
            if self.refuse_compaction:
                self.refuse_compaction = False
                return self.overflow()
            return {"text": SUMMARY, "delay": 2.0, "chunk": 12, "chunk_delay": 0.05}
        if is_title(req):
            return {"text": "Test session"}
        if req.has_tool_result:
            return {"text": "The command finished.", **slow}
        text = req.last_user_text().strip()
        first = text.splitlines()[0] if text else ""
        if first.startswith("overflow") and text not in self.overflowed:
            self.overflowed.add(text)
            self.refuse_compaction = first.startswith("overflow again")
            return self.overflow()
        if first.startswith("limit"):
            return {**rate_limited(), "delay": 0.3}
        if first.startswith("bash"):
            return {"tool_use": {"name": "Bash", "input": {"command": "echo hello from bash && ls -a"}}, "delay": 1.0}
        reply = {"text": f"Reply to: {(text.splitlines() or [''])[-1][:60]}", **slow}
        if first.startswith("big "):
            reply["text"] += filler(int(first.split()[1]))
            reply["chunk"] = 400
        return reply


def config_yaml(api_url: str) -> str:
    """~/.continue/config.yaml: one Anthropic model at `api_url`, the window above."""
    return f"""name: Local
version: 1.0.0
schema: v1
models:
  - name: Fake Haiku
    provider: anthropic
    model: {MODEL}
    apiKey: fake-key
    apiBase: {api_url}/v1/
    roles: [chat, edit, apply, summarize]
    defaultCompletionOptions:
      contextLength: {CONTEXT_LENGTH}
      maxTokens: {MAX_TOKENS}
"""


def environment(base: Path, api_url: str) -> tuple[dict[str, str], Path]:
    """(env, project): a private HOME, XDG dirs and TMPDIR under `base`; ~/.continue/config.yaml
    points Continue at `api_url` (no Hub login: a local config is read first), the onboarding
    marker skips its API-key question; no update check or install, telemetry, or Hub calls;
    an empty git repository as the project."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    cont = home / ".continue"
    for d in (cont / "index", proj, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    (cont / "config.yaml").write_text(config_yaml(api_url))
    (cont / ".onboarding_complete").write_text("2026-11-26T00:00:00.000Z")
    (cont / "index" / "globalContext.json").write_text('{"autoUpdateCli": false}')
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "CONTINUE_GLOBAL_DIR": str(cont),
        "CONTINUE_API_BASE": "http://127.0.0.1:9/",  # the Hub: nothing listens
        "CONTINUE_CLI_AUTO_UPDATED": "1",  # never installs a newer release itself
        "CONTINUE_METRICS_ENABLED": "0",
        "CONTINUE_CLI_ENABLE_TELEMETRY": "0",
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no package installs
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
    }
    return env, proj


ARGV: list[str] = []
# the input box's placeholder, drawn while nothing is typed: "│ ● ▋Ask anything, @ for context, / for slash commands, ! for shell mode │"
IDLE = r"Ask anything, @ for context"
# the status line above the input box while it works: " ⣿⣿⣿  ( 0s • esc to interrupt )", and
# while it compacts: "Compacting history ( 1s • esc to interrupt )"
BUSY = r"esc to interrupt|Compacting history"
COMPACT = "/compact"
# after /compact, in the conversation: "Chat history compacted successfully."; after an automatic
# compaction only the summary's place, a bare rule across the screen ("─────...─"), and the turn goes on
COMPACTED = r"Chat history (?:auto-)?compacted successfully|(?m:^─{40,}$)"
ROWS = 40


def idle(screen, timeout: float = 60.0, settle: float = 1.0) -> None:
    """The placeholder is up and no busy line, for `settle` seconds."""
    screen.settled(lambda text: re.search(IDLE, text) and not re.search(BUSY, text), timeout, settle)


view, hold, wait = Screen.shown, Screen.hold, Screen.wait_shown


def ready(screen) -> None:
    """Started and waiting for a message (its banner and input box drawn)."""
    wait(screen, IDLE, timeout=60)
    idle(screen, settle=1.5)


def typed(screen, text: str) -> None:
    """Type `text` at once and, half a second later as a person would, Enter (the message
    stands in the input box meanwhile, where the user's words are read from)."""
    screen.child.send(text)
    hold(screen, 0.5)
    screen.child.send("\r")
    screen.pump(0.1)


def send(screen, text: str, wait_for: str | None = None, timeout: float = 60) -> None:
    """Type a message, Enter on its own, wait for `wait_for` (the busy line if not given) and
    then for the prompt."""
    typed(screen, text)
    wait(screen, wait_for or BUSY, timeout)
    idle(screen, timeout)


def quit(screen) -> None:
    """/exit at the prompt ("Goodbye!"); ctrl+c twice within a second does the same."""
    hold(screen, 0.5)
    typed(screen, "/exit")
    deadline = time.monotonic() + 15
    while screen.child.isalive() and time.monotonic() < deadline:
        screen.pump(0.2)


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
