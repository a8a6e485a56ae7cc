"""Bad input to `supervise browse` and `supervise patterns check`: each gets its one line and
exit status, and nothing recorded changes."""

import hashlib
import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pexpect
import pytest

from conftest import SUPERVISE, run_cli, run_cli_unprivileged
from helpers import latest, spawn, wait_for
from procs import session_processes
from supervisor import paths
from supervisor.store.database import Store

# ---------------------------------------------------------------- browse


def recorded_files() -> dict[str, str]:
    """Every file of the data directory, by name, with its digest."""
    root = paths.db_path().parent
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def taken():
    """A port of 127.0.0.1 another server listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def browser_log(tmp_path) -> tuple[dict, Path]:
    """An environment whose `--open` browser only notes the URL it was given."""
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {opened}\n')
    browser.chmod(0o700)
    return dict(os.environ, BROWSER=str(browser)), opened


def free_after(port: int) -> int:
    for candidate in range(port + 1, 65536):
        try:
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", candidate))
            return candidate
        except OSError:
            continue
    raise AssertionError("no free port")


def test_a_taken_port_is_said_in_one_line_with_the_next_free_one_and_nothing_changes(taken, tmp_path):
    run_cli("--", "sh", "-c", "echo keep-me", check=True)
    wait_for(lambda: not session_processes(latest()["id"]), 30)  # the recorder has written all it will
    before = recorded_files()
    env, opened = browser_log(tmp_path)
    done = run_cli("browse", "--port", str(taken), "--open", env=env)
    assert done.returncode == 1
    assert done.stderr == f"supervise: port {taken} on 127.0.0.1 is in use (hint: try --port {free_after(taken)})\n"
    assert not opened.exists()  # the other server's page is not opened
    assert recorded_files() == before
    store = Store.open_default(write=False)
    assert [s["status"] for s in store.sessions()] == ["completed"] and "keep-me" in store.sessions()[0]["command"]
    store.close()


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_out_of_range_is_a_usage_error(port):
    done = run_cli("browse", "--port", port)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"supervise: --port {port} is not a port (hint: use 1 to 65535, or 0 for any free port)\n"


def test_a_host_that_is_not_this_machine_is_said_in_one_line():
    done = run_cli("browse", "--host", "10.255.255.1")
    assert done.returncode == 1
    assert done.stderr == (
        "supervise: cannot serve on 10.255.255.1: it is not an address of this machine "
        "(hint: use 127.0.0.1 for this machine only, or 0.0.0.0 for every network it is on)\n"
    )


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_port_0_announces_the_port_it_got_which_answers_and_a_signal_ends_it_cleanly(stop, tmp_path):
    env, opened = browser_log(tmp_path)
    proc = subprocess.Popen(
        [*SUPERVISE, "browse", "--port", "0", "--open"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        first = proc.stderr.readline()
        m = re.fullmatch(
            r"supervise: serving (.+) to you only: open (http://127\.0\.0\.1:(\d+)/-/auth-token\?token=[0-9a-f]{64}) "
            r"to sign in \(opening it now; it works once; Ctrl-C to stop\)\n",
            first,
        )
        assert m, first
        assert m[1] == str(paths.db_path()) and m[3] != "0"
        # the browser was given the sign-in URL, once the server answered
        wait_for(lambda: opened.exists() and opened.read_text(), 30, what="the browser opened")
        assert opened.read_text() == m[2] + "\n"
        cookies = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        cookies.open(m[2], timeout=10).read()  # (the test's browser only noted it)
        versions = json.loads(cookies.open(f"http://127.0.0.1:{m[3]}/-/versions.json", timeout=10).read())
        assert "datasette" in versions
    finally:
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (0, "", "")  # no traceback, nothing after the announcement


def test_ctrl_c_at_the_terminal_as_soon_as_it_is_announced_ends_it_quietly():
    screen = spawn(["browse", "--port", "0"])
    screen.expect(
        r"supervise: serving .* to you only: open http://127\.0\.0\.1:\d+/-/auth-token\?token=\w+ to sign in \(it works once; Ctrl-C to stop\)\r\n"
    )
    screen.sendcontrol("c")
    screen.expect(pexpect.EOF, timeout=30)
    screen.close()
    assert (screen.exitstatus, screen.before.replace("^C", "").strip()) == (0, "")


# ---------------------------------------------------------------- patterns check

RUNAWAY = """
[agent]
name = "runaway"
title = "A pattern file with one regex that backtracks for ever on a line of a's"
commands = ["never-run-runaway"]

[[patterns]]
name = "backtracks"
event = "compaction_started"
regex = '(a|a)+$'

[[patterns]]
name = "fine"
event = "compaction_finished"
regex = 'Conversation compacted'
"""

HINT = "(hint: its regex backtracks; make its repeats possessive or anchored)"


@pytest.fixture
def runaway(tmp_path):
    path = tmp_path / "runaway.toml"
    path.write_text(RUNAWAY)
    return path


def test_a_runaway_pattern_in_a_text_log_is_reported_turned_off_as_a_live_run_does(runaway, tmp_path):
    log = tmp_path / "session.log"
    log.write_text("hello\n" + "a" * 60 + "!\nConversation compacted\n")
    before = log.read_bytes()
    done = run_cli("patterns", "check", "--patterns", str(runaway), "--agent", "runaway", str(log))
    assert done.returncode == 1
    assert done.stdout.split() == ["line", "3", "compaction_finished", "runaway/fine", "Conversation", "compacted"]
    assert done.stderr.splitlines() == [
        f"supervise: pattern runaway/backtracks (compaction_started) took over 0.1 s on line 2 of session.log "
        f"and is turned off, as in a live session {HINT}",
        "1 match, 1 pattern turned off (runaway patterns, session.log)",
    ]
    assert log.read_bytes() == before


def test_a_runaway_pattern_in_a_recording_is_reported_with_its_time(runaway, tmp_path):
    cast = tmp_path / "session.cast"
    events = [[0.1, "o", "hello\r\n"], [0.5, "o", "a" * 60 + "!\r\n"], [1.0, "o", "Conversation compacted\r\n"]]
    cast.write_text(
        "\n".join(json.dumps(e) for e in [{"version": 2, "width": 100, "height": 24, "command": "never-run-runaway"}, *events]) + "\n"
    )
    done = run_cli("patterns", "check", "--patterns", str(runaway), str(cast))  # the set named by the recording's command
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"supervise: pattern runaway/backtracks (compaction_started) took over 0.1 s on the screen at 0.500 s of session.cast "
        f"and is turned off, as in a live session {HINT}",
        "1 match, 1 pattern turned off (runaway patterns, session.cast)",
    ]


GIVE = "(hint: give a session.cast or session.log; `supervise show ID` names them)"


def test_a_missing_file_is_said_to_be_missing_not_a_missing_pattern_set():
    done = run_cli("patterns", "check", "/nonexistent.cast")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"supervise: no such file: /nonexistent.cast {GIVE}\n"


def test_a_directory_is_said_to_be_a_directory(tmp_path):
    for args in ([str(tmp_path)], ["--agent", "claude", str(tmp_path)]):
        done = run_cli("patterns", "check", *args)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == f"supervise: {tmp_path} is a directory, not a recording or a text log {GIVE}\n"


def test_a_binary_file_is_said_to_be_neither_a_recording_nor_a_text_log(tmp_path):
    binary = tmp_path / "a.out"
    binary.write_bytes(Path(sys.executable).read_bytes()[:4096])
    done = run_cli("patterns", "check", "--agent", "claude", str(binary))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"supervise: {binary} is neither a recording nor a text log: it holds binary data {GIVE}\n"


def test_an_unreadable_file_is_said_to_be_unreadable(tmp_path):
    log = tmp_path / "session.log"
    log.write_text("Conversation compacted\n")
    log.chmod(0)
    done = run_cli_unprivileged("patterns", "check", "--agent", "claude", str(log))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"supervise: cannot read {log}: Permission denied (hint: check its permissions)\n"
