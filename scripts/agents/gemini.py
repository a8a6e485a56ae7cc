#!/usr/bin/env python3
"""Record Gemini CLI (npm @google/gemini-cli) fixtures: tests/fixtures/gemini/VERSION/*.cast.gz.

    python scripts/agents/gemini.py                      # the newest release, every scenario
    python scripts/agents/gemini.py --version 0.61.0 permission multiline

Installs the release into the agent cache (scripts/agents/common.py), starts the fake Gemini
API (tests/fake_gemini.py) on 127.0.0.1, and drives the real program under supervise in a
120x40 PTY. Each run gets a private HOME, XDG dirs and TMPDIR under one temp folder, removed
afterwards. What is typed, and the fake's replies, are in the fixtures' README.md.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, main, newest_npm, recording, save_given, wanted  # noqa: E402
from fake_gemini import FakeGemini  # noqa: E402  (tests/ is on sys.path via common)
from kits.gemini import PACKAGE, environment as make_env, idle, quit as quit_, settings  # noqa: E402

PLACEHOLDER = r"Type your message or @path/to/file"
LONG_LINE = (
    "please read this long single-line message that goes on well past the right edge of a "
    "one hundred and twenty column terminal so that Gemini CLI has to wrap it onto a second "
    "screen line when it draws it in the history"
)
PASTE = "first line of a pasted note\nsecond line of it\nthird and last line"


def send(screen, text: str, wait: str | None = None, timeout: float = 60.0) -> None:
    """Type a message, Enter, wait for `wait` (if given) and then for the idle prompt."""
    screen.type(text)
    if wait:
        screen.wait(wait, timeout)
    idle(screen, timeout)


def paste(screen, text: str) -> None:
    """A bracketed paste (as a terminal sends one), then Enter on its own."""
    screen.child.send("\x1b[200~" + text.replace("\n", "\r") + "\x1b[201~")
    screen.pump(0.6)
    screen.child.send("\r")
    screen.pump(0.1)


def record(version: str, out: Path) -> None:
    exe = install_npm(PACKAGE, version, "gemini")
    root = Path(tempfile.mkdtemp(prefix="rec-gemini-"))
    try:
        with FakeGemini(tool_dir=str(root)) as api:
            run = 0

            def start(name: str, config: dict, given: list | None = None):
                nonlocal run
                run += 1
                env, work = make_env(root / f"run{run}", api.url, config)
                return recording(name, [str(exe)], env, work, out, given=given)

            if wanted("startup-idle"):
                with start("startup-idle", settings()) as s:
                    s.wait(PLACEHOLDER, 60)
                    idle(s, settle=10.0)
                    quit_(s)

            if wanted("compress-manual"):
                # /compress with nothing to compress, two turns, /compress, then a tiny history
                # that compression would only inflate ("not beneficial").
                with start("compress-manual", settings()) as s:
                    idle(s, 60, settle=2.0)
                    send(s, "/compress", wait=r"Nothing to compress")
                    send(s, "hello one", wait=r"Fake reply to: hello one")
                    send(s, "second turn", wait=r"Fake reply to: second turn")
                    send(s, "/compress", wait=r"Chat history compressed from")
                    send(s, "TINYTOKENS now", wait=r"Fake reply to: TINYTOKENS")
                    send(
                        s,
                        "/compress",
                        wait=r"Compression was not beneficial|Chat history compressed from \d+ to \d+ tokens\.[\s\S]*Chat history compressed",
                    )
                    quit_(s)

            if wanted("compress-auto"):
                # BIGTOKENS makes the last prompt 600000 tokens (57%): the next message is
                # compressed first, at the default threshold (50%).
                with start("compress-auto", settings()) as s:
                    idle(s, 60, settle=2.0)
                    send(s, "hello one", wait=r"Fake reply to: hello one")
                    send(s, "BIGTOKENS please", wait=r"Fake reply to: BIGTOKENS please")
                    send(s, "auto compress me", wait=r"Fake reply to: auto compress me")
                    quit_(s)

            if wanted("permission"):
                with start("permission", settings()) as s:
                    idle(s, 60, settle=2.0)
                    s.type("RUNTOOL now")
                    s.wait(r"Allow execution of", 60)
                    s.pump(1.5)
                    s.child.send("\r")  # "● 1. Allow once" is highlighted
                    s.wait(r"The command ran\. Done\.", 60)
                    idle(s)
                    quit_(s)

            if wanted("overflow-context"):
                # The footer's context column on, no automatic compression: 0% -> 57% -> 100%
                # used, then a message too long for the 6 tokens left (not sent); Ctrl+U clears
                # the input it puts back, /compress, one more turn.
                with start("overflow-context", settings(footer_pct=True, threshold=1.0)) as s:
                    idle(s, 60, settle=2.0)
                    send(s, "hello one", wait=r"Fake reply to: hello one")
                    send(s, "BIGTOKENS please", wait=r"Fake reply to: BIGTOKENS please")
                    send(s, "FULLCTX fill it", wait=r"Fake reply to: FULLCTX fill it")
                    # the footer shows the previous request's count: one more short turn for "100% used"
                    send(s, "FULLCTX ok", wait=r"Fake reply to: FULLCTX ok")
                    s.wait(r"100% used", 10)
                    s.pump(1.0)
                    s.type("overflow test: this message is long enough to exceed the remaining context budget")
                    s.wait(r"might exceed the context window limit", 60)
                    s.pump(1.5)
                    s.child.send("\x15")  # Ctrl+U: the message is back in the input
                    idle(s)
                    send(s, "/compress", wait=r"Chat history compressed from 1048570")
                    send(s, "after compress", wait=r"Fake reply to: after compress")
                    quit_(s)

            if wanted("multiline"):
                with start("multiline", settings()) as s:
                    idle(s, 60, settle=2.0)
                    send(s, "hello one", wait=r"Fake reply to: hello one")
                    paste(s, PASTE)
                    s.wait(r"Fake reply to: first line of a pasted note", 60)
                    idle(s)
                    send(s, "after the paste", wait=r"Fake reply to: after the paste")
                    quit_(s)

            if wanted("long-line"):
                with start("long-line", settings()) as s:
                    idle(s, 60, settle=2.0)
                    send(s, LONG_LINE, wait=r"Fake reply to: please read this long")
                    send(s, "short one after", wait=r"Fake reply to: short one after")
                    quit_(s)
            if wanted("limit"):
                # An API key past its free tier's daily quota: the third message is answered
                # 429 RESOURCE_EXHAUSTED with a per-day QuotaFailure (fake_gemini.daily_quota).
                # Gemini CLI asks in a dialog ("Usage limit reached for all Pro models." /
                # "● 1. Keep trying" / "2. Stop"), left up a while; then Stop.
                with start("limit", settings()) as s:
                    idle(s, 60, settle=2.0)
                    send(s, "hello one", wait=r"Fake reply to: hello one")
                    send(s, "second turn", wait=r"Fake reply to: second turn")
                    s.type("QUOTADAY third turn")
                    s.wait(r"Usage limit reached for", 60)
                    s.pump(5.0)
                    s.child.send("\x1b[B")  # Down to "2. Stop"
                    s.pump(0.5)
                    s.child.send("\r")
                    idle(s)
                    s.pump(3.0)
                    quit_(s)

            if wanted("chained"):
                # Three /compress with a turn after each; supervise (typing on) gives its context
                # back after each, and the fake answers it "Fake reply to: [supervise] ...".
                given: list = []
                with start("chained", settings(), given) as s:
                    idle(s, 60, settle=2.0)
                    send(s, CHAINED_TURNS[0], wait=r"Fake reply to: turn 1")
                    for n, text in enumerate(CHAINED_TURNS[1:], start=1):
                        send(s, "/compress", wait=r"(?:Chat history compressed from \d+ to \d+ tokens\.[\s\S]*){%d}" % n)
                        s.wait(r"(?:Fake reply to: \[supervise\][\s\S]*){%d}" % n, 60)
                        idle(s)
                        send(s, text, wait=r"Fake reply to: " + re.escape(text[:12]))
                    quit_(s)
                save_given(out, "gemini", version, "chained", given)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(record, lambda: newest_npm(PACKAGE), "gemini")
