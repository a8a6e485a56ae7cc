"""Record OpenCode (npm `opencode-ai`) fixtures with the real program.

    python scripts/agents/opencode.py                 # the newest release -> tests/fixtures/opencode/VERSION/
    python scripts/agents/opencode.py --version 1.18.33 --out /tmp/try compact-manual

The real `opencode` TUI runs under supervise in a 120x40 PTY, with a private HOME, XDG
dirs and TMPDIR (all under one temporary folder, removed afterwards), an empty git repo as
its project, and `anthropic/claude-sonnet-4-5` served by tests/fakeapi.FakeAnthropic on
127.0.0.1 (`provider.anthropic.options.baseURL` in opencode.json; OPENCODE_DISABLE_* set and
npm_config_registry pointed at a dead port, so it fetches and installs nothing). Keys are
typed one at a time. supervise records with `--inject off` (common.recording): the
recordings show OpenCode alone; except `chained` (on claude-haiku-4-5): three /compact with
a turn after each, supervise typing its context back after each. The fake model (`Model`): an ordinary turn answers
`Reply to: <last line>` after 2 s, streamed slowly; `big N ...` also reports
`usage.input_tokens = N`; `bash ...` asks for a bash tool call, then says "The command
finished."; `overflow ...` answers HTTP 400 "prompt is too long" once per text; `limit ...`
answers OpenCode Go's usage limit (tests/fakeapi.go_usage_limit: HTTP 429 GoUsageLimitError,
`retry-after` to a reset 2 hours 3 minutes after the first such answer; `limit` runs on
`opencode-go/minimax-m2.7`, set by OPENCODE_CONFIG_CONTENT at the fake API); a
compaction request gets a `## Goal / ## Progress` summary after 3 s, or HTTP 400 right after
an `overflow again ...` turn did; the title request gets "Test session".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, keep_record, main, newest_npm, recording, save_given, wait_until, wanted  # noqa: E402
from fakeapi import FakeAnthropic  # noqa: E402  (tests/ is on sys.path via common)
from kits.opencode import (  # noqa: E402
    BUSY,
    Model,
    _last_user_text,
    environment,
    hold,
    idle,
    quit,
    ready as start,
    say,
    typed,
    view,
    wait,
)

AGENT = "opencode"
PACKAGE = "opencode-ai"
MODEL = "claude-sonnet-4-5"
# `chained` runs on a model no CLI or SDK marks as retiring (claude-sonnet-4-5 retires 2026-11-30)
CHAINED_MODEL = "claude-haiku-4-5"
# `limit` runs on OpenCode Go, OpenCode's own subscription, whose gateway tells a spent usage
# limit apart (GoUsageLimitError): MiniMax M2.7 is one of its models served in the Anthropic
# format (models.dev: provider.npm @ai-sdk/anthropic), so tests/fakeapi serves it
LIMIT_PROVIDER = "opencode-go"
LIMIT_MODEL = "minimax-m2.7"

# A message long enough to wrap in OpenCode's 120-column session view (and its input box).
LONG_MESSAGE = (
    "please read this long single line message carefully: it describes a refactoring of the "
    "configuration loader so that every option has one default, one environment variable and "
    "one documented place, and it must wrap on a 120 column screen"
)
TYPED_LINES = ["first line of a message typed with ctrl+j", "second line of it", "third and last line"]
PASTED_LINES = ["pasted line one: alpha", "pasted line two: beta", "pasted line three: gamma"]


def install(version: str) -> Path:
    """opencode-ai@VERSION with --ignore-scripts, then its postinstall.mjs (which links the
    platform package's binary over bin/opencode.exe) run with a throwaway HOME."""
    exe = install_npm(PACKAGE, version, "opencode", ignore_scripts=True)
    package = exe.resolve().parent.parent
    if not _runs(exe):
        home = Path(tempfile.mkdtemp(prefix="opencode-postinstall-"))
        try:
            subprocess.run(
                ["node", str(package / "postinstall.mjs")],
                cwd=package,
                env={**os.environ, "HOME": str(home), "TMPDIR": str(home)},
                check=True,
            )
        finally:
            shutil.rmtree(home, ignore_errors=True)
    if not _runs(exe):
        sys.exit(f"{exe} does not run")
    return exe


def _runs(exe: Path) -> bool:
    home = tempfile.mkdtemp(prefix="opencode-version-")
    try:
        p = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, env={**os.environ, "HOME": home, "TMPDIR": home}, timeout=60
        )
        return p.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(home, ignore_errors=True)


# ---- the environment -------------------------------------------------------------------


def go_config(api_url: str) -> dict:
    """The env of `limit`: OpenCode Go's MiniMax M2.7 at the fake API (OPENCODE_CONFIG_CONTENT,
    read over opencode.json)."""
    return {
        "OPENCODE_CONFIG_CONTENT": json.dumps(
            {
                "model": f"{LIMIT_PROVIDER}/{LIMIT_MODEL}",
                "small_model": f"{LIMIT_PROVIDER}/{LIMIT_MODEL}",
                "provider": {LIMIT_PROVIDER: {"options": {"baseURL": f"{api_url}/v1", "apiKey": "fake-key"}}},
            }
        )
    }


# ---- driving it --------------------------------------------------------------------------


# ---- the scenarios -----------------------------------------------------------------------


def compact_manual(screen) -> None:
    say(screen, "turn 1 hello")
    say(screen, "turn 2 what next")
    say(screen, "turn 3 more")
    typed(screen, "/compact")
    screen.pump(1.5)
    screen.child.send("\r")
    wait(screen, r"Compaction · .* · \d", timeout=60)
    idle(screen)
    screen.pump(1.0)
    say(screen, "turn 4 after compact")
    quit(screen)


def compact_auto(screen) -> None:
    say(screen, "turn 1 hello")
    say(screen, "big 900000 tokens reported for this turn")
    typed(screen, "big 990000 tokens reported for this turn")
    screen.pump(0.4)
    screen.child.send("\r")
    # the reply, then OpenCode compacts by itself and sends a hidden "Continue ..." turn
    wait(screen, r"Compaction · .* · \d", timeout=90)
    wait(screen, r"Reply to: Continue", timeout=60)
    idle(screen)
    screen.pump(1.0)
    say(screen, "turn 4 after auto compact")
    quit(screen)


def compact_keybind_overflow(screen) -> None:
    say(screen, "turn 1 hello")
    say(screen, "turn 2 what next")
    screen.child.send("\x18")  # ctrl+x, the leader key; then c = session_compact
    screen.pump(0.4)
    screen.child.send("c")
    wait(screen, r"Compaction · .* · \d", timeout=60)
    idle(screen)
    screen.pump(1.0)
    # HTTP 400 "prompt is too long": a toast, then an automatic compaction and a hidden turn
    typed(screen, "overflow please (fake answers 400 prompt is too long)")
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, r"prompt is too long", timeout=30)
    wait(screen, r"Reply to: Continue", timeout=90)
    idle(screen)
    screen.pump(6.0)  # let the toast go
    # again, and the compaction request gets 400 too: it fails
    typed(screen, "overflow again (compaction will also get 400)")
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, r"too large to compact", timeout=60)
    idle(screen)
    screen.pump(2.0)
    quit(screen)


def permission_bash(screen) -> None:
    say(screen, "turn 1 hello")
    typed(screen, "bash please list files")
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, r"Permission required", timeout=30)
    screen.pump(2.0)
    screen.child.send("\r")  # "Allow once", the highlighted option
    wait(screen, r"The command finished", timeout=30)
    idle(screen)
    quit(screen)


def idle_startup(screen) -> None:
    screen.pump(3.0)
    quit(screen)


def multiline(screen) -> None:
    # OpenCode's own way: ctrl+j starts a new line in the input box
    for i, line in enumerate(TYPED_LINES):
        if i:
            screen.child.send("\n")  # ctrl+j
            screen.pump(0.2)
        typed(screen, line)
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, re.escape(BUSY), timeout=30)
    idle(screen)
    screen.pump(1.0)
    # a bracketed paste of three lines
    screen.child.send("\x1b[200~" + "\n".join(PASTED_LINES) + "\x1b[201~")
    screen.pump(1.0)
    screen.child.send("\r")
    wait(screen, re.escape(BUSY), timeout=30)
    idle(screen)
    screen.pump(1.0)
    say(screen, "short one after")
    quit(screen)


def long_line(screen) -> None:
    say(screen, LONG_MESSAGE)
    say(screen, "short one after")
    quit(screen)


def limit(screen) -> None:
    """On OpenCode Go: the second turn is answered with its usage limit (GoUsageLimitError,
    reset 2 hours 3 minutes ahead). OpenCode shows it in the footer while it waits to try
    again, and a "Go limit reached" dialog over the session, which is dismissed with Esc."""
    say(screen, "turn 1 hello")
    typed(screen, "limit turn 2 (the fake answers: usage limit reached)")
    screen.pump(0.4)
    screen.child.send("\r")
    wait(screen, r"Go limit reached", timeout=30)
    wait(screen, r"[■⬝].*usage limit reached\. It will reset in", timeout=30)
    hold(screen, 5.0)
    screen.child.send("\x1b")  # esc closes the dialog
    hold(screen, 1.0)
    if "Go limit reached" in view(screen):
        raise AssertionError(f"esc did not close the dialog; the screen shows:\n{view(screen)}")
    hold(screen, 6.0)
    quit(screen)  # ctrl+c quits while it waits to retry


def given_answered(api: FakeAnthropic) -> int:
    """How many of supervise's contexts OpenCode has sent the model as a turn."""
    return sum(1 for r in api.requests if r.body.get("tools") and _last_user_text(r).lstrip().startswith("[supervise]"))


def chained(screen, api: FakeAnthropic) -> None:
    """/compact after each turn; supervise pastes its context at the prompt (OpenCode shows
    `[Pasted ~N lines]`) and sends it; it is answered before the next turn is typed."""
    say(screen, CHAINED_TURNS[0])
    for text in CHAINED_TURNS[1:]:
        before = given_answered(api)
        typed(screen, "/compact")
        screen.pump(1.5)
        screen.child.send("\r")
        wait_until(
            screen,
            lambda: given_answered(api) > before,
            90,
            lambda: f"no context typed after /compact; the screen shows:\n{view(screen)}",
        )
        screen.pump(1.0)
        idle(screen)
        screen.pump(1.0)
        say(screen, text)
    quit(screen)


SCENARIOS = {
    "compact-manual": (compact_manual, {}),
    "compact-auto": (compact_auto, {}),
    "compact-keybind-overflow": (compact_keybind_overflow, {}),
    "permission-bash": (permission_bash, {"OPENCODE_PERMISSION": json.dumps({"bash": "ask"})}),
    "idle-startup": (idle_startup, {}),
    "multiline": (multiline, {}),
    "long-line": (long_line, {}),
    "limit": (limit, go_config),  # env from the fake API's address
    "chained": (chained, {}),  # supervise types its context back (common.recording with `given`)
}


def record(version: str, out: Path) -> None:
    exe = install(version)
    for name, (drive, extra) in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix="oc-"))  # no scenario name: "compact" in the footer path would be a finding
        given: list | None = [] if name == "chained" else None
        model = CHAINED_MODEL if name == "chained" else MODEL
        try:
            with Model(LIMIT_MODEL if name == "limit" else model) as api:
                env, proj = environment(base, api.url, extra(api.url) if callable(extra) else extra, model)
                env["PATH"] = f"{exe.parent}{os.pathsep}{env.get('PATH', '')}"
                with recording(name, ["opencode"], env, proj, out, given=given) as screen:
                    start(screen)
                    drive(screen, api) if given is not None else drive(screen)
                keep_record(out, name, AGENT, env, proj)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, AGENT, version, name, given)


if __name__ == "__main__":
    main(record, lambda: newest_npm(PACKAGE), AGENT)
