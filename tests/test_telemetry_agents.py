"""Telemetry with the real agents: Claude Code and OpenCode at their pinned releases under
supervise, against their fake model API, exporting to a local OTLP receiver (a real HTTP
server decoding the protobuf). A compaction, supervise's context made by the cheap model
(its tokens and cost counted) and given back, the user's turns with the content opt-in and
never our context among them; Claude Code's own telemetry lands beside ours."""

from __future__ import annotations

import os

import pytest

from agentdriver import Screen, send_turn
from conftest import require
from helpers import latest, recorder_done, wait_for
from kits import claude, opencode
from otlpreceiver import HttpReceiver
from supervisor.telemetry import signals

FIRST = "turn 1: write src/totals.py to sum data.csv amounts"
SECOND = "turn 2: rename the total column in src/totals.py"
HEAD = "[supervise] You are continuing earlier work"
SUMMARY = {
    "tool_use": {
        "name": "record_session_context",
        "input": {
            "original_request": FIRST,
            "current_task": "summing data.csv in src/totals.py",
            "completed_steps": ["src/totals.py written"],
            "pending_steps": [],
            "key_decisions": [],
            "relevant_files": ["src/totals.py"],
            "errors_and_resolutions": [],
        },
    }
}


def is_summary_request(r) -> bool:
    return (r.body.get("tool_choice") or {}).get("name") == "record_session_context"


@pytest.mark.parametrize("kit", [claude, opencode], ids=lambda kit: kit.NAME)
def test_a_real_agents_compaction_round_and_give_back_arrive_with_their_attributes(kit, tmp_path, home):
    exe = kit.binary()
    require(exe.exists(), f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    receiver = HttpReceiver().start()
    api = kit.Model().start()
    api.add(SUMMARY, match=is_summary_request, times=None)  # supervise's own cheap model, on the same fake API
    env, project = kit.environment(tmp_path / "agent", api.url)
    env = {k: v for k, v in env.items() if not k.startswith(("SUPERVISE_SUMMARY_", "OTEL_"))}
    env.update(
        SUPERVISE_HOME=str(home),
        PATH=f"{exe.parent}:{os.environ['PATH']}",
        SUPERVISE_SUMMARY_BACKEND="api",
        SUPERVISE_SUMMARY_BASE_URL=api.url,
        SUPERVISE_SUMMARY_API_KEY="sk-ant-api03-test",
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_METRIC_EXPORT_INTERVAL="1000",
        SUPERVISE_TELEMETRY_CONTENT="1",
        # Claude Code's own telemetry, the standard way, to the same place
        CLAUDE_CODE_ENABLE_TELEMETRY="1",
        OTEL_LOGS_EXPORTER="otlp",
        OTEL_METRICS_EXPORTER="otlp",
    )
    screen = getattr(kit, "SCREEN", Screen)(["--", str(exe), *kit.ARGV], env, project)
    try:
        kit.ready(screen)
        sid = latest()["id"]
        send_turn(kit, screen, FIRST)
        screen.wait("(?i)reply to: " + FIRST[:30], 90)
        kit.idle(screen)
        screen.type(kit.COMPACT)
        screen.wait(kit.COMPACTED, 90)
        received = receiver.received
        # reading its screen meanwhile: a full-screen agent nobody reads fills the terminal and waits
        given = wait_for(lambda: screen.pump(0.1) or received.events("supervise.context.given_back"), 120, 0, "the context given back")
        kit.idle(screen)
        send_turn(kit, screen, SECOND)
        screen.wait("(?i)reply to: " + SECOND[:30], 90)
        kit.idle(screen)
        kit.quit(screen)
        recorder_done(sid, 240)
    finally:
        if screen.child.isalive():
            kit.quit(screen)
        screen.close()
        api.stop()
        receiver.stop()

    ours = [r for r in received.events() if r["resource"].get("service.name") == "supervise"]
    for r in ours:
        assert r["attributes"]["supervise.session.id"] == sid and r["attributes"]["supervise.agent"] == kit.NAME, r
        assert r["attributes"]["supervise.agent.version"] == kit.VERSION, r  # the release, asked of the agent itself
    [start] = received.events("supervise.session.start")
    assert start["attributes"]["supervise.session.kind"] == "new"
    assert received.events("supervise.compaction.finished") or received.events("supervise.compaction.started")
    assert given[0]["attributes"]["supervise.giveback.reason"] == "compaction"
    made = received.events(signals.CONTEXT_MADE)
    by_model = [m for m in made if m["attributes"]["supervise.context.backend"] == "api"]
    assert by_model and by_model[0]["attributes"]["gen_ai.usage.input_tokens"] > 0, made
    assert by_model[0]["body"].startswith(HEAD)  # the context itself: the content opt-in is on
    assert received.events("supervise.session.end")
    # the user's turns, read from the agent's own record; never what supervise typed in
    asked = [r["body"] for r in received.events(signals.USER_REQUEST)]
    assert FIRST in asked and SECOND in asked, asked
    assert not [a for a in asked if HEAD in a or "continuing earlier work" in a], asked
    # the metrics, per agent and release
    wait_for(lambda: received.total("supervise.context.tokens", **{"gen_ai.token.type": "input"}) > 0, 30, what="the tokens counted")
    assert received.total("supervise.context.cost") > 0
    assert received.total("supervise.context.given_back", **{"supervise.agent": kit.NAME}) >= 1
    assert received.total("supervise.compactions", **{"supervise.agent": kit.NAME}) >= 1
    times = {dict(k)["supervise.state"]: v for k, v in received.latest("supervise.state.time").items()}
    assert times.get("working", 0) > 0 and times.get("waiting", 0) > 0, times
    if kit is claude:  # Claude Code's own telemetry joins ours in the same collector
        services = {p["resource"].get("service.name") for p in received.points} | {
            r["resource"].get("service.name") for r in received.events()
        }
        assert "claude-code" in services, services
