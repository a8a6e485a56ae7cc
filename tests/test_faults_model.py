"""Fault suite, the model API misbehaving: each case names what must survive, and checks it.

| fault                                         | what is kept                                         |
| --------------------------------------------- | ---------------------------------------------------- |
| hangs, trickles a byte at a time, refuses     | a context all the same: the heuristic one, stored    |
| (401, 500s), answers garbage or 30 MB         | with the reason, within the timeout (whole, retries  |
|                                               | included); the recorder's memory bounded             |
| hangs while a session runs                    | the agent's terminal: every key still echoes at once |
|                                               | while the summary is pending                         |

(Single failures, 429 then success, 529s, a malformed answer asked for again: tests/test_summarizer.py.)
"""

import json
import os
import sys
import time

import pytest

from conftest import run_cli
from fakeapi import FakeAnthropic
from helpers import RAW_ECHO, latest, spawn, wait_for
from supervisor.store.database import Store

TIMEOUT = 3  # SUPERVISE_SUMMARY_TIMEOUT in these tests: the longest a summary may take
GOOD = {
    "original_request": "fix the parser",
    "current_task": "the parser",
    "completed_steps": [],
    "pending_steps": [],
    "key_decisions": [],
    "relevant_files": [],
    "errors_and_resolutions": [],
}


def _settings(api):
    return {"SUPERVISE_SUMMARY_BASE_URL": api.url, "SUPERVISE_SUMMARY_API_KEY": "test-key", "SUPERVISE_SUMMARY_TIMEOUT": str(TIMEOUT)}


def _huge_answer():
    message = {
        "id": "msg_huge",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "record_session_context", "input": {**GOOD, "current_task": "x" * 30_000_000}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
    return json.dumps(message)


FAULTS = {
    "hangs": ({"text": "late", "delay": 600}, "timed out after 3s"),
    "trickles": ({"tool_use": {"name": "record_session_context", "input": GOOD}, "drip": 0.2}, "timed out after 3s"),
    "refuses the key": ({"status": 401, "message": "invalid x-api-key"}, "401 invalid x-api-key"),
    "fails every time": ({"status": 500, "message": "overloaded"}, "500"),
    "answers garbage": ({"raw": "<html><body>502 Bad Gateway</body></html>"}, "model call failed"),
    "answers 30 MB": ({"raw": _huge_answer()}, "model call failed"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.slow
def test_a_misbehaving_model_api_gives_the_heuristic_context_in_bounded_time(fault):
    reply, reason = FAULTS[fault]
    run_cli("--", "sh", "-c", "echo '❯ fix the parser in src/parse.py'; echo 'Error: ValueError in parse.py line 42'", check=True)
    sid = latest()["id"]
    with FakeAnthropic() as api:
        api.add(reply, times=None)
        started = time.monotonic()
        done = run_cli("summarize", sid, env={**os.environ, **_settings(api)}, timeout=60)
        took = time.monotonic() - started
        asked = len(api.messages())
    assert done.returncode == 0, done.stderr
    assert asked >= 1  # it was tried
    store = Store.open_default()
    try:
        row = store.latest_context(sid)
    finally:
        store.close()
    assert row["source"] == "heuristic" and reason in row["error"], row["error"]
    assert "fix the parser in src/parse.py" in row["context"]["original_request"]
    # the timeout is the whole summary's; a start-up of a few seconds on top
    assert took < TIMEOUT + 8, f"{fault}: {took:.1f} s"


# says it compacted, then echoes keys
RAW_ECHO_AGENT = "print('Compacting conversation', flush=True)\nprint('Conversation compacted', flush=True)\n" + RAW_ECHO


@pytest.mark.slow
def test_a_hung_model_api_never_holds_up_the_terminal():
    with FakeAnthropic() as api:
        api.add({"text": "late", "delay": 600}, times=None)
        c = spawn(["--agent", "demo", "--inject", "off", "--", sys.executable, "-c", RAW_ECHO_AGENT], env=_settings(api))
        c.expect_exact("echo ready")
        wait_for(lambda: api.messages(), timeout=20)  # the summary is asked for, and hangs
        sid = latest()["id"]
        for ch in "typing while the model hangs":
            c.send(ch)
            c.expect_exact(ch, timeout=2)  # each key comes back at once
        store = Store.open_default()
        try:
            # the heuristic context follows within the timeout, the session still running
            row = wait_for(lambda: store.latest_context(sid), timeout=TIMEOUT + 10)
            assert row["source"] == "heuristic" and "timed out after 3s" in row["error"]
            assert store.get_session(sid)["status"] == "active"
        finally:
            store.close()
        c.send(".")
        c.expect_exact(".")
        c.expect("session .* completed", timeout=TIMEOUT + 20)
