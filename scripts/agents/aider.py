"""Record Aider (PyPI aider-chat) fixtures with the real program against supervise's fake Anthropic API.

    python scripts/agents/aider.py                      # the newest release -> tests/fixtures/aider/VERSION/
    python scripts/agents/aider.py --version 0.86.2 multiline long-line

Each scenario runs the real `aider` (installed in a venv of its own in the cache) under supervise
in a 120x40 PTY (TERM=xterm), with a private HOME, XDG folders and TMPDIR under one temporary
folder (removed after), in a fresh `git init` repo with one empty commit, talking through litellm
to tests/fakeapi.py (ANTHROPIC_API_BASE=http://127.0.0.1:PORT). litellm's model price map is
pre-seeded into ~/.aider/caches from litellm's bundled copy and LITELLM_LOCAL_MODEL_COST_MAP=True,
so nothing is fetched. prompt_toolkit's cursor-position requests (ESC[6n) are answered from the
emulated screen, as a terminal would (so the recordings' "i" events hold ESC[row;colR replies).
supervise runs with `--inject off` (common.recording): it would otherwise type its session
context into Aider after the summaries it sees; `chained` lets it (three summaries, a turn
after each, every turn answered at length so that the history outgrows 1,500 tokens).

The fake's replies are keyed on a marker in the user's message: KWLONG (~1k tokens of text),
KWNEWFILE (a SEARCH/REPLACE block creating hello.py), KWEDIT (long text and an edit of hello.py),
KWSHELL (a ```bash block: `echo hello-from-shell`), KWOVERFLOW (HTTP 400 "prompt is too long"),
KWMAXTOKENS (stop_reason max_tokens, then the continuation), KWRATELIMIT (HTTP 429 rate_limit_error,
as the API answers a key over its organization's rate limit, three times, then an answer),
KWRATELIMITED (that 429 every time); Aider's own "*Briefly* summarize this partial conversation"
request gets a one-line summary after 2 s; anything else gets "Reply to: <first line of the message>".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, Screen, install_pip, main, newest_pypi, recording, save_given, wanted  # noqa: E402

import fakeapi  # noqa: E402  (tests/ is on sys.path via common)
from fakeapi import FakeAnthropic, Request  # noqa: E402

PACKAGE = "aider-chat"
MODEL = "anthropic/claude-3-5-haiku-20241022"
FLAGS = ["--model", MODEL, "--no-check-update", "--no-show-release-notes", "--analytics-disable", "--no-gitignore", "--no-auto-commits"]
PROMPT = re.compile(r"^(\w+ )?(\w+)?> ?$")  # "> ", "ask> ", "ask multi> "
CONFIRM = re.compile(r"\(Y\)es/\(N\)o.*\]: ?$")
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-B]|[=>78DEHMNOZc])")
SUMMARIZE = "summarize this partial conversation"
FILLER = "this is deliberately verbose filler text to grow the chat history quickly."
MULTILINE = ["first line of a pasted message", "second line: please read all three", "third line ends it"]
MULTI_MODE = ["in multiline mode Enter starts a new line", "and Alt-Enter sends the message"]
ALT_ENTER = ["typed first line, then Alt-Enter", "typed second line, then Enter sends both"]
LONG_LINE = (
    "this is one long message typed on a single line, long enough to wrap on a screen of one hundred "
    "and twenty columns, so that the reader of the text log has to join its pieces back together in order"
)


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


def send(screen: Terminal, text: str, expect: str | None = None, then=idle, timeout: float = 40.0) -> None:
    """Type a line and Enter; wait for `expect` in the output (if given), then for `then`."""
    mark = len(screen.raw)
    screen.type(text)
    if expect:
        until(screen, lambda: re.search(expect, screen.output(mark)) is not None, repr(expect), timeout)
    if then:
        then(screen, timeout=timeout)


def confirm(screen: Terminal, timeout: float = 40.0) -> None:
    waiting(screen, CONFIRM, "a (Y)es/(N)o question", timeout)


def paste(screen: Terminal, lines: list[str]) -> None:
    """A bracketed paste of several lines (a terminal sends the newlines as CR)."""
    screen.child.send("\x1b[200~" + "\r".join(lines) + "\x1b[201~")
    settle(screen, 0.6)


def quit_aider(screen: Terminal, alt_enter: bool = False) -> None:
    screen.type("/exit", enter=False)
    screen.child.send("\x1b\r" if alt_enter else "\r")
    until(screen, lambda: not screen.child.isalive(), "Aider exit", 20)


# ---------------------------------------------------------------- scenarios


def summarize_verbose(screen: Terminal) -> None:
    send(screen, "first turn KWLONG please write a lot", "Sentence 59")
    send(screen, "second turn KWNEWFILE create hello.py", "Create new file", then=confirm)
    # the background summary's "Finished summarizing chat history." lands on the prompt line
    # and the prompt is not drawn again: wait for the note, not for a bare prompt
    send(screen, "y", "Finished summarizing chat history", then=None)
    settle(screen, 1.5)
    send(screen, "third turn KWEDIT extend hello.py", r"Finished summarizing chat history", then=None, timeout=60)
    settle(screen, 1.5)
    send(screen, "/tokens", "tokens max context window size")
    quit_aider(screen)


def summarize_quiet(screen: Terminal) -> None:
    send(screen, "first turn KWLONG please write a lot", "Sentence 59")
    send(screen, "second turn KWNEWFILE create hello.py", "Create new file", then=confirm)
    send(screen, "y", "Applied edit to hello.py")
    settle(screen, 3)  # the summary request is answered after 2 s, silently
    quit_aider(screen)


def confirm_tokenlimit_modes(screen: Terminal) -> None:
    send(screen, "KWSHELL suggest a command", "Run shell command", then=confirm)
    send(screen, "y", "Add command output", then=confirm)
    send(screen, "n")
    send(screen, "KWOVERFLOW huge request", "Open URL for more info", then=confirm)
    send(screen, "n")
    send(screen, "KWMAXTOKENS cut off", "Done now")
    send(screen, "/chat-mode ask", "ask edit format")
    send(screen, "hello in ask mode", "Reply to: hello in ask mode")
    send(screen, "/multiline-mode", "Multiline mode: Enabled")
    quit_aider(screen, alt_enter=True)


def context_limit_small_window(screen: Terminal) -> None:
    send(screen, "first small turn", "Try to proceed anyway", then=confirm)
    send(screen, "n")
    send(screen, "KWOVERFLOW second turn", "Try to proceed anyway", then=confirm)
    send(screen, "y", "Open URL for more info", then=confirm)
    send(screen, "n")
    send(screen, "/tokens", "tokens max context window size")
    quit_aider(screen)


def multiline(screen: Terminal) -> None:
    # a bracketed paste of three lines: Enter after it sends them as one message
    paste(screen, MULTILINE)
    send(screen, "", "Reply to: " + MULTILINE[0])
    # Aider's own ways: Alt-Enter inserts a newline; a "{" line opens a block closed by "}"
    screen.type(ALT_ENTER[0], enter=False)
    screen.child.send("\x1b\r")
    settle(screen, 0.4)
    send(screen, ALT_ENTER[1], "Reply to: " + re.escape(ALT_ENTER[0]))
    send(screen, "{")
    send(screen, "inside a brace block, line one")
    send(screen, "inside a brace block, line two")
    send(screen, "}", "Reply to: inside a brace block, line one")
    # /multiline-mode: Enter inserts a newline, Alt-Enter sends; the prompt is "multi> "
    send(screen, "/multiline-mode", "Multiline mode: Enabled")
    screen.type(MULTI_MODE[0])
    settle(screen, 0.4)
    screen.type(MULTI_MODE[1], enter=False)
    mark = len(screen.raw)
    screen.child.send("\x1b\r")
    until(screen, lambda: "Reply to: " + MULTI_MODE[0] in screen.output(mark), "the reply", 40)
    idle(screen)
    quit_aider(screen, alt_enter=True)


def long_line(screen: Terminal) -> None:
    send(screen, LONG_LINE, "Reply to: " + re.escape(LONG_LINE[:60]))
    send(screen, "a short one after it", "Reply to: a short one after it")
    quit_aider(screen)


def limit(screen: Terminal) -> None:
    """A turn; a turn answered 429 three times, then answered (Aider retries after 0.25, 0.5 and
    1 s); a turn answered 429 until Aider gives up (its delay doubles from 0.25 s; past 60 s it
    stops, after 8 retries, about 64 s) and offers the message's two URLs, both declined."""
    send(screen, "first turn before the limit", "Reply to: first turn before the limit")
    send(screen, "KWRATELIMIT second turn, limited for a moment", "Reply to: KWRATELIMIT second turn")
    # it asks while its "Waiting for <model>" spinner still runs: the spinner is drawn over the
    # question's row, so the question is waited for in the output, not on the cursor's row
    send(screen, "KWRATELIMITED third turn, limited until Aider gives up", r"Open URL for more info\?", then=None, timeout=120)
    settle(screen, 2)
    send(screen, "n", r"Open URL for more info\?", then=None)
    settle(screen, 2)
    send(screen, "n")
    settle(screen, 5)
    quit_aider(screen)


def chained(screen: Terminal) -> None:
    """Turns 1 to 3 each create a file (Aider asks first) and are then summarized in the
    background; supervise types its context at the prompt after each summary, and it is
    answered before the next turn is typed."""
    for text in CHAINED_TURNS:
        mark = len(screen.raw)
        if text[:6] not in CHAINED_FILES:
            send(screen, text, "Reply to: " + re.escape(text[:40]), timeout=60)
            break
        send(screen, text, "Create new file", then=confirm, timeout=60)
        send(screen, "y", "Applied edit to", then=None)
        until(screen, lambda: "Finished summarizing chat history" in screen.output(mark), "the summary", 60)
        until(screen, lambda: "Reply to: [supervise]" in screen.output(mark), "the reply to supervise's context", 60)
        idle(screen, timeout=60)
        settle(screen, 1.0)
    quit_aider(screen)


SCENARIOS = {
    # name: (extra flags, driver)
    "summarize-verbose": (["--verbose", "--max-chat-history-tokens", "400"], summarize_verbose),
    "summarize-quiet": (["--max-chat-history-tokens", "400"], summarize_quiet),
    "confirm-tokenlimit-modes": ([], confirm_tokenlimit_modes),
    "context-limit-small-window": (["--model-metadata-file", "small-model-metadata.json"], context_limit_small_window),
    "multiline": ([], multiline),
    "long-line": ([], long_line),
    "limit": ([], limit),
    # supervise types its context back after each summary (common.recording with `given`)
    # (on a model that litellm does not mark as retiring, unlike MODEL)
    "chained": (["--verbose", "--max-chat-history-tokens", "1500", "--model", "anthropic/claude-haiku-4-5"], chained),
}


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


def record(version: str, out: Path) -> None:
    exe = install_pip(PACKAGE, version, "aider")
    for name, (flags, drive) in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix=f"aider-{name}-"))
        given: list | None = [] if name == "chained" else None
        try:
            with fake_api() as api:
                if name == "chained":
                    api.default = chained_reply
                env, work = prepare(base, exe, api.url)
                with recording(name, [str(exe), *FLAGS, *flags], env, work, out, given=given) as screen:
                    screen.__class__ = Terminal  # common.recording makes a plain Screen
                    idle(screen, 90)
                    drive(screen)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, "aider", version, name, given)


if __name__ == "__main__":
    main(record, lambda: newest_pypi(PACKAGE), "aider")
