"""Aider (PyPI aider-chat), run offline: the fake Anthropic API with Aider's scenario
replies (through litellm), a private HOME with litellm's price map pre-seeded, a terminal that
answers prompt_toolkit's cursor-position requests, and how to tell from its screen that it
waits for a message. Used by scripts/agents/aider.py (its recordings) and
tests/test_agents_e2e.py (there on `CHAINED_FLAGS`: each answer creates a file and the history
outgrows 1,500 tokens, so Aider summarizes it after each turn, as it compacts)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import fakeapi
from agentdriver import Screen
from fakeapi import FakeAnthropic, Request

NAME = "aider"
PACKAGE = "aider-chat"
VERSION = "0.86.2"
BINARY = "aider"
MODEL = "anthropic/claude-3-5-haiku-20241022"
FLAGS = ["--model", MODEL, "--no-check-update", "--no-show-release-notes", "--analytics-disable", "--no-gitignore", "--no-auto-commits"]
PROMPT = re.compile(r"^(\w+ )?(\w+)?> ?$")  # "> ", "ask> ", "ask multi> "
CONFIRM = re.compile(r"\(Y\)es/\(N\)o.*\]: ?$")
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-B]|[=>78DEHMNOZc])")
SUMMARIZE = "summarize this partial conversation"
FILLER = "this is deliberately verbose filler text to grow the chat history quickly."
# each answer creates a file, the history outgrows 1,500 tokens: a summary after each turn
# (on a model that litellm does not mark as retiring, unlike MODEL)
CHAINED_FLAGS = ["--verbose", "--max-chat-history-tokens", "1500", "--model", "anthropic/claude-haiku-4-5"]
ARGV = [*FLAGS, *CHAINED_FLAGS, "--yes-always"]  # the files it offers to create or add: yes
COMPACTED = "Finished summarizing chat history"
# `ps` cannot tell it working: the prompt it leaves bare above a sent message ("> ") stays on
# screen, and it draws no line of its own while it works (a known gap, docs/states-limits-handoffs.md)
SHOWS_WORKING = False


def binary() -> Path:
    return Path(__file__).resolve().parent.parent / "agents" / "python" / "bin" / BINARY


# ---------------------------------------------------------------- the fake model


def rate_limit(retry_after: int = 12, limit: int = 30_000, model: str = "claude-3-5-haiku-20241022") -> dict:
    """The API's answer to a key whose organization is over its input tokens per minute: 429,
    the body {"type": "error", "error": {"type": "rate_limit_error", "message": ...},
    "request_id": ...} (the same id in the `request-id` header), `retry-after` (seconds) and
    the `anthropic-ratelimit-*` headers (limit, remaining and an RFC 3339 reset for requests,
    tokens, input and output tokens; the input tokens at 0). litellm makes it a RateLimitError;
    Aider ignores `retry-after` and retries on its own schedule."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    reset = (now + timedelta(seconds=retry_after)).isoformat().replace("+00:00", "Z")
    full = (now + timedelta(seconds=1)).isoformat().replace("+00:00", "Z")
    request_id = f"req_011CFAKE{int(time.time() * 1000) % 10**12:012d}RATE"
    message = (
        f"This request would exceed your organization's rate limit of {limit:,} input tokens per minute "
        f"(org: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b, model: {model}). For details, refer to: "
        "https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. "
        "Please reduce the prompt length or the maximum tokens requested, or try again later. You may also "
        "contact sales at https://claude.com/contact-sales to discuss your options for a rate limit increase."
    )
    return {
        "status": 429,
        "body": {"type": "error", "error": {"type": "rate_limit_error", "message": message}, "request_id": request_id},
        "headers": {
            "request-id": request_id,
            "retry-after": str(retry_after),
            "x-should-retry": "true",
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "anthropic-ratelimit-requests-reset": full,
            "anthropic-ratelimit-tokens-limit": str(limit + 8_000),
            "anthropic-ratelimit-tokens-remaining": "0",
            "anthropic-ratelimit-tokens-reset": reset,
            "anthropic-ratelimit-input-tokens-limit": str(limit),
            "anthropic-ratelimit-input-tokens-remaining": "0",
            "anthropic-ratelimit-input-tokens-reset": reset,
            "anthropic-ratelimit-output-tokens-limit": "8000",
            "anthropic-ratelimit-output-tokens-remaining": "8000",
            "anthropic-ratelimit-output-tokens-reset": full,
        },
    }


class AiderFake(FakeAnthropic):
    """FakeAnthropic whose replies may carry a `stop_reason` (for KWMAXTOKENS), or an error's
    whole `body` (for rate_limit: the API's body, sent as it is)."""

    def _handler(self):
        base = super()._handler()
        api = self

        class Handler(base):
            def _messages(self, req: Request, reply: dict) -> None:
                if "body" in reply:
                    return self._json(reply["status"], reply["body"], reply.get("headers"))
                stop = reply.get("stop_reason")
                if not stop:
                    return super()._messages(req, reply)
                message = fakeapi.build_message(req, reply, api.model)
                message["stop_reason"] = stop
                if req.streaming:
                    self._stream(message, reply.get("chunk", 40), reply.get("chunk_delay", 0.0))
                else:
                    self._json(200, message)

        return Handler


def last_user(req: Request) -> str:
    """The whole last user message (Aider may append its reminder to it)."""
    for message in reversed(req.body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
    return ""


REMINDER = "\n\n# *SEARCH/REPLACE block* Rules:"  # what it appends to the user's message


def said(req: Request) -> str:
    """The user's words of a request's last message, without the reminder it appends (none in
    its request for a summary, which quotes the whole conversation)."""
    return "" if SUMMARIZE in req.all_text() else last_user(req).split(REMINDER)[0]


def has(marker: str):
    return lambda req: SUMMARIZE not in req.all_text() and marker in last_user(req)


def default_reply(req: Request) -> dict:
    if SUMMARIZE in req.all_text():
        return {"text": "I asked you to write a lot of text and to create hello.py, which prints hello.", "delay": 2.0}
    lines = last_user(req).strip().splitlines()
    return {"text": f"Reply to: {lines[0][:60] if lines else '(empty)'}"}


CHAINED_FILES = {"turn 1": "src/totals.py", "turn 2": "src/rename_total.py", "turn 3": "src/export_csv.py"}


def chained_reply(req: Request) -> dict:
    """For `chained`. Aider summarizes its history only after it applied an edit, once the
    history is over --max-chat-history-tokens: turns 1 to 3 get a long answer (~1,700
    tokens) that creates a file; supervise's context, the last turn and the summary request
    get short ones, so that only the user's turns lead to a summary."""
    if SUMMARIZE in req.all_text():
        return {"text": "The user asked for src/totals.py and then for changes to it.", "delay": 2.0}
    first = (last_user(req).strip().splitlines() or ["(empty)"])[0]
    path = CHAINED_FILES.get(first[:6])
    if path:
        long_text = " ".join(f"Step {i}: {FILLER}" for i in range(100))
        edit = f"{path}\n```python\n<<<<<<< SEARCH\n=======\nprint({first[:6]!r})\n>>>>>>> REPLACE\n```\n"
        return {"text": f"Reply to: {first[:60]}\n\n{long_text}\n\n{edit}"}
    return {"text": f"Reply to: {first[:60]}"}


def fake_api() -> AiderFake:
    api = AiderFake(model="claude-3-5-haiku-20241022")
    api.default = default_reply
    long_text = "Here is a long answer. " + " ".join(f"Sentence {i}: {FILLER}" for i in range(60))
    edit_text = "Here is a long explanation before the edit. " + " ".join(f"Point {i}: {FILLER}" for i in range(40))
    api.add({"text": long_text}, has("KWLONG"), times=None)
    api.add(
        {"text": 'I will create the file.\n\nhello.py\n```python\n<<<<<<< SEARCH\n=======\nprint("hello")\n>>>>>>> REPLACE\n```\n'},
        has("KWNEWFILE"),
        times=None,
    )
    api.add(
        {
            "text": edit_text
            + '\n\nhello.py\n```python\n<<<<<<< SEARCH\nprint("hello")\n=======\nprint("hello")\nprint("world")\n>>>>>>> REPLACE\n```\n'
        },
        has("KWEDIT"),
        times=None,
    )
    api.add({"text": "Run this to check:\n\n```bash\necho hello-from-shell\n```\n"}, has("KWSHELL"), times=None)
    api.add({"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"}, has("KWOVERFLOW"), times=None)
    # the first answer stops at max_tokens; Aider continues it with the partial answer as prefill
    api.add(
        {"text": "This answer is cut off because it ran into the maximum number of output tok", "stop_reason": "max_tokens"},
        has("KWMAXTOKENS"),
        times=1,
    )
    api.add({"text": "kens. Done now."}, has("KWMAXTOKENS"), times=1)
    # a rate limit that passes after three tries, and one that does not (KWRATELIMIT is in both)
    api.add(lambda req: rate_limit(), has("KWRATELIMITED"), times=None)
    api.add(lambda req: rate_limit(), has("KWRATELIMIT"), times=3)
    return api


# ---------------------------------------------------------------- driving the screen


class Terminal(Screen):
    """A Screen that answers cursor-position requests (prompt_toolkit asks ESC[6n)."""

    def pump(self, timeout: float = 0.1) -> None:
        seen = len(self.raw)
        super().pump(timeout)
        new = "".join(self.raw[seen:])
        tail = (self.raw[seen - 1][-3:] if seen else "") + new  # a request split between reads
        for _ in range(tail.count("\x1b[6n")):
            c = self.vt.cursor
            self.child.send(f"\x1b[{c.row + 1};{c.col + 1}R")

    def output(self, since: int = 0) -> str:
        """What was drawn after `since` (a len(self.raw) mark), escape sequences removed."""
        return ANSI.sub("", "".join(self.raw[since:]))

    def cursor_line(self) -> str:
        """The row the cursor is on, up to the cursor (vt.text() holds the scrollback too)."""
        lines, c = self.vt.text(), self.vt.cursor
        return lines[len(lines) - self.vt.size[1] + c.row][: c.col]


def settle(screen: Terminal, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        screen.pump(0.1)


def until(screen: Terminal, check, what: str, timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.2)
        if check():
            return
        if not screen.child.isalive():
            break
    raise AssertionError(f"never saw {what}; the screen shows:\n{screen.text()[-3000:]}")


def waiting(screen: Terminal, rx: re.Pattern, what: str, timeout: float = 40.0) -> None:
    """Wait until the cursor sits right after a line matching rx, and nothing moves for 0.8 s."""
    deadline = time.monotonic() + timeout
    while True:
        until(screen, lambda: rx.search(screen.cursor_line()) is not None, what, max(1.0, deadline - time.monotonic()))
        mark = len(screen.raw)
        settle(screen, 0.8)
        if len(screen.raw) == mark and rx.search(screen.cursor_line()):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never stayed put; the screen shows:\n{screen.text()[-3000:]}")


def idle(screen: Terminal, timeout: float = 40.0) -> None:
    waiting(screen, PROMPT, "the input prompt", timeout)


def confirm(screen: Terminal, timeout: float = 40.0) -> None:
    waiting(screen, CONFIRM, "a (Y)es/(N)o question", timeout)


# ---------------------------------------------------------------- the environment


def prepare(base: Path, exe: Path, url: str) -> tuple[dict, Path]:
    home, work, tmp = base / "home", base / "work", base / "tmp"
    for d in (home, work, tmp, base / "xdg-config", base / "xdg-data", base / "xdg-cache", base / "xdg-state"):
        d.mkdir(parents=True)
    bundled = next(exe.parent.parent.glob("lib/python*/site-packages/litellm/model_prices_and_context_window_backup.json"))
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True)
    shutil.copy(bundled, caches / "model_prices_and_context_window.json")
    prices = json.loads(bundled.read_text())
    small = {
        **prices.get(MODEL, prices.get(MODEL.split("/", 1)[1], {})),
        "max_input_tokens": 1500,
        "max_output_tokens": 500,
        "max_tokens": 500,
    }
    (work / "small-model-metadata.json").write_text(json.dumps({MODEL: small}, indent=1) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AIDER_", "LITELLM_", "GIT_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(base / "xdg-config"),
        XDG_DATA_HOME=str(base / "xdg-data"),
        XDG_CACHE_HOME=str(base / "xdg-cache"),
        XDG_STATE_HOME=str(base / "xdg-state"),
        TMPDIR=str(tmp),
        TERM="xterm",
        LANG="C.UTF-8",
        ANTHROPIC_API_KEY="fake",
        ANTHROPIC_API_BASE=url,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    git = ["git", "-c", "user.name=fixture", "-c", "user.email=fixture@example.invalid"]
    subprocess.run([*git, "init", "-q", str(work)], check=True, env=env)
    (work / ".git" / "info" / "exclude").write_text("small-model-metadata.json\n")
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "empty"], check=True, env=env, cwd=work)
    return env, work


SCREEN = Terminal


class Model(AiderFake):
    """The fake for a session of turns that each create a file (`chained_reply`), each answer
    after a moment, as a model takes."""

    def __init__(self) -> None:
        super().__init__(model="claude-haiku-4-5")
        self.default = lambda req: {"delay": 1.5, **chained_reply(req)}


def environment(base: Path, api_url: str) -> tuple[dict[str, str], Path]:
    return prepare(base, binary(), api_url)


def ready(screen: Terminal) -> None:
    idle(screen, 90)


def quit(screen: Terminal) -> None:
    screen.type("/exit")
    until(screen, lambda: not screen.child.isalive(), "Aider exit", 20)


def compact(screen: Terminal) -> None:
    """Its summary of the history, which each turn here brings about."""
    until(screen, lambda: COMPACTED in screen.output(), "its summary", 90)


def compacting(api) -> bool:
    """Its summary is being made: its model was asked for one (and answers after a moment)."""
    return compactions(api) > 0


def compactions(api) -> int:
    """How many times it summarized its history: the summaries its model was asked for."""
    return sum(SUMMARIZE in json.dumps(r.body) for r in api.requests)


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
