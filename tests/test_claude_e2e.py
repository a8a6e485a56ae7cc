"""The real Claude Code (pinned in tests/agents) under supervise, against the fake API."""

import time
from pathlib import Path

import pytest

from agentdriver import Screen, claude_bin, claude_env
from helpers import latest, session, wait_for
from supervisor.fakeapi import FakeAnthropic, default_reply

IDLE = r"\? for shortcuts"
SUMMARY = {"tool_use": {"name": "record_session_context", "input": {
    "original_request": "turn 1: please say hello", "current_task": "answering numbered turns",
    "completed_steps": ["turns 1 to 3"], "pending_steps": [], "key_decisions": [], "relevant_files": [],
    "errors_and_resolutions": []}}}


def is_summary_request(r):
    return (r.body.get("tool_choice") or {}).get("name") == "record_session_context"
COMPACTION_KINDS = {"compaction_started", "compaction_finished", "compaction_failed", "context_low", "context_overflow"}


@pytest.fixture
def claude(tmp_path, home):
    """Start Claude Code under supervise; yields (screen, api); quits it at the end."""
    claude_bin()
    project = tmp_path / "work"
    project.mkdir()
    api = FakeAnthropic().start()
    env = claude_env(tmp_path / "claude-home", project, api.url)
    env["SUPERVISE_HOME"] = str(home)
    import os

    env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    # A real summary takes seconds; answered at once, Claude Code may finish compacting before
    # it ever draws its "Compacting conversation…" spinner (seen: 1 run in 4).
    api.add(lambda r: {**default_reply(r), "delay": 0.8}, match=lambda r: r.is_compaction, times=None)
    # supervise's own summaries (the cheap model) go to the same fake API
    api.add(SUMMARY, match=is_summary_request, times=None)
    screen = Screen(["--", claude_bin(), "--model", "claude-sonnet-4-5"], env, project)
    screen.wait(IDLE, 60)
    yield screen, api
    if screen.child.isalive():
        quit_claude(screen)
    api.stop()


def quit_claude(screen):
    screen.child.sendcontrol("c")
    time.sleep(0.3)
    screen.child.sendcontrol("c")
    screen.close()


def turns(screen, numbers):
    for i in numbers:
        screen.type(f"turn {i}: please say hello")
        screen.wait(rf"Reply to: turn {i}", 60)
        screen.wait(IDLE, 60)


def finished_session(screen):
    quit_claude(screen)
    return wait_for(lambda: (lambda s: s if s["status"] != "active" else None)(session(latest()["id"])), 20)


def kinds(s, wanted=COMPACTION_KINDS):
    return [e for e in s["events"] if e["kind"] in wanted]


def assert_one_compaction(s, trigger):
    compaction = kinds(s)
    assert [e["kind"] for e in compaction] == ["compaction_started", "compaction_finished"], compaction
    finished = compaction[1]["detail"]
    assert sorted(finished["sources"]) == ["regex", "transcript"]
    assert finished["trigger"] == trigger and finished["pre_tokens"] > 0
    assert "claude/conversation-compacted" in finished["patterns"]
    assert s["agent"] == "claude" and s["agent_session_id"]
    # the same moments are marked in the recording
    cast = Path(s["cast_path"]).read_text()
    assert '"m", "compaction_started"' in cast and '"m", "compaction_finished"' in cast


def test_manual_compact_is_one_start_and_one_finish_from_screen_and_transcript(claude):
    screen, api = claude
    turns(screen, [1, 2, 3])
    screen.type("/compact")
    screen.wait("Compacted", 90)
    screen.wait(IDLE, 60)
    s = finished_session(screen)
    assert any(r.is_compaction for r in api.messages())
    assert_one_compaction(s, "manual")
    assert len(kinds(s, {"idle_prompt"})) >= 4  # at start and after each turn
    # the state before compaction was captured by the cheap model, and again at the end
    from supervisor.store import Store

    store = Store.open_default()
    rows = wait_for(lambda: (lambda r: r if {"compaction_started", "session_end"} <= {x["trigger"] for x in r} else None)(store.contexts(s["id"])), 30)
    first = rows[0]
    assert first["trigger"] == "compaction_started" and first["source"] == "model" and first["model"] == "claude-haiku-4-5"
    assert first["prompt"].startswith("[supervise] You are continuing earlier work")
    summary_requests = [r for r in api.messages() if is_summary_request(r)]
    assert "turn 3: please say hello" in summary_requests[0].last_user_text()


def test_automatic_compaction_forced_by_prompt_too_long(claude):
    screen, api = claude
    turns(screen, [1, 2])
    api.add({"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"},
            match=lambda r: r.last_user_text().startswith("turn 3") and not r.is_compaction)
    screen.type("turn 3: please say hello")
    screen.wait("Reply to: turn 3", 120)
    screen.wait(IDLE, 60)
    s = finished_session(screen)
    assert_one_compaction(s, "auto")


def test_plain_conversation_fires_no_compaction_event(claude):
    screen, api = claude
    turns(screen, [1, 2, 3])
    s = finished_session(screen)
    assert kinds(s) == []
    assert not kinds(s, {"unrecognized"})
    assert len(kinds(s, {"idle_prompt"})) >= 4
    assert s["agent_session_id"]  # learned from the transcript, needed by `claude --resume`
