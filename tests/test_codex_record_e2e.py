"""The real Codex CLI under supervise, read through its own rollout file as well as its screen:
the user's words verbatim, its own compaction summary set beside supervise's context in
`supervise show`, and `supervise resume` carrying its thread on with `codex resume ID`."""

import json
import subprocess

from conftest import SUPERVISE
from helpers import latest, recorder_done, session, wait_for
from procs import live
from kits.codex import idle, ready, say
from test_memory_codex import codex_sessions, end_leftovers, quit_codex  # noqa: F401  (codex_sessions: the fixture)

REQUEST = "turn 1: write src/totals.py to sum data.csv amounts"
NEXT = "turn 2: go on"
SUMMARY = "Checkpoint: the user is testing the terminal client with short greetings."


def show(sid: str, *args: str) -> str:
    return subprocess.run([*SUPERVISE, "show", sid, *args], capture_output=True, text=True, check=True).stdout


def test_codex_is_read_from_its_rollout_its_summary_is_shown_beside_ours_and_resume_carries_its_thread_on(codex_sessions):  # noqa: F811
    start, api, env, project = codex_sessions
    screen = start()
    say(screen, REQUEST)
    screen.wait(r"Fake reply #\d+", 90)
    idle(screen)
    screen.type("/compact")
    screen.wait("Context compacted", 90)
    sid = latest()["id"]
    idle(screen)
    # Codex's hook takes supervise's context as the user's next turn starts
    say(screen, NEXT)
    wait_for(lambda: [e for e in session(sid)["events"] if e["kind"] == "injection"], 90, interval=0.5)
    idle(screen)
    quit_codex(screen)
    recorder_done(sid, 240)
    end_leftovers(env["HOME"])

    s = session(sid)
    threads = [json.loads(line)["payload"]["id"] for line in rollouts(env)[0].read_text().splitlines()[:1]]
    assert s["agent_session_id"] == threads[0]
    [summary] = [e for e in s["events"] if e["kind"] == "agent_summary"]
    assert summary["detail"]["text"].startswith(SUMMARY) and summary["detail"]["sources"] == ["transcript"]
    shown = show(sid)
    assert "the agent's own compaction summaries (1), beside supervise's context:" in shown
    assert f"| {SUMMARY}" in shown
    # the user's request is in supervise's context, verbatim from the rollout, and not in Codex's summary
    assert f"only supervise's round 1:      request: {REQUEST}" in shown, shown
    assert "latest request:" not in shown  # the same words, once
    [compared] = json.loads(show(sid, "--json"))["compactions"]
    assert compared["round"] == 1 and {"kind": "request", "text": REQUEST} in compared["only_ours"]

    resumed = start_resumed(sid, env, project)
    try:
        pid = wait_for(lambda: live(lambda cmdline, environ: b"\0resume\0" + threads[0].encode() in cmdline), 30)
        assert pid
        resumed.wait("turn 1: write src/totals.py", 60)  # Codex shows the thread it carries on
        idle(resumed)
    finally:
        quit_codex(resumed)
    child = latest()
    assert child["parent_id"] == sid
    recorder_done(child["id"], 240)
    # the carried-on thread is the same rollout, appended to: the new session knows it as its own
    assert session(child["id"])["agent_session_id"] == threads[0]


def rollouts(env):
    from pathlib import Path

    return sorted((Path(env["HOME"]) / ".codex" / "sessions").rglob("rollout-*.jsonl"))


def start_resumed(sid, env, project):
    from agentdriver import Screen

    screen = Screen(["resume", sid], env, project)
    ready(screen)
    return screen
