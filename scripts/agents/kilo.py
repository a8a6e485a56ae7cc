"""Record Kilo Code CLI (npm `@kilocode/cli`) fixtures with the real program.

    python scripts/agents/kilo.py --version 7.7.7          # -> tests/fixtures/kilo/7.7.7/
    python scripts/agents/kilo.py --version 7.7.7 --out /tmp/try compact-manual

The real `kilo` TUI runs under supervise in a 120x40 PTY with everything tests/kits/kilo.py
gives it: a private HOME, XDG dirs and TMPDIR (under one temporary folder, removed
afterwards), an empty git repo as its project, `anthropic/claude-haiku-4-5` served by the
kit's fake model (tests/fakeapi.FakeAnthropic) on 127.0.0.1 through `kilo.json`, and nothing
fetched, installed or reported. The kit's release is its pinned binary
(tests/agents/node_modules/.bin/kilo); another is installed into the agent cache. Keys are
typed one at a time. supervise records with `--inject off` (common.recording): the
recordings show the agent alone; except `chained`: three /compact with a turn after each,
supervise typing its context back after each. What the fake answers, and what was typed
when, are in the fixtures' README.md.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, keep_record, main, newest_npm, recording, save_given, wait_until, wanted  # noqa: E402

from kits import kilo as kit  # noqa: E402  (tests/ is on sys.path via common)

BUSY, COMPACT, COMPACTED = kit.BUSY, kit.COMPACT, kit.COMPACTED
idle, quit, ready, say, typed, view, wait = kit.idle, kit.quit, kit.ready, kit.say, kit.typed, kit.view, kit.wait

LONG_MESSAGE = (
    "please read this long single line message carefully: it describes a refactoring of the "
    "configuration loader so that every option has one default, one environment variable and "
    "one documented place, and it must wrap on a 120 column screen"
)
PASTED_LINES = ["pasted line one: alpha", "pasted line two: beta", "pasted line three: gamma"]


def install(version: str) -> Path:
    """The kit's pinned binary for its release; any other installed into the agent cache."""
    if version == kit.VERSION:
        return kit.binary()
    return install_npm(kit.PACKAGE, version, kit.BINARY)


def hold(screen, seconds: float) -> None:
    """Keep reading the screen for `seconds` (a spinner keeps `pump` from waiting that long)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        screen.pump(0.2)


def send(screen, text: str) -> None:
    """Type a message and Enter, without waiting for the answer."""
    typed(screen, text)
    screen.pump(0.4)
    screen.child.send("\r")


def compact(screen) -> None:
    """The slash command, picked from its popup, and the compaction through to the end."""
    typed(screen, COMPACT)
    screen.pump(1.5)
    screen.child.send("\r")
    wait(screen, COMPACTED, timeout=60)
    idle(screen)
    screen.pump(1.0)


# ---- the scenarios -----------------------------------------------------------------------


def idle_startup(screen, api) -> None:
    hold(screen, 3.0)
    quit(screen)


def compact_manual(screen, api) -> None:
    say(screen, "turn 1 hello")
    say(screen, "turn 2 what next")
    compact(screen)
    say(screen, "turn 3 after compact")
    quit(screen)


def compact_auto(screen, api) -> None:
    """The footer's context use climbs to 75% and 98% of the 200K window; the next message is
    compacted first, by itself, then answered."""
    say(screen, "turn 1 hello")
    say(screen, "big 150000 tokens reported for this turn")
    say(screen, "big 195000 tokens reported for this turn")
    send(screen, "turn 4 after the footer showed 98%")
    wait(screen, COMPACTED, timeout=60)
    wait(screen, r"Reply to: turn 4", timeout=60)
    idle(screen)
    screen.pump(1.0)
    say(screen, "turn 5 after auto compact")
    quit(screen)


def overflow(screen, api) -> None:
    """HTTP 400 "prompt is too long": a toast, then it compacts by itself and the turn is
    answered."""
    say(screen, "turn 1 hello")
    send(screen, "overflow please (the fake answers 400 prompt is too long)")
    wait(screen, r"prompt is too long", timeout=30)
    wait(screen, r"Reply to: overflow please", timeout=90)
    idle(screen)
    hold(screen, 6.0)  # let the toast go
    say(screen, "turn 2 after the overflow")
    quit(screen)


def limit(screen, api) -> None:
    """The second turn is answered 429 rate_limit_error with retry-after 2 hours 3 minutes:
    it shows the API's message and its countdown in the footer while it waits to retry."""
    say(screen, "turn 1 hello")
    send(screen, "limit turn 2 (the fake answers 429 rate limit)")
    wait(screen, r"retrying in", timeout=30)
    hold(screen, 8.0)
    quit(screen)


def long_line(screen, api) -> None:
    say(screen, LONG_MESSAGE)
    say(screen, "short one after")
    quit(screen)


def multiline(screen, api) -> None:
    say(screen, "turn 1 hello")
    screen.child.send("\x1b[200~" + "\n".join(PASTED_LINES) + "\x1b[201~")
    screen.pump(1.0)
    screen.child.send("\r")
    wait(screen, BUSY, timeout=30)
    idle(screen)
    screen.pump(1.0)
    say(screen, "short one after")
    quit(screen)


def permission(screen, api) -> None:
    say(screen, "turn 1 hello")
    send(screen, "bash please list files")
    wait(screen, r"Permission required", timeout=30)
    hold(screen, 2.0)
    screen.child.send("\r")  # "Allow once", the highlighted option
    wait(screen, r"The command finished", timeout=30)
    idle(screen)
    quit(screen)


def given_answered(api) -> int:
    """How many of supervise's contexts it has sent the model as a turn."""
    return sum(1 for r in api.requests if r.body.get("tools") and kit.last_user_text(r).lstrip().startswith("[supervise]"))


def chained(screen, api) -> None:
    """/compact after each turn; supervise types its context back, and it is answered before
    the next turn is typed."""
    say(screen, CHAINED_TURNS[0])
    for text in CHAINED_TURNS[1:]:
        before = given_answered(api)
        typed(screen, COMPACT)
        screen.pump(1.5)
        screen.child.send("\r")
        wait_until(
            screen, lambda: given_answered(api) > before, 90, lambda: f"no context typed after {COMPACT}; the screen shows:\n{view(screen)}"
        )
        screen.pump(1.0)
        idle(screen)
        screen.pump(1.0)
        say(screen, text)
    quit(screen)


SCENARIOS = {
    "idle-startup": (idle_startup, {}),
    "compact-manual": (compact_manual, {}),
    "compact-auto": (compact_auto, {}),
    "overflow": (overflow, {}),
    "limit": (limit, {}),
    "long-line": (long_line, {}),
    "multiline": (multiline, {}),
    "permission": (permission, {"KILO_PERMISSION": json.dumps({"bash": "ask"})}),
    "chained": (chained, {}),  # supervise types its context back (common.recording with `given`)
}


def record(version: str, out: Path) -> None:
    exe = install(version)
    for name, (drive, extra) in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix="kc-"))  # no scenario name: "compact" in the footer path would be a finding
        given: list | None = [] if name == "chained" else None
        try:
            with kit.Model() as api:
                env, proj = kit.environment(base, api.url)
                env.update(extra)
                env["PATH"] = f"{exe.parent}{os.pathsep}{env.get('PATH', '')}"
                with recording(name, [kit.BINARY, *kit.ARGV], env, proj, out, given=given) as screen:
                    ready(screen)
                    drive(screen, api)
                keep_record(out, name, kit.NAME, env, proj)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, kit.NAME, version, name, given)


if __name__ == "__main__":
    main(record, lambda: newest_npm(kit.PACKAGE), kit.NAME)
