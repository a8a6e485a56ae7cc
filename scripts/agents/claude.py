#!/usr/bin/env python3
"""Record Claude Code fixtures: tests/fixtures/claude/VERSION/NAME.cast.gz.

    python scripts/agents/claude.py                      # the newest release, every scenario
    python scripts/agents/claude.py --version 2.1.330 plain permission

Installs the release (npm `@anthropic-ai/claude-code`) into the agent cache, runs it under
supervise in a real 120x40 PTY against the fake Anthropic API (tests/fakeapi.py) with a
private HOME (as tests/agentdriver.claude_env sets it up: onboarded, the project trusted,
ANTHROPIC_BASE_URL at the fake), and types into it as a person would. Then check the
patterns (`supervise patterns check NAME.cast.gz --agent claude`) and write expected.json.

A fresh install of 2.1.330 draws on the alternate screen (the "fullscreen" renderer); the
classic-* scenarios set CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN=1 for the main-screen one.
context-low runs the release's default model (auto mode, a 1M window), as a new user gets it.
supervise records with `--inject off` (common.recording), except in `chained`: three /compact
with a turn after each, supervise typing its context back after each (`--inject type`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, main, newest_npm, recording, save_given, wait_until, wanted  # noqa: E402

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL as MODEL, Screen, claude_env, claude_login_env  # noqa: E402  (common puts tests/ on the path)
from fakeapi import FakeAnthropic, default_reply, usage_limit  # noqa: E402

PACKAGE = "@anthropic-ai/claude-code"
PASTE = ["please check these three things:", "the build script runs on a clean checkout", "the tests pass twice in a row"]
LONG = (
    "please read the release notes of the last three versions and tell me which changes could affect the way the "
    "supervisor reads the screen, in particular the footer, the input box and the way long messages wrap"
)


def install(version: str) -> str:
    exe = install_npm(PACKAGE, version, "claude")
    if subprocess.run([str(exe), "--version"], capture_output=True).returncode != 0:
        # npm may skip the package's install script, which places the native binary
        package = exe.parents[1] / "@anthropic-ai" / "claude-code"
        subprocess.run(["node", str(package / "install.cjs")], cwd=package, check=True)
    return str(exe)


def visible(screen: Screen) -> str:
    """The screen as shown. (Screen.text() reads the primary screen; the fullscreen renderer
    draws on the alternate one.)"""
    return "\n".join(line.text.rstrip() for line in screen.vt.view())


def wait(screen: Screen, pattern: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while time.monotonic() < deadline:
        screen.pump()
        if rx.search(visible(screen)):
            return
        if not screen.child.isalive():
            break
    raise AssertionError(f"screen never showed {pattern!r}; it shows:\n{visible(screen)}")


def settle(screen: Screen, seconds: float = 1.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        screen.pump()


def turn(screen: Screen, text: str, reply: str | None = None) -> None:
    """Type a message, Enter, wait for the fake's reply and the idle footer."""
    screen.type(text)
    wait(screen, re.escape(reply or f"Reply to: {text[:60]}"), 90)
    wait(screen, IDLE, 60)
    settle(screen, 0.5)


def turns(screen: Screen, n: int, start: int = 1) -> None:
    for i in range(start, start + n):
        turn(screen, f"turn {i}: please say hello")


def paste(screen: Screen, lines: list[str]) -> None:
    """A bracketed paste of several lines, then Enter on its own: one message."""
    screen.child.send("\x1b[200~" + "\n".join(lines) + "\x1b[201~")
    settle(screen, 1.0)
    screen.child.send("\r")
    wait(screen, re.escape(f"Reply to: {lines[-1][:60]}"), 90)
    wait(screen, IDLE, 60)
    settle(screen, 0.5)


def plain(screen, api):
    turns(screen, 3)


def manual_compact(screen, api):
    turns(screen, 3)
    screen.type("/compact")
    wait(screen, r"Compacted", 120)
    wait(screen, IDLE, 60)
    settle(screen, 0.5)
    turns(screen, 1, start=4)


def auto_compact(screen, api):
    turns(screen, 2)
    api.add(
        {"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"},
        match=lambda r: r.last_user_text().startswith("turn 3") and not r.is_compaction,
    )
    turns(screen, 1, start=3)


def permission(screen, api):
    api.add(
        {
            "text": "I will clean the build.",
            "tool_use": {"name": "Bash", "input": {"command": "rm -rf build && ls", "description": "Clean the build"}},
        },
        match=lambda r: r.has_tools and "clean" in r.last_user_text(),
    )
    screen.type("please clean the build")
    wait(screen, r"Do you want to proceed\?", 90)
    settle(screen, 1.0)
    screen.child.send("\x1b")  # Esc: refuse
    wait(screen, IDLE, 60)
    settle(screen, 0.5)


def context_low(screen, api):
    """Run with the release's default model (a 1M window, auto mode): with claude-sonnet-4-5
    the footer's context figure is hidden behind the model's retirement notice (2.1.330)."""
    turns(screen, 1)
    api.add({"text": "Reply to: turn 2: a big one", "usage": {"input_tokens": 950000}}, match=lambda r: "turn 2" in r.last_user_text())
    turn(screen, "turn 2: please say hello", "Reply to: turn 2: a big one")
    wait(screen, r"until auto-compact|context used", 30)  # drawn a moment after the turn
    settle(screen, 1.0)


def multi_line(screen, api):
    turns(screen, 1)
    paste(screen, PASTE)
    turns(screen, 1, start=3)


def long_line(screen, api):
    turns(screen, 1)
    turn(screen, LONG)
    turns(screen, 1, start=3)


def classic_turns(screen, api):
    """The main-screen renderer: a turn, a paste, a long line."""
    turns(screen, 1)
    paste(screen, PASTE)
    turn(screen, LONG)


def classic_compact(screen, api):
    """The main-screen renderer: /compact, then an automatic compaction."""
    manual_compact(screen, api)
    api.add(
        {"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"},
        match=lambda r: r.last_user_text().startswith("turn 5") and not r.is_compaction,
    )
    turns(screen, 1, start=5)


def modes(screen, api):
    """shift+tab through every permission mode, a turn in each: each mode's footer, idle and
    busy, until it is back to the first."""
    for i in range(1, 6):
        turn(screen, f"turn {i}: please say hello")
        screen.child.send("\x1b[Z")  # shift+tab
        settle(screen, 1.5)


def limit(screen, api):
    """On a subscription login: the second turn is answered with a usage limit (reset two
    minutes ahead); then the user types again while limited."""
    turns(screen, 1)
    api.add(
        usage_limit(int(time.time()) + 120), match=lambda r: "turn 2" in r.last_user_text() or "continue" in r.last_user_text(), times=None
    )
    screen.type("turn 2: please say hello")
    wait(screen, r"limit", 60)
    settle(screen, 2.0)
    screen.type("continue")
    wait_until(
        screen,
        lambda: any("continue" in r.last_user_text() for r in api.messages()),
        60,
        lambda: f"the continue never reached the API; the screen shows:\n{visible(screen)}",
    )
    settle(screen, 3.0)


def limit_dialog(screen, api):
    """On a login that does not continue by itself at the reset (autoContinueAtUsageLimit
    off): the limit is a dialog ("What do you want to do?"), left unanswered a moment."""
    turns(screen, 1)
    api.add(usage_limit(int(time.time()) + 120), match=lambda r: "turn 2" in r.last_user_text(), times=None)
    screen.type("turn 2: please say hello")
    wait(screen, r"What do you want to do\?", 60)
    settle(screen, 2.0)
    screen.child.send("\x1b")  # Esc: the dialog closed unanswered
    wait(screen, IDLE, 30)
    settle(screen, 1.0)


def given_answered(api) -> int:
    """How many of supervise's contexts Claude Code has sent the model as a turn."""
    return sum(1 for r in api.messages() if r.has_tools and not r.is_compaction and "[supervise]" in r.last_user_text())


def chained(screen, api):
    """/compact after each turn; supervise types its context at the prompt (a bracketed
    paste, which Claude Code shows as `[Pasted text #1 +N lines]` until Enter) and it is
    answered before the next turn is typed."""
    turn(screen, CHAINED_TURNS[0])
    for text in CHAINED_TURNS[1:]:
        before = given_answered(api)
        screen.type("/compact")
        wait_until(
            screen,
            lambda: given_answered(api) > before,
            120,
            lambda: f"no context typed after /compact; the screen shows:\n{visible(screen)}",
        )
        settle(screen, 1.0)
        wait(screen, IDLE, 60)
        settle(screen, 1.0)
        turn(screen, text)


SCENARIOS = {
    "plain": plain,
    "manual-compact": manual_compact,
    "auto-compact": auto_compact,
    "permission": permission,
    "context-low": context_low,
    "multi-line": multi_line,
    "long-line": long_line,
    "classic-turns": classic_turns,
    "classic-compact": classic_compact,
    "chained": chained,  # supervise types its context back (common.recording with `given`)
    "modes": modes,
    "modes-narrow": modes,
    "limit": limit,
    "limit-dialog": limit_dialog,
}
CLASSIC = {"CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}
EXTRA_ENV = {"classic-turns": CLASSIC, "classic-compact": CLASSIC}
DEFAULT_MODEL = {"context-low"}  # no --model: what a new user gets
SIZES = {"modes-narrow": (60, 30)}  # (columns, rows); else 120x40
LOGIN = {"limit", "limit-dialog"}  # a subscription login, not a key: only a login is told of usage limits
SETTINGS = {"limit-dialog": {"autoContinueAtUsageLimit": False}}  # into ~/.claude/settings.json


def record(version: str, out: Path) -> None:
    exe = install(version)
    print(f"Claude Code {subprocess.run([exe, '--version'], capture_output=True, text=True).stdout.strip()}", flush=True)
    for name, script in SCENARIOS.items():
        if not wanted(name):
            continue
        # a neutral path: it is shown in the header, where a word like "compact" would match
        base = Path(tempfile.mkdtemp(prefix="cc-"))
        project = base / "work"
        project.mkdir()
        try:
            with FakeAnthropic() as api:
                # a summary takes a moment, as a real one does: the spinner is drawn every time
                api.add(lambda r: {**default_reply(r), "delay": 1.5}, match=lambda r: r.is_compaction, times=None)
                env = (claude_login_env if name in LOGIN else claude_env)(base / "home", project, api.url)
                if name in SETTINGS:
                    settings = base / "home" / ".claude" / "settings.json"
                    settings.write_text(json.dumps({**json.loads(settings.read_text()), **SETTINGS[name]}))
                env.update(
                    TMPDIR=str(base / "tmp"),
                    XDG_CONFIG_HOME=str(base / "home" / ".config"),
                    XDG_DATA_HOME=str(base / "home" / ".local" / "share"),
                    XDG_CACHE_HOME=str(base / "home" / ".cache"),
                    XDG_STATE_HOME=str(base / "home" / ".local" / "state"),
                    **EXTRA_ENV.get(name, {}),
                )
                (base / "tmp").mkdir()
                argv = [exe] if name in DEFAULT_MODEL else [exe, "--model", MODEL]
                given: list | None = [] if name == "chained" else None
                cols, rows = SIZES.get(name, (120, 40))
                with recording(name, argv, env, project, out, cols=cols, rows=rows, given=given) as screen:
                    wait(screen, IDLE, 90)
                    settle(screen, 1.0)
                    script(screen, api)
                    screen.child.sendcontrol("c")
                    time.sleep(0.3)
                    screen.child.sendcontrol("c")
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if name == "chained":
            save_given(out, "claude", version, name, given)


if __name__ == "__main__":
    main(record, lambda: newest_npm(PACKAGE), "claude")
