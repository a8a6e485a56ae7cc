#!/usr/bin/env python3
"""Record the Claude Code fixtures the detector tests replay (tests/fixtures/claude/*.cast).

Runs the pinned real Claude Code (tests/agents) under supervise against the fake Anthropic
API and drives it as a person would. Re-run after changing the pinned version, then check
the expected events in tests/test_patterns.py.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from agentdriver import Screen, claude_bin, claude_env  # noqa: E402
from fakeapi import FakeAnthropic  # noqa: E402
from supervisor.store import Store  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "claude"
IDLE = r"\? for shortcuts"


def session(name: str, script) -> None:
    # a neutral path: it is shown in Claude Code's header, where a word like "compact" would match
    base = Path(tempfile.mkdtemp(prefix="cc-"))
    project = base / "work"
    project.mkdir()
    sv = base / "sv"
    with FakeAnthropic() as api:
        env = claude_env(base / "home", project, api.url)
        env.update(SUPERVISE_HOME=str(sv), PYTHONPATH=str(ROOT))
        screen = Screen(["--name", name, "--", claude_bin(), "--model", "claude-sonnet-4-5"], env, project)
        screen.wait(IDLE, 60)
        script(screen, api)
        screen.child.sendcontrol("c")
        time.sleep(0.3)
        screen.child.sendcontrol("c")
        screen.close()
    store = Store(sv / "supervise.db")
    cast = Path(store.latest()["cast_path"])
    store.close()
    shutil.copy(cast, OUT / f"{name}.cast")
    shutil.rmtree(base, ignore_errors=True)
    print(f"recorded {name}.cast ({(OUT / f'{name}.cast').stat().st_size} bytes)")


def turns(screen: Screen, n: int, start: int = 1) -> None:
    for i in range(start, start + n):
        screen.type(f"turn {i}: please say hello")
        screen.wait(rf"Reply to: turn {i}", 60)
        screen.wait(IDLE, 60)


def plain(screen, api):
    turns(screen, 3)


def manual_compact(screen, api):
    turns(screen, 3)
    screen.type("/compact")
    screen.wait(r"Compacted", 90)
    screen.wait(IDLE, 60)
    turns(screen, 1, start=4)


def auto_compact(screen, api):
    turns(screen, 2)
    api.add({"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"},
            match=lambda r: r.last_user_text().startswith("turn 3") and not r.is_compaction)
    screen.type("turn 3: please say hello")
    screen.wait(r"Reply to: turn 3", 120)
    screen.wait(IDLE, 60)


def permission(screen, api):
    api.add({"text": "I will clean the build.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf build && ls", "description": "Clean the build"}}},
            match=lambda r: r.has_tools and "clean" in r.last_user_text())
    screen.type("please clean the build")
    screen.wait(r"Do you want to proceed\?", 60)
    time.sleep(1.0)
    screen.child.send("\x1b")  # Esc: refuse
    screen.wait(IDLE, 60)


def context_low(screen, api):
    turns(screen, 1)
    api.add({"text": "Reply to: turn 2: a big one", "usage": {"input_tokens": 170000}}, match=lambda r: "turn 2" in r.last_user_text())
    screen.type("turn 2: please say hello")
    screen.wait(r"Reply to: turn 2", 60)
    screen.wait(IDLE, 60)
    time.sleep(1.0)
    screen.pump()


SCRIPTS = {"plain": plain, "manual-compact": manual_compact, "auto-compact": auto_compact, "permission": permission, "context-low": context_low}

if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or SCRIPTS:
        session(name, SCRIPTS[name])
