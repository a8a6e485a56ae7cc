"""`supervise -- CMD` under a real PTY with real children."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from conftest import SUPERVISE, run_cli, which_or_skip
from helpers import cast_events, latest, session, shell, spawn, stty_state, wait_for

PY = sys.executable

RAW_ECHO = """
import os, sys, tty
tty.setraw(0)
os.write(1, b'raw now\\r\\n')
buf = b''
while not buf.endswith(b'QUIT'):
    buf += os.read(0, 1024)
os.write(1, b'GOT ' + repr(buf).encode() + b'\\r\\n')
"""


def test_every_key_reaches_the_child_unchanged():
    c = spawn(["--", PY, "-c", RAW_ECHO])
    c.expect_exact("raw now")  # the child is in raw mode
    keys = "a\x03\x1a\x1b\x1b[A\x04" + "\x1b[200~pasted\nmulti line ✻\x1b[201~" + "QUIT"
    c.send(keys)
    c.expect(r"GOT (b'.*')\r\n")
    assert eval(c.match.group(1)) == keys.encode()
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0


SIZE_REPORTER = """
import os, signal, sys, time
def report(*_):
    cols, rows = os.get_terminal_size(1)
    print(f'SIZE {cols}x{rows}', flush=True)
signal.signal(signal.SIGWINCH, report)
report()
for _ in range(100):
    time.sleep(0.05)
    if os.path.exists(sys.argv[1]): break
"""


def test_initial_size_and_every_resize_reach_the_child_and_the_recording(tmp_path):
    stop = tmp_path / "stop"
    c = spawn(["--", PY, "-c", SIZE_REPORTER, str(stop)], cols=91, rows=27)
    c.expect_exact("SIZE 91x27")
    c.setwinsize(40, 132)
    c.expect_exact("SIZE 132x40")
    c.setwinsize(20, 70)
    c.expect_exact("SIZE 70x20")
    stop.touch()
    c.expect(pexpect.EOF)
    header, events = cast_events(latest()["cast_path"])
    assert (header["width"], header["height"]) == (91, 27)
    assert [e[2] for e in events if e[1] == "r"] == ["132x40", "70x20"]


@pytest.mark.parametrize(
    "argv, code",
    [(["sh", "-c", "exit 7"], 7), (["sh", "-c", "kill -9 $$"], 137), (["sh", "-c", "kill -TERM $$"], 143), (["true"], 0)],
)
def test_child_exit_status_becomes_ours(argv, code):
    c = spawn(["--", *argv])
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == code
    s = latest()
    assert s["exit_code"] == code
    assert s["status"] == ("completed" if code == 0 else "failed")
    assert f"supervise: session {s['id']}" in c.before and f"supervise resume {s['id']}" in c.before


def test_terminal_is_restored_after_normal_exit_and_child_crash():
    sh = shell()
    before = stty_state(sh)
    for child in ("true", "sh -c 'kill -SEGV $$'", f"{PY} -c 'import tty; tty.setraw(0); raise SystemExit(3)'"):
        sh.sendline(f"{' '.join(SUPERVISE)} -- {child}")
        sh.expect_exact("resume with:")
        sh.expect_exact("$ ")
        assert stty_state(sh) == before, child
    sh.sendline("exit")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_to_supervise_is_forwarded_and_the_terminal_restored(sig):
    sh = shell()
    before = stty_state(sh)
    sh.sendline(f"{' '.join(SUPERVISE)} -- sleep 60; echo RC=$?")
    s = wait_for(_started_session)
    time.sleep(0.3)
    os.kill(s["pid"], sig)
    sh.expect(r"RC=(\d+)")
    assert int(sh.match.group(1)) == 128 + sig
    sh.expect_exact("$ ")
    assert stty_state(sh) == before
    s = session(s["id"])
    assert s["status"] == "interrupted"
    assert any(e["kind"] == "signal" and e["detail"]["signal"] == sig.name for e in s["events"])
    sh.sendline("exit")


def _started_session():
    try:
        s = latest()
    except Exception:  # no database or no session yet
        return None
    return s if s.get("child_pid") else None


def test_modes_a_crashed_child_left_on_are_turned_off():
    c = spawn(["--", "sh", "-c", r"printf '\033[?1049h\033[?25l\033[?2004h\033[>1u drawing'; sleep 0.2; kill -9 $$"])
    c.expect(pexpect.EOF)
    tail = c.before[c.before.index("drawing") :]
    for reset in ("\x1b[?25h", "\x1b[?1049l", "\x1b[?2004l", "\x1b[<1u"):
        assert reset in tail
    # a well-behaved child that restores its modes gets nothing extra
    c = spawn(["--", "sh", "-c", r"printf '\033[?2004hX\033[?2004l'"])
    c.expect(pexpect.EOF)
    assert "\x1b[?2004l" not in c.before[c.before.index("X") + 1 :].replace("\x1b[?2004l", "", 1)


ALT_SCREEN_APP = r"""
import sys, time
w = sys.stdout.write
w('before the app\r\n'); sys.stdout.flush(); time.sleep(0.5)
w('\x1b[?1049h\x1b[2J\x1b[H'); w('EDITOR title\r\nfirst draft line\r\nsecond draft line'); sys.stdout.flush(); time.sleep(0.8)
w('\x1b[2J\x1b[H'); w('EDITOR title\r\nfinal text line'); sys.stdout.flush(); time.sleep(0.8)
w('\x1b[?1049l'); w('after the app\r\n'); sys.stdout.flush()
"""


def test_text_log_holds_what_a_person_saw_from_an_alternate_screen_program():
    c = spawn(["--", PY, "-c", ALT_SCREEN_APP], cols=60, rows=10)
    c.expect(pexpect.EOF)
    s = latest()
    log = Path(s["log_path"]).read_text()
    lines = log.splitlines()
    assert "\x1b" not in log
    for expected in ("before the app", "first draft line", "second draft line", "final text line", "after the app"):
        assert expected in lines, (expected, lines)
    assert lines.count("before the app") == 1
    assert lines.count("EDITOR title") == 1
    assert lines.index("first draft line") < lines.index("final text line") < lines.index("after the app")
    # export gives the same text, and the recording replays with the real asciinema
    assert run_cli("export", s["id"], "--format", "text", check=True).stdout == log
    asciinema = which_or_skip("asciinema")
    replay = subprocess.run([asciinema, "cat", s["cast_path"]], capture_output=True, text=True, check=True).stdout
    assert "final text line" in replay and "after the app" in replay


def test_works_with_pipes_instead_of_a_terminal():
    p = run_cli("--", "bash", "--norc", input="echo hi-from-pipe\nexit 4\n")
    assert p.returncode == 4, p.stderr
    assert "hi-from-pipe" in p.stdout
    s = latest()
    assert "hi-from-pipe" in Path(s["log_path"]).read_text()
    # EOF on stdin reaches the child, like ^D at a terminal
    p = run_cli("--", "cat", input="one\ntwo\n")
    assert p.returncode == 0 and "two" in p.stdout
    # no stdin at all
    p = subprocess.run([*SUPERVISE, "--", "echo", "no-stdin"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "no-stdin" in p.stdout


def test_keystrokes_are_recorded_only_when_asked():
    for flag, expect_input in (([], False), (["--record-input"], True)):
        c = spawn([*flag, "--", PY, "-c", "input(); print('TOOK')"])
        time.sleep(0.3)
        c.sendline("secret-typed")
        c.expect_exact("TOOK")
        c.expect(pexpect.EOF)
        _, events = cast_events(latest()["cast_path"])
        inputs = "".join(e[2] for e in events if e[1] == "i")
        assert ("secret-typed" in inputs) == expect_input


def test_child_gets_default_signal_dispositions():
    # Python ignores SIGPIPE; a child must not inherit that, or pipelines misbehave.
    p = run_cli("--", "sh", "-c", "yes | head -n 1; grep SigIgn /proc/self/status")
    assert p.returncode == 0
    assert "Broken pipe" not in p.stdout
    ignored = int(p.stdout.split("SigIgn:")[1].split()[0], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1))


def test_command_not_found():
    c = spawn(["--", "no-such-agent-xyz", "--flag"])
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 127
    assert "supervise: command not found: no-such-agent-xyz (hint:" in c.before
    s = latest()
    assert (s["status"], s["exit_code"]) == ("failed", 127)


def test_a_command_that_cannot_run_is_named_without_the_control_keys_its_name_holds(tmp_path):
    """A name can hold escape sequences (a file named so, a pasted command): the one line that
    names it changes nothing on the user's terminal."""
    p = run_cli("--", "nope\x1b]0;owned\x07here")
    assert (p.returncode, p.stderr.splitlines()[0]) == (
        127,
        "supervise: command not found: nopehere (hint: check the spelling, or give the full path after `--`)",
    )
    script = tmp_path / "run\x1b[2Jme"
    script.write_text("#!/bin/sh\necho hi\n")  # not executable
    p = run_cli("--", "./run\x1b[2Jme", cwd=tmp_path)
    assert (p.returncode, p.stderr.splitlines()[0]) == (126, "supervise: cannot run ./runme: Permission denied")


def test_a_missing_claude_leaves_no_hook_socket_folder_behind(tmp_path):
    """For Claude Code the hook's socket folder is made before the agent starts: if it
    cannot start, the folder goes too."""
    c = spawn(["--", "claude"], env={"PATH": "/nonexistent", "TMPDIR": str(tmp_path)})
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 127 and "command not found: claude" in c.before
    assert list(tmp_path.glob("supervise-*")) == []


def test_bare_invocation_and_run_command_are_the_same():
    for args in (["--", "echo", "via-dashes"], ["run", "--name", "named", "--", "echo", "via-run"], ["--name", "n2", "--", "echo", "x"]):
        c = spawn(args)
        c.expect(pexpect.EOF)
        c.close()
        assert c.exitstatus == 0, (args, c.before)
    s = latest()
    assert s["name"] == "n2" and s["argv"] == ["echo", "x"] and s["agent"] == "echo"


def _family_peak_kb(pid):
    total = 0
    pids = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            pids += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


@pytest.mark.slow
def test_a_flood_of_output_is_recorded_whole_in_bounded_memory():
    """`yes` into the supervisor, faster than any recorder: nothing dropped, no runaway memory."""
    size = 30_000_000
    proc = subprocess.Popen(
        [*SUPERVISE, "--", "sh", "-c", f"yes | head -c {size}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _family_peak_kb(proc.pid))
        time.sleep(0.1)
    assert proc.returncode == 0, proc.stderr.read()
    assert peak < 300 * 1024, f"supervisor and recorder peaked at {peak // 1024} MB"
    from supervisor.recording import asciicast

    _, events = asciicast.read(Path(latest()["cast_path"]))
    recorded = sum(len(d) for _, code, d in events if code == "o")
    assert recorded == size // 2 * 3  # every "y\n" arrives as "y\r\n"
