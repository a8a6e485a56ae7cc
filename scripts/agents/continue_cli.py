#!/usr/bin/env python3
"""Record Continue CLI (npm @continuedev/cli, the command `cn`) fixtures with the real program:
tests/fixtures/continue-cli/VERSION/*.cast.gz.

    python scripts/agents/continue_cli.py                       # the pinned release, every scenario
    python scripts/agents/continue_cli.py --version 1.5.47 --out /tmp/try compact-manual

The release the tests pin (tests/kits/continue_cli.py) is used from tests/agents; another one is
installed into the agent cache (common.install_npm). Each scenario runs `cn` under supervise in a
120x40 PTY with a private HOME, XDG dirs and TMPDIR (one temp folder, removed afterwards), an
empty git repo as its project, and ~/.continue/config.yaml pointing its one model (Anthropic,
claude-haiku-4-5, contextLength 8000) at the kit's fake model (tests/kits/continue_cli.Model on
tests/fakeapi.FakeAnthropic). supervise records with `--inject off` (common.recording), except
`chained`: three /compact with a turn after each, supervise typing its context back after each.
What is typed when, and the fake's answers, are in the fixtures' README.md.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, keep_record, main, newest_npm, recording, save_given, wait_until, wanted  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "kits"))
import continue_cli as kit  # noqa: E402

LONG_MESSAGE = (
    "please read this long single line message carefully: it describes a refactoring of the "
    "configuration loader so that every option has one default, one environment variable and "
    "one documented place, and it must wrap on a 120 column screen"
)
PASTED_LINES = ["pasted line one: alpha", "pasted line two: beta", "pasted line three: gamma"]


def exe_for(version: str) -> Path:
    if version == kit.VERSION and kit.binary().exists():
        return kit.binary()
    return install_npm(kit.PACKAGE, version, kit.BINARY)


def compact(screen, count: int) -> None:
    """/compact, and wait for its `count`-th "compacted successfully" line (scrolled off or not)."""
    kit.typed(screen, kit.COMPACT)
    done = re.compile(r"(?:(?:%s)[\s\S]*){%d}" % (kit.COMPACTED, count))  # the pattern is an alternation
    wait_until(screen, lambda: done.search(screen.text()) is not None, 60, lambda: f"/compact never ended:\n{kit.view(screen)}")
    kit.idle(screen)


# ---- the scenarios -----------------------------------------------------------------------


def idle_startup(screen) -> None:
    kit.hold(screen, 10.0)
    kit.quit(screen)


def compact_manual(screen) -> None:
    kit.send(screen, "turn 1 hello")
    kit.send(screen, "turn 2 what next")
    compact(screen, 1)
    kit.hold(screen, 1.0)
    kit.send(screen, "turn 3 after compact")
    kit.quit(screen)


def compact_auto(screen) -> None:
    # `big 5500`: about 5,500 tokens of filler in the reply, the footer at "Context: 7x%"; the
    # next message passes the threshold and Continue compacts before sending it
    kit.send(screen, "turn 1 hello")
    kit.send(screen, "big 5500 tokens in this reply")
    kit.hold(screen, 2.0)
    kit.typed(screen, "turn 3 after the big one")
    # the footer's figure drops once the history is the summary (the notice may be drawn over at once)
    kit.wait(screen, r"• Context: \d%", timeout=60)
    kit.idle(screen, settle=3.0)
    kit.send(screen, "turn 4 after auto compact")
    kit.quit(screen)


def overflow(screen) -> None:
    # 400 "prompt is too long" to a turn; then to a turn and to the /compact after it
    kit.send(screen, "turn 1 hello")
    kit.typed(screen, "overflow please (the fake answers 400 prompt is too long)")
    kit.wait(screen, r"prompt is too long", timeout=30)
    kit.idle(screen, settle=2.0)
    kit.typed(screen, "overflow again (and the compaction gets 400 too)")
    kit.wait(screen, r"prompt is too long[\s\S]*prompt is too long", timeout=30)
    kit.idle(screen, settle=2.0)
    kit.typed(screen, kit.COMPACT)
    kit.wait(screen, r"Compaction failed", timeout=60)
    kit.idle(screen, settle=2.0)
    kit.send(screen, "turn 4 after the failed compaction")
    kit.quit(screen)


def limit(screen) -> None:
    kit.send(screen, "turn 1 hello")
    kit.typed(screen, "limit turn 2 (the fake answers 429 rate_limit_error)")
    kit.wait(screen, r"rate_limit_error", timeout=120)
    kit.idle(screen, settle=5.0)
    kit.quit(screen)


def long_line(screen) -> None:
    kit.send(screen, LONG_MESSAGE)
    kit.send(screen, "short one after")
    kit.quit(screen)


def multiline(screen) -> None:
    # Continue turns on no bracketed paste, so a terminal sends a paste as it is (lines ended by
    # CR, all at once); Ink takes such a burst as a paste into the input box, and Enter sends it
    kit.send(screen, "turn 1 hello")
    screen.child.send("\r".join(PASTED_LINES))
    kit.hold(screen, 1.0)
    screen.child.send("\r")
    kit.wait(screen, r"Reply to: pasted line three", timeout=30)
    kit.idle(screen)
    kit.send(screen, "short one after")
    kit.quit(screen)


def permission(screen) -> None:
    kit.send(screen, "turn 1 hello")
    kit.typed(screen, "bash please list files")
    kit.wait(screen, r"Would you like to continue\?", timeout=30)
    kit.hold(screen, 2.0)
    screen.child.send("\r")  # "> Continue (tab)", the highlighted answer
    kit.wait(screen, r"The command finished", timeout=30)
    kit.idle(screen)
    kit.quit(screen)


def given_answered(api) -> int:
    """How many of supervise's contexts Continue has sent the model as a turn."""
    return sum(1 for r in api.messages() if r.has_tools and r.last_user_text().lstrip().startswith("[supervise]"))


def chained(screen, api) -> None:
    """/compact after each turn; supervise types its context at the prompt (one line) and sends
    it; it is answered before the next turn is typed."""
    kit.send(screen, CHAINED_TURNS[0])
    for n, text in enumerate(CHAINED_TURNS[1:], start=1):
        before = given_answered(api)
        compact(screen, n)
        wait_until(
            screen,
            lambda before=before: given_answered(api) > before,
            90,
            lambda: f"no context typed after /compact; the screen shows:\n{kit.view(screen)}",
        )
        kit.hold(screen, 1.0)
        kit.idle(screen)
        kit.send(screen, text)
    kit.quit(screen)


SCENARIOS = {
    "idle-startup": idle_startup,
    "compact-manual": compact_manual,
    "compact-auto": compact_auto,
    "overflow": overflow,
    "limit": limit,
    "long-line": long_line,
    "multiline": multiline,
    "permission": permission,
    "chained": chained,  # supervise types its context back (common.recording with `given`)
}


def record(version: str, out: Path) -> None:
    exe = exe_for(version)
    for name, drive in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix="cn-"))  # no scenario name: "compact" in the footer path would be a finding
        given: list | None = [] if name == "chained" else None
        try:
            with kit.Model() as api:
                env, proj = kit.environment(base, api.url)
                with recording(name, [str(exe), *kit.ARGV], env, proj, out, given=given) as screen:
                    kit.ready(screen)
                    drive(screen, api) if given is not None else drive(screen)
                keep_record(out, name, kit.NAME, env, proj)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, kit.NAME, version, name, given)


if __name__ == "__main__":
    main(record, lambda: newest_npm(kit.PACKAGE), kit.NAME)
