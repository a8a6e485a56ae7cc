#!/usr/bin/env python3
"""Record Qwen Code (npm @qwen-code/qwen-code) fixtures: tests/fixtures/qwen/VERSION/*.cast.gz.

    python scripts/agents/qwen.py                       # the newest release, every scenario
    python scripts/agents/qwen.py --version 0.24.4 permission multiline

The pinned release is tests/agents' (tests/kits/qwen.py); another is installed into the agent
cache (scripts/agents/common.py). The real program runs under supervise in a 120x40 PTY, on
its `anthropic` auth type against the kit's fake model (tests/fakeapi.FakeAnthropic) on
127.0.0.1, with a private HOME, XDG dirs and TMPDIR under one temp folder, removed
afterwards. What is typed, and the fake's replies, are in the fixtures' README.md.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, ROOT, install_npm, main, newest_npm, recording, save_given, wanted  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "kits"))
import qwen as kit  # noqa: E402  (tests/kits/qwen.py)

LONG_LINE = (
    "please read this long single-line message that goes on well past the right edge of a "
    "one hundred and twenty column terminal so that the agent has to wrap it onto a second "
    "screen line when it draws it in the history"
)
PASTE = "first line of a pasted note\nsecond line of it\nthird and last line"
AUTO_AT = 168_000  # input tokens past its automatic compaction (167,000 of a 200k window)
ANSI = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-B]|[=>78])")


def drawn(screen) -> int:
    """How much it has drawn so far (a mark for `wait_after`)."""
    return sum(len(chunk) for chunk in screen.raw)


def wait_after(screen, mark: int, pattern: str, timeout: float = 60.0) -> None:
    """Until `pattern` is drawn after `mark`: it clears the screen and draws its history again
    once that is taller than the screen, so what is on screen cannot be counted."""
    rx = re.compile(pattern)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.2)
        if rx.search(ANSI.sub("", "".join(screen.raw)[mark:])):
            return
    raise AssertionError(f"never drew {pattern!r}; the screen shows:\n{screen.text()[-3000:]}")


def send(screen, text: str, wait: str | None = None, timeout: float = 60.0) -> None:
    """Type a message, Enter, wait for `wait` (if given) and then for the idle prompt."""
    screen.type(text)
    if wait:
        screen.wait(wait, timeout)
    kit.idle(screen, timeout)


def paste(screen, text: str) -> None:
    """A bracketed paste (as a terminal sends one), then Enter on its own."""
    screen.child.send("\x1b[200~" + text.replace("\n", "\r") + "\x1b[201~")
    screen.pump(0.8)
    screen.child.send("\r")
    screen.pump(0.1)


def executable(version: str) -> Path:
    return kit.binary() if version == kit.VERSION else install_npm(kit.PACKAGE, version, kit.BINARY)


def record(version: str, out: Path) -> None:
    exe = executable(version)
    root = Path(tempfile.mkdtemp(prefix="rec-qwen-"))
    try:
        with kit.Model() as api:
            run = 0

            def start(name: str, given: list | None = None, **extra):
                nonlocal run
                run += 1
                env, work = kit.environment(root / f"run{run}", api.url, **extra)
                return recording(name, [str(exe), *kit.ARGV], env, work, out, given=given)

            if wanted("idle-startup"):
                with start("idle-startup") as s:
                    kit.ready(s)
                    kit.idle(s, settle=10.0)
                    kit.quit(s)

            if wanted("compact-manual"):
                # /compress with nothing to compress, two turns, /compress, one more turn
                with start("compact-manual") as s:
                    kit.ready(s)
                    s.pump(1.0)
                    send(s, kit.COMPACT)
                    s.pump(2.0)
                    send(s, "hello one", wait=r"Reply to: hello one")
                    send(s, "second turn", wait=r"Reply to: second turn")
                    send(s, kit.COMPACT, wait=kit.COMPACTED)
                    send(s, "after the compaction", wait=r"Reply to: after the compaction")
                    kit.quit(s)

            if wanted("compact-auto"):
                # `big N` makes the last prompt N tokens: the footer says 84% used, and the next
                # message is compacted first (past 167,000 of the 200k window)
                with start("compact-auto") as s:
                    kit.ready(s)
                    send(s, "hello one", wait=r"Reply to: hello one")
                    send(s, f"big {AUTO_AT} tokens now", wait=r"Reply to: big")
                    s.pump(2.0)
                    send(s, "after big", wait=r"Reply to: after big")
                    s.pump(2.0)
                    kit.quit(s)

            if wanted("overflow"):
                # two turns, then one the API refuses once as too long (HTTP 400 "prompt is too
                # long"): it compacts by itself and sends the turn again; then one more turn
                with start("overflow") as s:
                    kit.ready(s)
                    send(s, "hello one", wait=r"Reply to: hello one")
                    send(s, "second turn", wait=r"Reply to: second turn")
                    send(s, "overflow now please", wait=r"Reply to: overflow now|API Error")
                    s.pump(2.0)
                    send(s, "after the overflow", wait=r"Reply to: after the overflow")
                    kit.quit(s)

            if wanted("limit"):
                # the API's 429 rate_limit_error with retry-after: it retries, the countdown is
                # left up a while, then Esc cancels the turn
                with start("limit") as s:
                    kit.ready(s)
                    send(s, "hello one", wait=r"Reply to: hello one")
                    s.type("limit reached here")
                    s.wait(kit.LIMIT_SHOWN, 240)
                    s.pump(8.0)
                    s.child.send("\x1b")
                    kit.idle(s, 60)
                    s.pump(2.0)
                    kit.quit(s)

            if wanted("long-line"):
                with start("long-line") as s:
                    kit.ready(s)
                    send(s, LONG_LINE, wait=r"Reply to: please read this long")
                    send(s, "short one after", wait=r"Reply to: short one after")
                    kit.quit(s)

            if wanted("multiline"):
                with start("multiline") as s:
                    kit.ready(s)
                    send(s, "hello one", wait=r"Reply to: hello one")
                    paste(s, PASTE)
                    s.wait(r"Reply to: third and last line", 60)
                    kit.idle(s)
                    send(s, "after the paste", wait=r"Reply to: after the paste")
                    kit.quit(s)

            if wanted("permission"):
                # `run ...`: its shell tool; the approval dialog is left up a moment, then the
                # first option (allow once) is taken
                with start("permission") as s:
                    kit.ready(s)
                    s.type("run the hello command")
                    s.wait(kit.PERMISSION, 60)
                    s.pump(2.0)
                    s.child.send("\r")
                    s.wait(r"The command finished\.", 60)
                    kit.idle(s)
                    kit.quit(s)

            if wanted("chained"):
                # three /compress with a turn after each; supervise (typing on) gives its context
                # back after each (a paste: "[Pasted Content 836 chars]" in its input box), and the
                # fake answers it "Reply to: <its last line>"
                given: list = []
                with start("chained", given) as s:
                    kit.ready(s)
                    send(s, CHAINED_TURNS[0], wait=r"Reply to: turn 1")
                    for text in CHAINED_TURNS[1:]:
                        mark = drawn(s)
                        s.type(kit.COMPACT)
                        wait_after(s, mark, kit.COMPACTED)
                        wait_after(s, mark, r"Reply to: Continue from the current task")
                        s.pump(2.0)
                        kit.idle(s)
                        mark = drawn(s)
                        s.type(text)
                        wait_after(s, mark, r"Reply to: " + re.escape(text[:12]))
                        kit.idle(s)
                    kit.quit(s)
                save_given(out, kit.NAME, version, "chained", given)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(record, lambda: newest_npm(kit.PACKAGE), kit.NAME)
