#!/usr/bin/env python3
"""Record pi (npm @mariozechner/pi-coding-agent) fixtures: tests/fixtures/pi/VERSION/*.cast.gz.

    python scripts/agents/pi.py                          # the kit's release, every scenario
    python scripts/agents/pi.py --version 0.73.1 --out /tmp/try compact-manual

The kit (tests/kits/pi.py) says how pi runs offline: a private HOME, XDG dirs and TMPDIR under
one temp folder (removed after), ~/.pi/agent/models.json pointing its Anthropic provider at
the fake Messages API (kit.Model, tests/fakeapi.py) on 127.0.0.1, claude-haiku-4-5 with
thinking off, PI_OFFLINE=1, an empty git repository as the project. The kit's binary is used
for its pinned release; another `--version` is installed into the agent cache. Each scenario
runs pi under supervise in a 120x40 PTY with `--inject off` (common.recording), except
`chained`: three /compact with a turn after each, supervise typing its context back after
each one. What is typed, and the fake's answers, are in the fixtures' README.md.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from common import CHAINED_TURNS, install_npm, keep_record, main, recording, save_given, wanted  # noqa: E402

from kits import pi as kit  # noqa: E402  (tests/ is on sys.path via common)

LONG_LINE = (
    "please read this long single line message carefully: it describes a refactoring of the "
    "configuration loader so that every option has one default, one environment variable and "
    "one documented place, and it must wrap on a 120 column screen"
)
PASTE = "pasted line one: alpha\npasted line two: beta\npasted line three: gamma"


def executable(version: str) -> Path:
    if version == kit.VERSION and kit.binary().exists():
        return kit.binary()
    return install_npm(kit.PACKAGE, version, kit.BINARY)


def compact(screen, times: int = 1) -> None:
    """/compact, and wait for its `[compaction]` block (each compaction draws one more)."""
    screen.type(kit.COMPACT)
    kit.wait(screen, r"Compacting context\.\.\.|(?:%s[\s\S]*){%d}" % (kit.COMPACTED, times), 30)
    kit.idle(screen)


def idle_startup(screen, api) -> None:
    kit.hold(screen, 8.0)
    kit.quit(screen)


def compact_manual(screen, api) -> None:
    screen.type(kit.COMPACT)  # nothing to compact yet: a warning
    kit.wait(screen, r"Nothing to compact", 15)
    kit.idle(screen)
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    kit.send(screen, "turn 2 what next", r"Reply to: turn 2")
    screen.type(kit.COMPACT)
    kit.wait(screen, kit.COMPACTED, 30)
    kit.idle(screen)
    screen.type(kit.COMPACT)  # right after one: "Already compacted"
    kit.wait(screen, r"Already compacted", 15)
    kit.idle(screen)
    kit.send(screen, "turn 3 after compact", r"Reply to: turn 3")
    kit.quit(screen)


def compact_auto(screen, api) -> None:
    """The footer's context figure climbs (big N reports N input tokens); past 200k - 16384 pi
    compacts by itself after the turn."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    kit.send(screen, "big 150000 tokens reported for this turn", r"Reply to: big 150000")
    kit.send(screen, "big 175000 tokens reported for this turn", r"Reply to: big 175000")
    screen.type("big 190000 tokens reported for this turn")
    kit.wait(screen, r"Auto-compacting\.\.\.", 30)
    kit.wait(screen, kit.COMPACTED, 30)
    kit.idle(screen)
    kit.send(screen, "turn 5 after auto compact", r"Reply to: turn 5")
    kit.quit(screen)


def overflow(screen, api) -> None:
    """HTTP 400 "prompt is too long": pi compacts ("Context overflow detected, Auto-compacting...")
    and sends the turn again."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.type("overflow please (the fake answers 400 prompt is too long)")
    kit.wait(screen, r"prompt is too long", 30)
    kit.wait(screen, r"Reply to: overflow please", 60)
    kit.idle(screen)
    kit.send(screen, "turn 3 after overflow", r"Reply to: turn 3")
    kit.quit(screen)


def limit(screen, api) -> None:
    """Every `limit` turn is answered 429 rate_limit_error: pi retries three times, then gives up."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.type("limit turn 2 (the fake answers 429 rate limit)")
    kit.wait(screen, r"Retrying \(1/3\)", 60)
    kit.wait(screen, r"Retry failed after \d+ attempts", 120)
    kit.idle(screen)
    kit.hold(screen, 3.0)
    kit.quit(screen)


def long_line(screen, api) -> None:
    kit.send(screen, LONG_LINE, r"Reply to: please read")
    kit.send(screen, "short one after", r"Reply to: short one after")
    kit.quit(screen)


def multiline(screen, api) -> None:
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.child.send("\x1b[200~" + PASTE + "\x1b[201~")  # a bracketed paste, as a terminal sends one
    kit.hold(screen, 1.0)
    screen.child.send("\r")
    kit.wait(screen, r"Reply to: pasted line three", 60)
    kit.idle(screen)
    kit.send(screen, "short one after", r"Reply to: short one after")
    kit.quit(screen)


def tool(screen, api) -> None:
    """No permission dialog in pi: the bash tool runs at once, its output drawn in the chat."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    kit.send(screen, "bash please list files", r"The command finished")
    kit.send(screen, "short one after", r"Reply to: short one after")
    kit.quit(screen)


def given_answered(api) -> int:
    """How many of supervise's contexts pi has sent the model as a turn."""
    return sum(1 for r in api.messages() if r.has_tools and r.last_user_text().lstrip().startswith("[supervise]"))


def chained(screen, api) -> None:
    common.chained(screen, api, kit, given_answered)


SCENARIOS = {
    "idle-startup": idle_startup,
    "compact-manual": compact_manual,
    "compact-auto": compact_auto,
    "overflow": overflow,
    "limit": limit,
    "long-line": long_line,
    "multiline": multiline,
    "tool": tool,
    "chained": chained,
}


def record(version: str, out: Path) -> None:
    exe = executable(version)
    for name, drive in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix="pi-"))  # no scenario name: "compact" in the footer's path would be a finding
        given: list | None = [] if name == "chained" else None
        try:
            with kit.Model() as api:
                env, proj = kit.environment(base, api.url)
                with recording(name, [str(exe), *kit.ARGV], env, proj, out, given=given) as screen:
                    kit.ready(screen)
                    drive(screen, api)
                keep_record(out, name, kit.NAME, env, proj)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:  # what was typed: pi's screen draws the user's words as it draws replies
            save_given(out, kit.NAME, version, name, given, requests=CHAINED_TURNS)


if __name__ == "__main__":
    main(record, lambda: kit.VERSION, kit.NAME)
