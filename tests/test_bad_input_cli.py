"""Typos, output that cannot be written, odd ids, and a session resumed twice: one clear line
each, a non-zero exit, and nothing recorded that was not asked for."""

import json
import os
import signal
import subprocess

import pexpect
import pytest

from conftest import SUPERVISE, run_cli
from helpers import latest, spawn, wait_for


def recorded() -> list[dict]:
    p = run_cli("sessions", "--json", "--all", check=True)
    return json.loads(p.stdout)


@pytest.mark.parametrize(
    "args, line",
    [
        (["--nmae", "x", "--", "echo", "hi"], "supervise: unknown option '--nmae' (hint: did you mean `--name`?)"),
        (["--on-limt", "wait", "--", "echo", "hi"], "supervise: unknown option '--on-limt' (hint: did you mean `--on-limit`?)"),
        (
            ["run", "--frobnicate", "--", "echo", "x"],
            "supervise: unknown option '--frobnicate' (hint: `supervise run --help` lists the options)",
        ),
        (["session"], "supervise: unknown command 'session' (hint: did you mean `supervise sessions`?)"),
        (["sesions", "--json"], "supervise: unknown command 'sesions' (hint: did you mean `supervise sessions`?)"),
        (["list"], "supervise: unknown command 'list' (hint: `supervise --help` lists the commands; a program to run goes after `--`)"),
        (
            ["sessions", "--al"],
            "supervise: sessions: No such option: --al (Possible options: --all, --help) "
            "(hint: `supervise sessions --help` lists what it takes)",
        ),
        (["show"], "supervise: which session? (hint: give an id (`supervise sessions` lists them))"),  # no terminal: no picker
        (
            ["patterns", "chek"],
            "supervise: patterns: No such command 'chek'. Did you mean 'check'? (hint: `supervise patterns --help` lists what it takes)",
        ),
    ],
)
def test_a_typo_is_refused_in_one_line_and_nothing_is_recorded(args, line):
    run_cli("--", "true", check=True)
    before = recorded()
    p = run_cli(*args)
    assert (p.returncode, p.stderr, p.stdout) == (2, line + "\n", "")
    assert recorded() == before


def test_a_program_named_without_dashes_still_runs():
    p = run_cli("echo", "plain-words", check=True)
    assert "plain-words" in p.stdout
    assert latest()["argv"] == ["echo", "plain-words"]


def test_options_before_the_command_in_each_spelling_still_work():
    for args in (
        ["--name=a", "--", "true"],
        ["-n", "b", "--", "true"],
        ["-nc", "--", "true"],
        ["--record-input", "--inject", "off", "--", "true"],
    ):
        assert run_cli(*args).returncode == 0, args
    assert [s["name"] for s in recorded()] == [None, "c", "b", "a"]


def test_help_shows_the_run_options_and_the_version_flag():
    for args in (["--help"], ["help"]):
        p = run_cli(*args, env={**os.environ, "COLUMNS": "200"})
        assert p.returncode == 0
        for flag in ("--name", "--agent", "--record-input", "--patterns", "--inject", "--on-limit", "--notify", "--version"):
            assert flag in p.stdout, (args, flag)


def test_output_that_cannot_be_written_is_said_in_one_line():
    run_cli("--", "echo", "hi", check=True)
    with open("/dev/full", "w") as full:
        p = subprocess.run([*SUPERVISE, "sessions"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert (p.returncode, p.stderr) == (
        1,
        "supervise: cannot write the output: No space left on device (hint: check the file or disk it goes to)\n",
    )


def test_a_reader_that_stops_early_ends_the_command_quietly():
    sid = run_cli("--", "echo", "hi", check=True) and latest()["id"]
    p = subprocess.run(
        f'{SUPERVISE[0]} show {sid} | head -1; echo "rc=${{PIPESTATUS[0]}}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.stdout == f"id:               {sid}\nrc=0\n"
    assert p.stderr == ""


def test_an_id_far_too_long_is_not_looked_up():
    p = run_cli("show", "a" * 60_000)
    assert (p.returncode, p.stderr) == (
        1,
        "supervise: '" + "a" * 40 + "…' is not a session id: ids are 6 letters and digits (hint: run `supervise sessions` to list ids)\n",
    )


def test_an_id_with_control_keys_is_quoted_without_them():
    p = run_cli("show", "zz\x1b[2Jzz")
    assert (p.returncode, p.stderr) == (1, "supervise: no session matches 'zzzz' (hint: run `supervise sessions` to list ids)\n")


# -- a running session is not resumed twice ---------------------------------------------------------


def _running() -> dict:
    def started():
        sessions = recorded()
        return sessions and sessions[0].get("child_pid") and sessions[0]["status"] == "active" and sessions[0]

    return wait_for(started, timeout=30)


def test_resuming_a_running_session_is_refused_unless_forced():
    c = spawn(["--", "sleep", "60"])
    try:
        s = _running()
        p = run_cli("resume", s["id"])
        assert (p.returncode, p.stderr) == (
            1,
            f"supervise: session {s['id']} is running under supervise pid {s['pid']} "
            f"(hint: switch to the terminal it runs in, or `kill {s['pid']}` to end it; "
            f"--force resumes it anyway)\n",
        )
        assert len(recorded()) == 1
        forced = spawn(["resume", s["id"], "--force"])
        try:
            wait_for(lambda: len(recorded()) == 2 and recorded()[0]["parent_id"] == s["id"], timeout=30)
        finally:
            forced.kill(signal.SIGTERM)
            forced.expect(pexpect.EOF)
    finally:
        c.kill(signal.SIGTERM)
        c.expect(pexpect.EOF)


def test_two_resumes_at_once_one_wins_and_the_other_is_refused():
    run_cli("--", "sleep", "0", check=True)
    sid = latest()["id"]
    both = [
        subprocess.Popen(
            [*SUPERVISE, "resume", sid, "--", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    try:
        refused = wait_for(lambda: [p for p in both if p.poll() is not None], timeout=30)
        assert len(refused) == 1
        loser = refused[0]
        winner = next(p for p in both if p is not loser)
        assert loser.returncode == 1
        err = loser.stderr.read()
        assert err.startswith(f"supervise: session {sid} is running under supervise pid {winner.pid} ") and err.count("\n") == 1
        children = [s for s in recorded() if s["parent_id"] == sid]
        assert [s["pid"] for s in children] == [winner.pid]
        assert winner.poll() is None
    finally:
        for p in both:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
    # the winner has exited, and its claim went with it: the session can be resumed again
    assert run_cli("resume", sid, "--", "0").returncode == 0
