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

import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_pip, keep_record, main, newest_pypi, recording, save_given, wanted  # noqa: E402

from kits.aider import (  # noqa: E402  (tests/ is on sys.path via common)
    CHAINED_FILES,
    CHAINED_FLAGS,
    FLAGS,
    Terminal,
    chained_reply,
    confirm,
    fake_api,
    idle,
    prepare,
    settle,
    until,
)

PACKAGE = "aider-chat"
MULTILINE = ["first line of a pasted message", "second line: please read all three", "third line ends it"]
MULTI_MODE = ["in multiline mode Enter starts a new line", "and Alt-Enter sends the message"]
ALT_ENTER = ["typed first line, then Alt-Enter", "typed second line, then Enter sends both"]
LONG_LINE = (
    "this is one long message typed on a single line, long enough to wrap on a screen of one hundred "
    "and twenty columns, so that the reader of the text log has to join its pieces back together in order"
)


def send(screen: Terminal, text: str, expect: str | None = None, then=idle, timeout: float = 40.0) -> None:
    """Type a line and Enter; wait for `expect` in the output (if given), then for `then`."""
    mark = len(screen.raw)
    screen.type(text)
    if expect:
        until(screen, lambda: re.search(expect, screen.output(mark)) is not None, repr(expect), timeout)
    if then:
        then(screen, timeout=timeout)


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
    "chained": (CHAINED_FLAGS, chained),
}


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
                keep_record(out, name, "aider", env, work)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, "aider", version, name, given)


if __name__ == "__main__":
    main(record, lambda: newest_pypi(PACKAGE), "aider")
