"""Notices: which state changes tell the user, and the user's command run for each, safely."""

import os
import threading
import time

import pytest

import procs
from helpers import demo_agent, wait_for

from supervisor.config import Notify
from supervisor.status.notify import Notices, Runner, command_line
from supervisor.status.states import State


def notices(steps, **settings) -> list[str]:
    n = Notices(Notify(command="true", **settings))
    return [told for told in (n.change(State(name, float(t))) for t, name in steps) if told]


def test_a_dialog_a_limit_a_compaction_and_a_long_turn_done_are_told():
    steps = [
        (0, "waiting"),
        (1, "working"),
        (40, "waiting"),
        (50, "working"),
        (55, "permission"),
        (60, "working"),
        (61, "compacting"),
        (70, "working"),
        (90, "limited"),
    ]
    assert notices(steps, done_after=30.0) == ["done", "permission", "compacting", "limited"]


def test_a_short_turn_is_not_done_and_a_repeat_within_the_debounce_is_one_notice():
    steps = [(0, "working"), (5, "waiting"), (6, "working"), (7, "permission"), (8, "working"), (9, "permission"), (30, "permission")]
    assert notices(steps, done_after=30.0, debounce=10.0) == ["permission", "permission"]


def test_placeholders_are_quoted_so_a_name_cannot_run_a_command(tmp_path):
    out, pwned = tmp_path / "out", tmp_path / "pwned"
    name = f"x; touch {pwned} $(touch {pwned}) `touch {pwned}`\x1b[31m"
    line = command_line(f"printf '%s|' {{id}} {{name}} {{state}} {{reset_at}} > {out}", {"id": "abc234", "name": name, "state": "done"})
    failures = []
    runner = Runner(Notify(command="x"), lambda where, exc: failures.append(exc))
    runner._run(line)
    assert out.read_text() == f"abc234|x; touch {pwned} $(touch {pwned}) `touch {pwned}`|done||"  # the escape sequence gone whole
    assert not pwned.exists() and not failures


def test_a_failing_or_hanging_command_never_holds_up_the_session_and_is_told_once(tmp_path):
    go = tmp_path / "go"
    told = []
    runner = Runner(
        Notify(command=f"while [ ! -e {go} ]; do sleep 0.02; done; exit 3", timeout=60.0),
        lambda where, exc: told.append((threading.current_thread(), str(exc))),
    )
    for _ in range(3):
        runner.notify({"id": "abc234", "state": "done"})
    assert told == []  # each call came back while its command still waits: queued, not run on the caller's thread
    go.touch()
    wait_for(lambda: len(told) == 3, 30)
    assert all(thread is not threading.current_thread() and "exited with 3" in text for thread, text in told), told
    hung = []
    token = f"notify-hang-{os.getpid()}"
    slow = Runner(Notify(command=f"HANGS={token} sleep 600 & wait", timeout=0.5), lambda where, exc: hung.append(str(exc)))
    slow.notify({"id": "abc234"})
    wait_for(lambda: hung, 30)
    assert "was stopped" in hung[0]
    assert left_running(token) == []  # the command's whole process group was killed, its `sleep` too


def left_running(token: str) -> list[int]:
    """Live processes whose command line or environment holds `token`, once any killed are gone."""
    return procs.left_running(lambda cmdline, environ: token.encode() in cmdline or any(token.encode() in e for e in environ))


def demo_limited(*flags, term="xterm-256color"):
    """The demo agent under supervise with `flags`, just past hitting its usage limit."""
    import os

    import pexpect

    from conftest import SUPERVISE

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    env.update(TERM=term)
    c = pexpect.spawn(
        SUPERVISE[0],
        [
            "run",
            "--agent",
            "demo",
            "--name",
            "parser\x1b]2;pwned\x07work",
            *flags,
            "--",
            *demo_agent("--limit-seconds", "3600"),
        ],
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        timeout=60,
        dimensions=(40, 120),
    )
    c.expect_exact("demo: done: --json added and tested.")
    c.expect_exact("demo› ")
    c.send("limit: the next step")
    time.sleep(0.3)
    c.send("\r")
    c.expect(r"Usage limit reached · resets (\d\d:\d\d):\d\d \(UTC\)")
    return c


@pytest.mark.slow
def test_notify_osc_and_bell_tell_the_terminal_when_the_agent_needs_the_user(home):
    import re

    c = demo_limited("--notify", "osc")
    # a desktop notification through the terminal, the session's name stripped of its escapes
    c.expect(r"\x1b\]9;supervise: parserwork \(demo\) limited until \d\d:\d\d\x07")
    c.sendline("/exit")
    c.close()
    c = demo_limited("--notify", "osc", term="rxvt-unicode-256color")
    c.expect(re.escape("\x1b]777;notify;supervise;supervise: parser"))
    c.sendline("/exit")
    c.close()
    c = demo_limited("--notify", "bell")
    c.expect_exact("\x07")
    assert "\x1b]9;" not in c.before and "\x1b]777;" not in c.before
    c.sendline("/exit")
    c.close()
    c = demo_limited()  # off by default: the terminal gets the agent's output alone
    c.sendline("/exit")
    import pexpect

    c.expect(pexpect.EOF)
    assert "\x1b]9;" not in c.before and "\x07" not in c.before.replace("\x1b]0;", "")


def test_a_wrong_notify_is_refused_before_anything_starts(home):
    from conftest import run_cli

    r = run_cli("run", "--notify", "loudly", "--", "true")
    assert r.returncode == 2
    assert r.stderr.startswith("supervise: unknown --notify 'loudly'") and "bell, osc, off" in r.stderr
