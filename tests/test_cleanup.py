"""Nothing is left behind: no process of a session outlives it for long, and no hook socket
folder of a killed supervisor outlives the next start."""

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agentdriver import Screen
from conftest import ROOT
from fakeapi import FakeAnthropic, default_reply
from helpers import latest, recorder_done, session, wait_for
from procs import is_recorder, session_processes

TOY = ROOT / "tests" / "agents" / "toyagent.py"


def short_tmp(tmp_path) -> Path:
    """This test's own temporary folder for the agent (TMPDIR): under /tmp, as short as a
    socket path needs (pytest's are deep enough to have supervise put its socket in /tmp)."""
    told = tmp_path / "short-tmp"
    if not told.exists():
        told.write_text(tempfile.mkdtemp(prefix="sv-", dir="/tmp"))
    return Path(told.read_text())


@pytest.fixture(autouse=True)
def _short_tmp_gone(tmp_path):
    yield
    if (tmp_path / "short-tmp").exists():
        shutil.rmtree(short_tmp(tmp_path), ignore_errors=True)


def socket_dirs(tmp_path) -> set[Path]:
    """The hook socket folders in this test's own temporary folder: another supervise on the
    machine tidies the shared one."""
    return set(short_tmp(tmp_path).glob("supervise-*-*"))


def start(tmp_path, home, extra_env=None):
    """The toy agent as `claude` would be run (hook socket and all: it ignores --settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(SUPERVISE_HOME=str(home), HOME=str(tmp_path / "home"), TMPDIR=str(short_tmp(tmp_path)), **(extra_env or {}))
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
    before = socket_dirs(tmp_path)
    with FakeAnthropic() as api:
        # the session-end summary hangs: the recorder must still go, GRACE after the supervisor
        api.add({"text": "never mind", "delay": 120}, times=None)
        screen = start(
            tmp_path, home, {"SUPERVISE_SUMMARY_BASE_URL": api.url, "SUPERVISE_SUMMARY_API_KEY": "k", "SUPERVISE_RECORDER_GRACE": "2"}
        )
        sid = latest()["id"]
        assert len(session_processes(sid)) >= 2  # the recorder and the agent
        left = socket_dirs(tmp_path) - before
        assert len(left) == 1
        os.kill(screen.child.pid, signal.SIGKILL)
        screen.close()
        started = time.monotonic()
        wait_for(lambda: not session_processes(sid), timeout=20)
        assert time.monotonic() - started < 15
    assert left <= socket_dirs(tmp_path)  # a killed supervisor cannot clean up its socket folder ...
    screen = start(tmp_path, home)  # ... the next start does
    screen.child.sendcontrol("d")
    screen.close()
    assert not (left & socket_dirs(tmp_path))
    assert "recorder exited 2 s after the supervisor was gone" in (home / "sessions" / sid / "recorder.err").read_text()


@pytest.mark.slow
def test_the_users_shell_is_back_while_a_context_round_still_waits_for_the_model(tmp_path, home):
    """The agent exits while its compaction's context round waits for the model: supervise
    exits at once, and the recorder makes the round (and the session's last) once it answers."""
    answer = threading.Event()

    def slow(req):
        answer.wait(120)
        return default_reply(req)

    with FakeAnthropic() as api:
        api.add(slow, times=None)
        screen = start(tmp_path, home, {"SUPERVISE_SUMMARY_BASE_URL": api.url, "SUPERVISE_SUMMARY_API_KEY": "k"})
        sid = latest()["id"]
        screen.type("/compact")
        wait_for(api.messages, 20, what="the compaction's context round asked the model")
        screen.type("/exit")
        wait_for(lambda: screen.pump(0.1) or not screen.child.isalive(), 60, what="supervise exited")  # (a hang guard)
        assert not answer.is_set() and [p for p in session_processes(sid) if is_recorder(p)], "the round is still in flight"
        assert "completed (exit 0)" in screen.text()
        # its recorder said it was done with the terminal's part: supervise did not wait it out
        assert "outran the recorder" not in screen.text()
        answer.set()
        recorder_done(sid, 60)
    assert [e["kind"] for e in session(sid)["events"]].count("compaction_started") == 1
