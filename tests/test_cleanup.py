"""Nothing is left behind: no process of a session outlives it for long, and no hook socket
folder of a killed supervisor outlives the next start."""

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from agentdriver import Screen
from conftest import ROOT
from fakeapi import FakeAnthropic
from helpers import latest, wait_for
from procs import session_processes

TOY = ROOT / "tests" / "agents" / "toyagent.py"


def socket_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("supervise-*-*"))


def start(tmp_path, home, extra_env=None):
    """The toy agent as `claude` would be run (hook socket and all: it ignores --settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(SUPERVISE_HOME=str(home), HOME=str(tmp_path / "home"), **(extra_env or {}))
    claude = tmp_path / "claude"
    claude.write_text(f'#!/bin/sh\nexec {sys.executable} {TOY} --log {tmp_path / "toy.jsonl"} --paste "$@"\n')
    claude.chmod(0o755)
    screen = Screen(["--", str(claude)], env, tmp_path)
    screen.wait("toy: ready", 20)
    screen.type("hello there")
    screen.wait("reply to: hello there", 10)
    return screen


@pytest.mark.slow
def test_killing_the_supervisor_leaves_nothing_running_even_with_a_stuck_summary(tmp_path, home):
    before = socket_dirs()
    with FakeAnthropic() as api:
        # the session-end summary hangs: the recorder must still go, GRACE after the supervisor
        api.add({"text": "never mind", "delay": 120}, times=None)
        screen = start(
            tmp_path, home, {"SUPERVISE_SUMMARY_BASE_URL": api.url, "SUPERVISE_SUMMARY_API_KEY": "k", "SUPERVISE_RECORDER_GRACE": "2"}
        )
        sid = latest()["id"]
        assert len(session_processes(sid)) >= 2  # the recorder and the agent
        left = socket_dirs() - before
        assert len(left) == 1
        os.kill(screen.child.pid, signal.SIGKILL)
        screen.close()
        started = time.monotonic()
        wait_for(lambda: not session_processes(sid), timeout=20)
        assert time.monotonic() - started < 15
    assert left <= socket_dirs()  # a killed supervisor cannot clean up its socket folder ...
    screen = start(tmp_path, home)  # ... the next start does
    screen.child.sendcontrol("d")
    screen.close()
    assert not (left & socket_dirs())
    assert "recorder exited 2 s after the supervisor was gone" in (home / "sessions" / sid / "recorder.err").read_text()
