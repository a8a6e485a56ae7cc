"""A session's last context round: its recorder makes it after `supervise` has exited, however
busy the machine; `supervise context` and `resume` wait for it, and make it themselves when the
session ended without it. Real sessions under the real supervise, against the fake API."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from fakeapi import FakeAnthropic
from helpers import recorder_done, wait_for
from procs import is_recorder, session_processes
from supervisor.store.database import Store

SUMMARY = {
    "tool_use": {
        "name": "record_session_context",
        "input": {
            "original_request": "build the importer",
            "current_task": "importing the rows",
            "completed_steps": [],
            "pending_steps": [],
            "key_decisions": [],
            "relevant_files": [],
            "errors_and_resolutions": [],
        },
    }
}
SCRIPT = "echo '> build the importer'; for i in $(seq 1 200); do echo \"imported row $i\"; done"


def is_summary(r):
    return (r.body.get("tool_choice") or {}).get("name") == "record_session_context"


@pytest.fixture
def api():
    with FakeAnthropic() as server:
        yield server


def env_for(api):
    return {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key", "SUPERVISE_SUMMARY_BACKEND": "api"}


def run_session(api, *args):
    """A session of a known agent (its recorder makes contexts), ended; its id."""
    run_cli(*(args or ("--agent", "aider", "--", "sh", "-c", SCRIPT)), env=env_for(api), check=True, timeout=120)
    return json.loads(run_cli("sessions", "--json", check=True).stdout)[0]["id"]


def summaries(api):
    return [r for r in api.messages() if is_summary(r)]


def triggers(sid):
    store = Store.open_default()
    try:
        return [r["trigger"] for r in store.contexts(sid)]
    finally:
        store.close()


@pytest.mark.slow
def test_the_last_round_is_made_however_busy_the_machine_is(api):
    """Every core busy: once supervise has exited its recorder still makes the session's last
    round, `supervise context` run meanwhile waits for it (and makes none of its own)."""
    api.add({**SUMMARY, "delay": 1.0}, match=is_summary, times=None)  # the round is still being made after exit
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        sid = run_session(api)
        shown = run_cli("context", sid, "--json", env=env_for(api), check=True, timeout=300)
        recorder_done(sid, timeout=300)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    row = json.loads(shown.stdout)
    store = Store.open_default()
    rows = store.contexts(sid)
    assert [(r["trigger"], r["source"]) for r in rows] == [("session_end", "model")], [
        (r["trigger"], r["error"], r["created"]) for r in rows
    ]
    end = rows[0]
    assert row["round"] == end["round"] and row["prompt"] == end["prompt"]
    assert end["log_offset"] == Path(store.get_session(sid)["log_path"]).stat().st_size  # it read the session to its end
    assert len(summaries(api)) == 1


def kill_recorder_in_its_last_round(api, sid):
    """The recorder is asked for the last round's summary (which never comes) and killed there."""
    wait_for(lambda: summaries(api), 60)
    [recorder] = [p for p in session_processes(sid) if is_recorder(p)]
    os.kill(recorder, signal.SIGKILL)
    recorder_done(sid)


@pytest.mark.slow
def test_a_session_whose_recorder_died_before_its_last_round_gets_it_from_context(api):
    api.add({**SUMMARY, "delay": 600}, match=is_summary, times=1)
    api.add(SUMMARY, match=is_summary, times=None)
    sid = run_session(api)
    kill_recorder_in_its_last_round(api, sid)
    assert triggers(sid) == []
    made = run_cli("context", sid, "--json", env=env_for(api), check=True)
    assert f"session {sid} ended without its last context; making it now" in made.stderr
    row = json.loads(made.stdout)
    assert (row["trigger"], row["source"], row["round"]) == ("session_end", "model", 1), row["error"]
    assert "build the importer" in row["context"]["original_request"]  # it read the session
    again = run_cli("context", sid, "--json", env=env_for(api), check=True)  # made once: then it is the last
    assert json.loads(again.stdout)["round"] == 1 and "making it" not in again.stderr
    assert triggers(sid) == ["session_end"] and len(summaries(api)) == 2


@pytest.mark.slow
def test_resume_waits_for_the_last_round_of_a_session_that_just_ended(api):
    """Resumed while its recorder still makes its last round: the new session is given that
    round; no second one is made for the old session."""
    api.add({**SUMMARY, "delay": 2.0}, match=is_summary, times=None)
    first = run_session(api)
    second = run_session(api, "resume", first)
    recorder_done(second)
    recorder_done(first)
    assert triggers(first) == ["session_end"]
    assert triggers(second) == ["session_end"]
    assert len(summaries(api)) == 2
