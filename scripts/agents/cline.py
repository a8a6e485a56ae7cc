#!/usr/bin/env python3
"""Record Cline CLI (npm `cline`) fixtures with the real program.

    python scripts/agents/cline.py                          # the kit's release, every scenario
    python scripts/agents/cline.py --version 3.0.65 --out /tmp/try compact-manual

The real `cline` TUI runs under supervise in a 120x40 PTY with everything tests/kits/cline.py
gives it: a private HOME, XDG dirs and TMPDIR (under one temporary folder, removed
afterwards), an empty git repo as its project, its `anthropic` provider pointed at the kit's
fake model (tests/fakeapi.FakeAnthropic) on 127.0.0.1 through
~/.cline/data/settings/providers.json, sandbox mode (no hub daemon), nothing fetched, updated
or reported. The kit's release is its pinned binary (tests/agents/node_modules/.bin/cline);
another is installed into the agent cache. Keys are typed one at a time. supervise records
with `--inject off` (common.recording): the recordings show the agent alone; except
`chained`: three /compact with a turn after each, supervise typing its context back after
each. What the fake answers, and what was typed when, are in the fixtures' README.md.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, keep_record, main, recording, save_given, wait_until, wanted  # noqa: E402

from kits import cline as kit  # noqa: E402  (tests/ is on sys.path via common)

COMPACT, COMPACTED = kit.COMPACT, kit.COMPACTED
hold, idle, quit, ready, say, typed, view, wait = kit.hold, kit.idle, kit.quit, kit.ready, kit.say, kit.typed, kit.view, kit.wait

LONG_MESSAGE = (
    "please read this long single line message carefully: it describes a refactoring of the "
    "configuration loader so that every option has one default, one environment variable and "
    "one documented place, and it must wrap on a 120 column screen"
)
PASTE = "pasted line one: alpha\npasted line two: beta\npasted line three: gamma"
# compact-auto's model: one its catalog does not know, so the window given in its provider
# settings holds (30k tokens; its trigger is 90% of the window over how far the last
# request's reported input tokens outran its own estimate, at most 4 times)
AUTO_MODEL, AUTO_WINDOW = "claude-haiku-4-5-30k", 30000


def install(version: str) -> Path:
    """The kit's pinned binary for its release; any other installed into the agent cache."""
    if version == kit.VERSION and kit.binary().exists():
        return kit.binary()
    return install_npm(kit.PACKAGE, version, kit.BINARY)


def send(screen, text: str) -> None:
    """Type a message and Enter, without waiting for the answer."""
    typed(screen, text)
    screen.pump(0.4)
    screen.child.send("\r")


def compact(screen, times: int = 1) -> None:
    """/compact, and wait for its `times`-th rule in the chat."""
    send(screen, COMPACT)
    wait(screen, r"(?:%s[\s\S]*){%d}" % (COMPACTED.pattern, times), 60)
    idle(screen)


def idle_startup(screen, api) -> None:
    hold(screen, 8.0)
    quit(screen)


def compact_manual(screen, api) -> None:
    send(screen, COMPACT)  # nothing to compact yet
    hold(screen, 4.0)
    idle(screen)
    say(screen, "turn 1 hello")
    say(screen, "turn 2 what next")
    compact(screen)
    say(screen, "turn 3 after compact")
    quit(screen)


def compact_auto(screen, api) -> None:
    """`big N` asks for a shell command and reports N input tokens: the request after the
    command's result, in the same run, is measured against them and it compacts first."""
    say(screen, "turn 1 hello")
    send(screen, "big 150000 tokens reported for this turn")
    wait(screen, COMPACTED, 60)
    wait(screen, r"The command finished\.", 60)
    idle(screen)
    say(screen, "turn 3 after auto compact")
    quit(screen)


def overflow(screen, api) -> None:
    """HTTP 400 "prompt is too long": it drops older messages ("overflow-recovery-compacting",
    no summary asked) and sends the turn again."""
    say(screen, "turn 1 hello")
    say(screen, "turn 2 what next")
    send(screen, "overflow please (the fake answers 400 prompt is too long)")
    wait(screen, r"overflow-recovery-compacted", 60)
    wait(screen, r"Reply to: overflow please", 60)
    idle(screen)
    say(screen, "turn 4 after overflow")
    quit(screen)


def limit(screen, api) -> None:
    """Every `limit` turn is answered 429 rate_limit_error (retry-after 2 s): its SDK retries
    silently, then it shows the API's message as an error."""
    say(screen, "turn 1 hello")
    send(screen, "limit turn 2 (the fake answers 429 rate limit)")
    wait(screen, r"Error: .*rate limit", 120)
    idle(screen)
    hold(screen, 3.0)
    quit(screen)


def long_line(screen, api) -> None:
    say(screen, LONG_MESSAGE)
    say(screen, "short one after")
    quit(screen)


def multiline(screen, api) -> None:
    say(screen, "turn 1 hello")
    screen.child.send("\x1b[200~" + PASTE + "\x1b[201~")  # a bracketed paste, as a terminal sends one
    hold(screen, 1.0)
    screen.child.send("\r")
    wait(screen, r"Reply to: pasted line three", 60)
    idle(screen)
    say(screen, "short one after")
    quit(screen)


def permission(screen, api) -> None:
    """Run with `--auto-approve false`: a shell command asks first ("Cline needs permission");
    `y` approves it."""
    say(screen, "turn 1 hello")
    send(screen, "bash please list files")
    wait(screen, r"Approve tool call\?", 60)
    hold(screen, 2.0)
    screen.child.send("y")
    wait(screen, r"The command finished\.", 60)
    idle(screen)
    say(screen, "short one after")
    quit(screen)


def given_answered(api) -> int:
    """How many of supervise's contexts it has sent the model as a turn."""
    return sum(1 for r in api.messages() if r.has_tools and kit.last_user_text(r).lstrip().startswith("[supervise]"))


def chained(screen, api) -> None:
    """/compact after each turn; supervise types its context at the prompt and sends it; it is
    answered before the next turn is typed. The first message is sent as one burst: on the start
    screen its logo redraws at every key, and a row of it that stood a moment between two keys
    cannot be put in order in the text log."""
    screen.type(CHAINED_TURNS[0])
    wait(screen, "Reply to: " + re.escape(CHAINED_TURNS[0][:12]), 60)
    idle(screen)
    for text in CHAINED_TURNS[1:]:
        before = given_answered(api)
        send(screen, COMPACT)
        wait_until(
            screen,
            lambda: given_answered(api) > before,
            120,
            lambda: f"no context typed after /compact; the screen shows:\n{view(screen)}",
        )
        idle(screen)
        hold(screen, 1.0)
        say(screen, text, "Reply to: " + re.escape(text[:12]))
    quit(screen)


# name: (drive, its own environment (model, window), extra arguments)
SCENARIOS = {
    "idle-startup": (idle_startup, {}, []),
    "compact-manual": (compact_manual, {}, []),
    "compact-auto": (compact_auto, {"model": AUTO_MODEL, "window": AUTO_WINDOW}, []),
    "overflow": (overflow, {}, []),
    "limit": (limit, {}, []),
    "long-line": (long_line, {}, []),
    "multiline": (multiline, {}, []),
    "permission": (permission, {}, ["--auto-approve", "false"]),
    "chained": (chained, {}, []),
}


def keep_manifests(kept: Path, env: dict, proj: Path) -> None:
    """Beside each kept session's files, its manifest (the folder the session ran in is read from it)."""
    from supervisor.profiles.cline import transcript

    top = transcript.folder(env, str(proj))
    for conversation in kept.glob("*/*.messages.json"):
        sid = conversation.name.split(".", 1)[0]
        shutil.copy(top / sid / f"{sid}.json", conversation.parent)


def record(version: str, out: Path) -> None:
    exe = install(version)
    for name, (drive, setup, extra) in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix="cl-"))  # no scenario name: "compact" in the footer's path would be a finding
        given: list | None = [] if name == "chained" else None
        try:
            with kit.Model() as api:
                env, proj = kit.environment(base, api.url, **setup)
                env["PATH"] = f"{exe.parent}{os.pathsep}{env.get('PATH', '')}"
                with recording(name, [kit.BINARY, *kit.ARGV, *extra], env, proj, out, given=given) as screen:
                    ready(screen)
                    drive(screen, api)
                keep_record(out, name, kit.NAME, env, proj)
                keep_manifests(out / "record" / name, env, proj)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, kit.NAME, version, name, given)


if __name__ == "__main__":
    main(record, lambda: kit.VERSION, kit.NAME)
