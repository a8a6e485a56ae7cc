"""`supervise demo` as a newcomer runs it: no API key, no network, no Docker, no agent CLI."""

import os
import time

import pexpect
import pytest

from conftest import SUPERVISE
from helpers import latest, session
from supervisor.store.database import Store


@pytest.mark.slow
def test_the_demo_shows_compaction_detection_a_context_and_the_agent_carrying_on(tmp_path, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    # the brief on, and an earlier session of this folder with a context: the demo takes none
    store = Store(home / "supervise.db")
    store.create_session(
        "prev22", command="toy", argv=["toy"], cwd=str(tmp_path), project=str(tmp_path), project_key=str(tmp_path), status="completed"
    )
    context = {"original_request": "port the importer", "current_task": "x", "completed_steps": [], "pending_steps": []}
    store.add_context("prev22", lambda r: f"[supervise] round {r}", trigger="end", source="heuristic", context=context)
    store.close()
    started = time.monotonic()
    c = pexpect.spawn(
        SUPERVISE[0],
        ["demo"],
        env={**env, "TERM": "xterm-256color", "SUPERVISE_BRIEF": "1"},
        cwd=tmp_path,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    c.expect(pexpect.EOF)
    out = c.before
    c.close()
    assert c.exitstatus == 0, out
    assert time.monotonic() - started < 60
    assert "Conversation compacted" in out and "the agent got its context back" in out
    assert "demo: files I had touched: src/report.py, tests/test_report.py, tests/test_report_json.py" in out
    assert "gave the agent its session context 1 time(s): compaction via typed" in out
    s = session(latest()["id"])
    kinds = [e["kind"] for e in s["events"]]
    assert "compaction_started" in kinds and "compaction_finished" in kinds and "brief" not in kinds
    assert "brief" not in out
    [given] = [e["detail"] for e in s["events"] if e["kind"] == "injection"]
    assert given["confirmed"] is True and given["reason"] == "compaction"
    [first, *_] = Store.open_default().contexts(s["id"])
    assert first["source"] == "heuristic" and "add a --json flag to the report command" in first["prompt"]
    assert f"supervise export {s['id']}" in out and "supervise browse --open" in out
