"""`--on-limit wait`: a usage limit waited out, a continue typed once it has reset, and never
when the user is at the keyboard or a dialog is up. Through the real PTY loop, recorder and
typing channel, with the demo agent (whose limit resets seconds later) and the real Claude
Code (whose limit dialog must never be typed into)."""

import json
import os
import re
import time
from datetime import datetime

import pexpect
import pytest

from conftest import SUPERVISE
from helpers import demo_agent, latest, session, wait_for

MARGIN = 1.0
LIMIT = 6.0  # seconds until the demo agent's limit resets


def demo(env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    env.update(TERM="xterm-256color", SUPERVISE_LIMIT_MARGIN=str(MARGIN), **(env_extra or {}))
    c = pexpect.spawn(
        SUPERVISE[0],
        [
            "run",
            "--agent",
            "demo",
            "--on-limit",
            "wait",
            "--",
            *demo_agent("--limit-seconds", str(LIMIT)),
        ],
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        timeout=60,
        dimensions=(40, 120),
    )
    c.expect_exact("demo: done: --json added and tested.")
    c.expect_exact("demo› ")
    return c


def hit_the_limit(c) -> float:
    c.send("limit: the next step")
    time.sleep(0.3)
    c.send("\r")
    c.expect(r"Usage limit reached · resets (\d\d:\d\d:\d\d) \(UTC\)")
    return time.time()


def contexts(sid: str) -> list[dict]:
    from supervisor.store.database import Store

    store = Store.open_default()
    try:
        return store.contexts(sid)
    finally:
        store.close()


def limit_events(sid: str) -> list[tuple[str, dict]]:
    return [(e["kind"], e["detail"]) for e in session(sid)["events"] if e["kind"].startswith("limit_")]


@pytest.mark.slow
def test_once_the_limit_has_reset_one_continue_is_typed_and_the_wait_shows_in_the_title(home):
    c = demo()
    limited = hit_the_limit(c)
    c.expect(re.escape("\x1b]2;supervise: usage limit until "))  # the terminal's title meanwhile
    c.expect_exact("\x1b[23;0t", timeout=LIMIT + MARGIN + 20)  # the title put back, once the agent took the continue
    typed = time.time()
    c.expect_exact("● Edit src/report.py: continue")  # the agent got it
    c.expect_exact("demo› ")
    # the continue is recorded (its wait is over) and the limit cleared: no second one can come for it
    wait_for(lambda: {"limit_continue", "limit_cleared"} <= {k for k, _ in limit_events(latest()["id"])}, 20)
    c.sendline("/exit")
    c.expect(pexpect.EOF)
    out = c.before
    assert "● Edit src/report.py: continue" not in out  # (what came after the first one)
    sid = latest()["id"]
    events = wait_for(lambda: (lambda e: e if any(k == "limit_cleared" for k, _ in e) else None)(limit_events(sid)), 10)
    kinds = [k for k, _ in events]
    assert kinds.count("limit_continue") == 1 and kinds[:2] == ["limit_reached", "limit_wait"]
    continued = next(d for k, d in events if k == "limit_continue")
    assert continued["typed"] is True and continued["confirmed"] is True
    reset = datetime.fromisoformat(events[0][1]["reset_at"]).timestamp()
    assert reset + MARGIN <= typed and typed - limited < LIMIT + MARGIN + 5  # after the reset, not long after
    assert "limit_cleared" in kinds
    # the continue is supervise's, not the user's: their latest request is what they typed
    from conftest import run_cli

    wait_for(lambda: any(c["trigger"] == "session_end" for c in contexts(sid)), 30)
    context = json.loads(run_cli("context", sid, "--json", check=True).stdout)["context"]
    assert context["latest_request"] == "limit: the next step"


@pytest.mark.slow
def test_the_user_typing_during_the_wait_calls_the_continue_off(home):
    from conftest import run_cli

    c = demo()
    hit_the_limit(c)
    c.expect(re.escape("\x1b]2;supervise: usage limit until "))

    def listed():
        return json.loads(run_cli("ps", "--json", check=True).stdout)[0]

    # ps tells when the continue will come, and that it is off once the user typed
    waiting = wait_for(lambda: (lambda r: r if r["continue_at"] else None)(listed()), 5)
    assert waiting["state"] == "limited" and waiting["continue_at"] > waiting["reset_at"]
    assert ", go on " in run_cli("ps", check=True).stdout
    c.send("x")  # the user is back: whatever they type, the wait is over
    c.expect_exact("\x1b[23;0t")  # the title put back at once
    assert wait_for(lambda: listed()["continue_at"] is None, 5)
    c.send("\x7f")
    called_off = lambda: any(k == "limit_wait" and d.get("called_off") for k, d in limit_events(latest()["id"]))  # noqa: E731
    wait_for(called_off, 20)  # the wait is over: no continue can come for it
    c.sendline("/exit")
    c.expect(pexpect.EOF)
    assert "● Edit src/report.py: continue" not in c.before
    events = limit_events(latest()["id"])
    assert [k for k, _ in events if k == "limit_continue"] == []
    assert any(k == "limit_wait" and d.get("called_off") == "the user typed" for k, d in events)


def test_a_wrong_on_limit_is_refused_before_anything_starts(home):
    from conftest import run_cli

    r = run_cli("run", "--on-limit", "sometimes", "--", "true")
    assert r.returncode == 2
    assert r.stderr.startswith("supervise: unknown --on-limit") and "notify, wait, off" in r.stderr


def claude_limited(tmp_path, home, reset: int, auto_continue: bool):
    """The real Claude Code under `supervise --on-limit wait` on a subscription login, its
    second turn answered with a usage limit that resets at `reset`; (screen, api)."""
    from agentdriver import CLAUDE_IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_login_env
    from fakeapi import FakeAnthropic, usage_limit

    claude_bin()
    project = tmp_path / "work"
    project.mkdir()
    api = FakeAnthropic().start()
    api.add(usage_limit(reset), match=lambda r: "turn 2" in r.last_user_text())
    env = {
        **claude_login_env(tmp_path / "claude-home", project, api.url),
        "SUPERVISE_HOME": str(home),
        "SUPERVISE_LIMIT_MARGIN": str(MARGIN),
    }
    if not auto_continue:
        settings = tmp_path / "claude-home" / ".claude" / "settings.json"
        settings.write_text(json.dumps({**json.loads(settings.read_text()), "autoContinueAtUsageLimit": False}))
    screen = Screen(["--on-limit", "wait", "--", claude_bin(), "--model", CLAUDE_MODEL], env, project, cols=120, rows=30)
    screen.wait(CLAUDE_IDLE, 60)
    screen.type("turn 2: limited now")
    return screen, api


def quit_claude(screen, api):
    screen.child.sendcontrol("c")
    time.sleep(0.3)
    screen.child.sendcontrol("c")
    screen.close()
    api.stop()


def visible(screen) -> str:
    return "\n".join(line.text for line in screen.vt.view())


def test_claude_code_goes_on_exactly_once_after_its_limit_resets_and_not_before(tmp_path, home):
    """Claude Code 2.1.330 offers to continue by itself at the reset ("Continuing
    automatically"), which it may or may not do before supervise's margin is over: either
    way the work goes on once, after the reset, never twice and never before."""
    from agentdriver import CLAUDE_IDLE

    reset = int(time.time()) + 15
    screen, api = claude_limited(tmp_path, home, reset, auto_continue=True)
    try:
        screen.wait("Usage limit reached", 60)
        by = reset // 60 * 60 + 59  # Claude Code shows the reset to the minute: supervise waits for its end
        deadline = by + MARGIN + 20
        while time.time() < deadline and not any(r.received >= reset for r in api.messages() if not r.is_compaction):
            screen.pump(0.2)

        # supervise's wait is over (called off as Claude Code went on by itself, or its continue
        # typed), the limit cleared (it works again), and it is idle: a second one would have come by now
        def over():
            kinds = {k if d.get("called_off") is None else "called_off" for k, d in limit_events(latest()["id"])}
            return "limit_cleared" in kinds and kinds & {"called_off", "limit_continue"}

        end = time.monotonic() + 60  # (a hang guard)
        while not over() and time.monotonic() < end:
            screen.pump(0.2)
        screen.wait(CLAUDE_IDLE, 60)
        after = [r for r in api.messages() if not r.is_compaction and r.received >= reset - 1]
        before = [r for r in api.messages() if not r.is_compaction and "turn 2" not in r.last_user_text() and r.received < reset - 1]
        assert len(after) == 1, [r.last_user_text()[:60] for r in after]
        assert before == []
    finally:
        quit_claude(screen, api)
    events = limit_events(latest()["id"])
    assert [k for k, _ in events].count("limit_continue") <= 1
    assert "limit_cleared" in [k for k, _ in events]


def test_claude_codes_limit_dialog_is_never_typed_into_and_a_key_calls_the_continue_off(tmp_path, home):
    reset = int(time.time()) + 10
    screen, api = claude_limited(tmp_path, home, reset, auto_continue=False)
    try:
        screen.wait(r"What do you want to do\?", 60)
        while time.time() < reset // 60 * 60 + 59 + MARGIN + 4:  # the continue is due, but the dialog is up
            screen.pump(0.2)
        assert "What do you want to do?" in visible(screen)
        assert [r for r in api.messages() if r.last_user_text().strip() == "continue"] == []
        screen.child.send("\x1b")  # the user closes the dialog: they are here, the wait is over
        screen.wait(r"\? for shortcuts", 30)
        called_off = lambda: any(k == "limit_wait" and d.get("called_off") for k, d in limit_events(latest()["id"]))  # noqa: E731
        end = time.monotonic() + 30  # (a hang guard)
        while not called_off() and time.monotonic() < end:
            screen.pump(0.2)
        assert [r for r in api.messages() if r.last_user_text().strip() == "continue"] == []
    finally:
        quit_claude(screen, api)
    events = limit_events(latest()["id"])
    assert [k for k, _ in events if k == "limit_continue"] == []
    assert any(k == "limit_wait" and d.get("called_off") == "the user typed" for k, d in events)
