"""Fault suite, signals: each case names what must survive the signal, and checks it.

| fault                               | what is kept                                                        |
| ----------------------------------- | ------------------------------------------------------------------- |
| kill -9 of the supervisor mid-output | the recording up to the moment (replays in the real asciinema), the  |
|                                     | session marked interrupted, no process of the session left running  |
| kill -9 of the child                | the recording, the child's status (137), the user's terminal modes   |
| SIGHUP (terminal closed), SIGTERM   | the child gets it and its last words are recorded, the session ends |
|                                     | with the child's own status                                         |
| SIGINT storm (kill -INT, Ctrl-C)    | each reaches the child; supervise neither dies nor loses a key       |
| Ctrl-Z of the agent, then `fg`      | the shell gets its terminal back in its own modes; after `fg` the    |
|                                     | agent runs again, raw, at the right size                             |
"""

import os
import shlex
import signal
import subprocess
import sys
import time

import pexpect
import pytest

from conftest import run_cli, which_or_skip
from helpers import cast_events, latest, session, shell, spawn, stty_state, wait_for
from procs import children, session_processes

PY = sys.executable


def _supervise_line(*args: str) -> str:
    from conftest import SUPERVISE

    return shlex.join([*SUPERVISE, *args])


def _recorded_text(s) -> str:
    return run_cli("export", s["id"], "--format", "text", check=True).stdout


def test_kill_9_of_the_supervisor_keeps_the_recording_and_leaves_nothing_running():
    counter = "import time\nfor i in range(100000):\n    print(f'count {i}', flush=True); time.sleep(0.002)"
    c = spawn(["--", PY, "-c", counter])
    c.expect_exact("count 400\r\n")
    sid = latest()["id"]
    os.kill(c.pid, signal.SIGKILL)
    c.expect(pexpect.EOF)
    s = latest()
    assert s["status"] == "interrupted"
    replay = subprocess.run([which_or_skip("asciinema"), "cat", s["cast_path"]], capture_output=True, text=True, check=True).stdout
    assert "count 350" in replay  # everything up to a fraction of a second before the kill
    assert "count 350" in _recorded_text(s).splitlines()
    # the child loses its terminal (SIGHUP) and the recorder finishes on its own
    wait_for(lambda: not session_processes(sid), timeout=15)


def test_kill_9_of_the_child_is_its_status_and_the_terminal_comes_back():
    sh = shell()
    before = stty_state(sh)
    child = "import os, time\nprint('working', flush=True)\ntime.sleep(60)"
    sh.sendline(f"{_supervise_line('--', PY, '-c', child)}; echo RC=$?")
    sh.expect_exact("working\r\n")
    shell_pid = wait_for(lambda: latest().get("child_pid"))
    agent = wait_for(lambda: children(shell_pid))  # the agent itself, under its job shell
    os.kill(agent[0], signal.SIGKILL)
    sh.expect(r"RC=(\d+)")
    assert int(sh.match.group(1)) == 137
    sh.expect_exact("$ ")
    assert stty_state(sh) == before
    s = latest()
    assert (s["status"], s["exit_code"]) == ("failed", 137)
    assert "working" in _recorded_text(s)
    assert any(e["kind"] == "exit" and e["detail"].get("signal") == "SIGKILL" for e in session(s["id"])["events"])
    sh.sendline("exit")


# The child traps the signal, says so, prints its last words and exits with its own status.
TRAPPING = """
import signal, sys, time
def bye(signum, frame):
    print(f'got {signal.Signals(signum).name}', flush=True)
    time.sleep(0.3)
    print('last words', flush=True)
    sys.exit(7)
signal.signal(signal.SIGHUP, bye)
signal.signal(signal.SIGTERM, bye)
print('ready', flush=True)
while True:
    time.sleep(1)
"""


def test_terminal_closed_the_child_gets_sighup_and_its_last_words_and_status_are_kept():
    c = spawn(["--", PY, "-c", TRAPPING])
    c.expect_exact("ready")
    sid = latest()["id"]
    os.close(c.child_fd)  # the terminal window closed: the kernel hangs up supervise's terminal
    status = wait_for(lambda: os.waitpid(c.pid, os.WNOHANG)[1] or None, timeout=20)
    assert os.waitstatus_to_exitcode(status) == 7
    s = latest()
    assert s["id"] == sid
    assert (s["status"], s["exit_code"]) == ("interrupted", 7)
    text = _recorded_text(s)
    assert "got SIGHUP" in text and "last words" in text
    _, events = cast_events(s["cast_path"])
    assert "last words" in "".join(d for _, code, d in events if code == "o")
    wait_for(lambda: not session_processes(sid), timeout=15)


def test_sigterm_reaches_the_child_and_the_session_ends_with_its_status():
    c = spawn(["--", PY, "-c", TRAPPING])
    c.expect_exact("ready")
    s = latest()
    os.kill(s["pid"], signal.SIGTERM)
    c.expect_exact("last words")
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 7
    s = session(s["id"])
    assert (s["status"], s["exit_code"]) == ("interrupted", 7)
    assert any(e["kind"] == "signal" and e["detail"]["signal"] == "SIGTERM" for e in s["events"])
    assert "last words" in _recorded_text(s)


COUNTING = """
import signal, sys
n = 0
def count(signum, frame):
    global n
    n += 1
signal.signal(signal.SIGINT, count)
print('ready', flush=True)
for line in sys.stdin:
    if line.strip() == 'report':
        print(f'interrupts {n}', flush=True)
        break
    print(f'echo {line.strip()}', flush=True)
"""


def test_a_storm_of_interrupts_reaches_the_child_and_supervise_keeps_going():
    c = spawn(["--", PY, "-c", COUNTING])
    c.expect_exact("ready")
    s = latest()
    for _ in range(300):
        os.kill(s["pid"], signal.SIGINT)
    c.send("\x03" * 300)  # Ctrl-C typed: the child's terminal makes each one a SIGINT
    c.sendline("still here")
    c.expect_exact("echo still here")
    c.sendline("report")
    c.expect(r"interrupts (\d+)")
    assert int(c.match.group(1)) >= 2  # signals coalesce; at least one of each kind got through
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0
    s = session(s["id"])
    assert (s["status"], s["exit_code"]) == ("completed", 0)
    assert sum(1 for e in s["events"] if e["kind"] == "signal") >= 1


# An agent in raw mode that suspends itself on Ctrl-Z as Claude Code does: restore the
# terminal, SIGTSTP itself; on SIGCONT go raw again and say which size it sees.
SUSPENDING = r"""
import os, signal, sys, termios, tty, fcntl, struct
fd = 0
saved = termios.tcgetattr(fd)
def size():
    rows, cols = struct.unpack('HH', fcntl.ioctl(fd, termios.TIOCGWINSZ, b'\0' * 4))
    return f'{cols}x{rows}'
def cont(signum, frame):
    tty.setraw(fd)
    os.write(1, f'resumed raw at {size()}\r\n'.encode())
signal.signal(signal.SIGCONT, cont)
tty.setraw(fd)
os.write(1, b'agent ready\r\n')
while True:
    data = os.read(fd, 100)
    if b'\x1a' in data:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        os.kill(os.getpid(), signal.SIGTSTP)
    elif b'q' in data:
        break
    else:
        os.write(1, b'key ' + data.hex().encode() + b'\r\n')
termios.tcsetattr(fd, termios.TCSADRAIN, saved)
"""


@pytest.mark.parametrize("agent", ["raw", "cooked"])
def test_ctrl_z_gives_the_shell_its_terminal_and_fg_gives_the_agent_its_own(agent):
    sh = shell()
    before = stty_state(sh)
    # a raw agent suspends itself (Claude Code); a cooked one (cat) is stopped by its terminal
    argv = ["--", PY, "-c", SUSPENDING] if agent == "raw" else ["--", "cat"]
    sh.sendline(_supervise_line(*argv))
    if agent == "raw":
        sh.expect_exact("agent ready\r\n")
    else:
        time.sleep(1)
    sh.send("\x1a")
    sh.expect("Stopped")
    sh.expect_exact("$ ")
    assert stty_state(sh) == before  # the shell's own modes, not the agent's raw ones
    sh.setwinsize(33, 111)  # the window changes while the agent is stopped
    sh.sendline("fg; echo RC=$?")
    if agent == "raw":
        sh.expect_exact("resumed raw at 111x33")
        sh.send("x")
        sh.expect_exact("key 78")  # raw again: one key, no Enter needed
        sh.send("q")
    else:
        sh.sendline("hello after fg")
        sh.expect_exact("hello after fg\r\nhello after fg")  # cat echoes the line back
        sh.sendcontrol("d")
    sh.expect(r"RC=(\d+)")
    assert int(sh.match.group(1)) == 0
    sh.expect_exact("$ ")
    assert stty_state(sh) == before
    s = latest()
    assert (s["status"], s["exit_code"]) == ("completed", 0)
    sh.sendline("exit")
