"""Input that is not a terminal, and signals that end a run: as agents are run from scripts,
CI and editors. `script -qfec` (util-linux) is the oracle for what the child sees; where it
hangs (a partial last line, a line editor given /dev/null, a closed stdin), supervise ends."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentdriver import CLAUDE_MODEL, claude_bin, claude_env
from conftest import SUPERVISE, run_cli, which_or_skip
from fakeapi import FakeAnthropic
from helpers import cast_events, latest, session, wait_for

PY = sys.executable
# Long enough for a run that does not end by itself to show it; the runs here take a second.
HANG = 60


def supervised(*argv, stdin, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*SUPERVISE, "--", *argv], stdin=stdin, capture_output=True, timeout=HANG, **kw)


def under_script(*argv, stdin) -> subprocess.CompletedProcess:
    command = " ".join(argv)
    return subprocess.run([which_or_skip("script"), "-qfec", command, "/dev/null"], stdin=stdin, capture_output=True, timeout=HANG)


def inputs(cast_path) -> str:
    return "".join(e[2] for e in cast_events(cast_path)[1] if e[1] == "i")


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text("first line\nsecond line\n")
    return path


def test_a_file_as_stdin_reaches_the_child_as_under_script_and_the_run_ends(text_file):
    with open(text_file, "rb") as fh:
        oracle = under_script("cat", stdin=fh)
    with open(text_file, "rb") as fh:
        p = supervised("cat", stdin=fh)
    assert p.returncode == 0 == oracle.returncode, p.stderr
    assert p.stdout == oracle.stdout == b"first line\r\nsecond line\r\nfirst line\r\nsecond line\r\n"
    s = latest()
    assert (s["status"], s["exit_code"]) == ("completed", 0)
    assert inputs(s["cast_path"]) == "first line\nsecond line\n"  # recorded as input, though no --record-input
    assert "second line" in Path(s["log_path"]).read_text()


def test_a_pipe_as_stdin_ends_a_line_reader_as_under_script():
    data = b"alpha\nbeta\n"
    argv = ("bash", "-c", "'read x; echo got-$x'")
    oracle = subprocess.run([which_or_skip("script"), "-qfec", " ".join(argv), "/dev/null"], input=data, capture_output=True, timeout=HANG)
    p = subprocess.run([*SUPERVISE, "--", "bash", "-c", "read x; echo got-$x"], input=data, capture_output=True, timeout=HANG)
    assert p.returncode == 0 == oracle.returncode, p.stderr
    assert p.stdout == oracle.stdout
    assert b"got-alpha" in p.stdout


@pytest.mark.parametrize("argv", [["cat"], ["sh"], ["bash", "--norc"], [PY, "-q"]], ids=["cat", "sh", "bash", "python3"])
def test_dev_null_as_stdin_ends_the_run(argv):
    """`cat` and `sh` end under `script` too; bash and Python's line editors take the EOF key
    only once they are reading, and `script` sends it before, so they wait for ever there."""
    p = supervised(*argv, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert latest()["status"] == "completed"


def test_under_script_with_its_input_at_an_end_the_child_sees_what_it_sees_under_script_alone():
    """`script` types an EOF key as it starts when its input is at an end; supervise, its child,
    found it in its terminal when it took raw mode, where it reads as a NUL: the agent got a
    `^@`, echoed into the output and the text log (and so into search hits)."""
    oracle = under_script("echo", "hi", stdin=subprocess.DEVNULL)
    p = under_script(*SUPERVISE, "--", "echo", "hi", stdin=subprocess.DEVNULL)
    assert oracle.stdout == b"hi\r\n"
    assert p.returncode == 0 == oracle.returncode, p.stdout
    assert p.stdout.startswith(oracle.stdout), p.stdout  # then supervise's own line: the session's end
    log = Path(latest()["log_path"]).read_bytes()
    assert log == b"hi\n"


def test_lines_typed_before_supervise_took_the_terminal_reach_the_agent_as_typed():
    """Whole lines and EOF keys a terminal holds in canonical mode are read as they are; a
    partial line is left for raw mode, which reads it as typed."""
    import pty
    import termios
    import time
    import tty

    from supervisor.terminal import tty as terminal

    master, slave = pty.openpty()
    try:
        os.write(master, b"one\n\x04two\n\x04par")
        got, deadline = b"", time.monotonic() + 10
        while len(got) < 10 and time.monotonic() < deadline:  # the kernel hands what was written over a moment later
            got += terminal.typed_ahead(slave, termios.tcgetattr(slave))
        assert got == b"one\n\x04two\n\x04"
        assert terminal.typed_ahead(slave, termios.tcgetattr(slave)) == b""  # read once
        tty.setraw(slave, termios.TCSADRAIN)  # as supervise takes it: what was typed is kept
        assert os.read(slave, 100) == b"par"
        assert terminal.typed_ahead(slave, termios.tcgetattr(slave)) == b""  # raw: nothing to read ahead
    finally:
        os.close(master)
        os.close(slave)


def test_a_closed_stdin_is_an_empty_one():
    p = subprocess.run(["bash", "-c", f"exec {SUPERVISE[0]} -- cat <&-"], capture_output=True, timeout=HANG)
    assert p.returncode == 0, p.stderr
    assert p.stderr.decode().startswith("supervise: session ")
    assert latest()["status"] == "completed"


def test_a_last_line_without_its_newline_still_ends_the_input():
    """Its EOF key hands the partial line over; a second one ends the input."""
    p = subprocess.run([*SUPERVISE, "--", "cat"], input=b"no newline", capture_output=True, timeout=HANG)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"no newlineno newline"


def test_a_large_file_is_read_as_the_child_takes_it(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {i:07d} of a file larger than any buffer on the way\n" for i in range(60_000)))
    with open(big, "rb") as fh:
        p = supervised(PY, "-c", "import sys; print(sum(1 for _ in sys.stdin), 'lines')", stdin=fh)
    assert p.returncode == 0, p.stderr
    assert b"60000 lines" in p.stdout
    assert inputs(latest()["cast_path"]) == big.read_text()


def test_resume_with_dev_null_as_stdin_ends():
    run_cli("--", "cat", check=True)
    p = subprocess.run([*SUPERVISE, "resume", "--last"], stdin=subprocess.DEVNULL, capture_output=True, timeout=HANG)
    assert p.returncode == 0, p.stderr
    assert latest()["parent_id"] is not None and latest()["status"] == "completed"


@pytest.mark.slow
def test_sigint_ends_a_run_whose_child_ignores_it():
    """Ctrl-C at a terminal where supervise reads a pipe: the child is asked (SIGINT), then
    told (SIGTERM), then killed; the run ends either way."""
    stubborn = "trap '' INT TERM; echo ready; while :; do sleep 1; done"
    proc = subprocess.Popen([*SUPERVISE, "--", "sh", "-c", stubborn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        s = wait_for(lambda: (x := latest()) and x.get("child_pid") and x)
        os.kill(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=HANG) == 128 + signal.SIGKILL
    finally:
        proc.kill()
    s = session(s["id"])
    assert s["status"] == "interrupted"
    assert [e["detail"]["signal"] for e in s["events"] if e["kind"] == "signal"] == ["SIGINT"]


def test_sigint_ends_a_run_whose_child_obeys_it():
    proc = subprocess.Popen(
        [*SUPERVISE, "--", "sh", "-c", "echo ready; exec sleep 60"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stdout.readline().strip() == b"ready"
        wait_for(lambda: (x := latest()) and x.get("child_pid"))
        os.kill(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=HANG) == 128 + signal.SIGINT
    finally:
        proc.kill()
    assert latest()["status"] == "interrupted"


@pytest.mark.parametrize("how", ["file", "pipe"])
def test_claude_code_in_print_mode_reads_its_prompt_from_stdin(tmp_path, how):
    """`claude -p < prompt.txt`: under a bare PTY (and `script`) Claude Code refuses a
    terminal as its prompt's source; its profile says it reads a stdin that is not one, so
    it is given ours as it would be run bare, and answers."""
    project = tmp_path / "project"
    project.mkdir()
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("please summarise the file you were given\n")
    with FakeAnthropic() as api:
        env = {
            **claude_env(tmp_path / "claude-home", project, api.url),
            "SUPERVISE_HOME": os.environ["SUPERVISE_HOME"],
            "PATH": f"{Path(claude_bin()).parent}:{os.environ['PATH']}",
        }
        argv = [*SUPERVISE, "--", "claude", "-p", "--model", CLAUDE_MODEL]
        if how == "file":
            with open(prompt, "rb") as fh:
                p = subprocess.run(argv, stdin=fh, capture_output=True, env=env, cwd=project, timeout=120)
        else:
            p = subprocess.run(argv, input=prompt.read_bytes(), capture_output=True, env=env, cwd=project, timeout=120)
        asked = [r.last_user_text() for r in api.messages() if r.has_tools]
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert b"Reply to: please summarise the file you were given" in p.stdout
    assert any("please summarise the file you were given" in text for text in asked)
    s = latest()
    assert (s["status"], s["agent"]) == ("completed", "claude")
    assert inputs(s["cast_path"]) == prompt.read_text()
