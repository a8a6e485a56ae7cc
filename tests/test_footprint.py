"""What supervise's own processes hold while a session runs: a recorder asking the model
for a context holds neither the SDK (tens of MB) nor the HTTP and TLS stack (the call runs
in a process of its own), and the call speaks the Messages API as the SDK did."""

import json
import os
import subprocess

import pexpect
import pytest

from conftest import SUPERVISE, run_cli
from fakeapi import FakeAnthropic
from helpers import recorder_done, wait_for
from procs import cmdline, descendants, is_recorder, session_processes
from supervisor.store import migrations
from supervisor.store.database import Store

CONTEXT = {
    "original_request": "build the importer",
    "current_task": "importing the rows",
    "completed_steps": [],
    "pending_steps": [],
    "key_decisions": [],
    "relevant_files": [],
    "errors_and_resolutions": [],
}
SCRIPT = "echo '> build the importer'; for i in $(seq 1 50); do echo \"imported row $i\"; done"
# Shared objects the SDK (pydantic's core, its JSON reader) and TLS map into a process.
HEAVY_LIBRARIES = ("pydantic_core", "jiter", "_ssl")


def is_summary(r):
    return (r.body.get("tool_choice") or {}).get("name") == "record_session_context"


def mapped(pid: int) -> set[str]:
    with open(f"/proc/{pid}/maps", encoding="utf-8") as fh:
        return {line.split()[-1] for line in fh if line.rstrip().endswith(".so") or ".so." in line}


@pytest.mark.parametrize("credential", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_a_recorder_asking_the_model_holds_no_sdk_and_sends_what_the_api_expects(credential):
    with FakeAnthropic() as api:
        api.add({"tool_use": {"name": "record_session_context", "input": CONTEXT}, "delay": 3.0}, match=is_summary, times=None)
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, credential: "test-key", "SUPERVISE_SUMMARY_BACKEND": "api"}
        for other in {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SUPERVISE_SUMMARY_API_KEY"} - {credential}:
            env.pop(other, None)
        run_cli("--agent", "aider", "--", "sh", "-c", SCRIPT, env=env, check=True, timeout=120)
        sid = json.loads(run_cli("sessions", "--json", check=True).stdout)[0]["id"]
        # the session's last round is in flight: the recorder waits on the model's answer
        asked = wait_for(lambda: [r for r in api.messages() if is_summary(r)], 60)
        [recorder] = [p for p in session_processes(sid) if is_recorder(p)]
        libraries = mapped(recorder)
        calls = [p for p in descendants(recorder) if p != recorder and any("messageshttp" in a for a in cmdline(p))]
        recorder_done(sid)
    assert len(calls) == 1, "the model call runs in a process of the recorder's own"
    assert not [name for name in libraries if any(lib in name for lib in HEAVY_LIBRARIES)]
    [request] = asked
    if credential == "ANTHROPIC_API_KEY":
        assert request.headers["x-api-key"] == "test-key" and "authorization" not in request.headers
    else:
        assert request.headers["authorization"] == "Bearer test-key" and "x-api-key" not in request.headers
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    body = request.body
    assert sorted(body) == ["max_tokens", "messages", "model", "system", "tool_choice", "tools"]
    assert body["tool_choice"] == {"type": "tool", "name": "record_session_context"}
    assert [t["name"] for t in body["tools"]] == ["record_session_context"]
    assert [m["role"] for m in body["messages"]] == ["user"] and "build the importer" in body["messages"][0]["content"]
    store = Store.open_default()
    try:
        assert [(r["source"], r["context"]["current_task"]) for r in store.contexts(sid)] == [("model", "importing the rows")]
    finally:
        store.close()


def test_a_first_session_in_a_new_data_folder_migrates_it_in_a_process_of_its_own(tmp_path):
    """The supervisor and the recorder live as long as the agent: the migration's library
    (sqlite-utils, and decimal, zipfile... beneath it) is loaded by a short process instead."""
    env = {**os.environ, "SUPERVISE_HOME": str(tmp_path / "new-home")}
    child = pexpect.spawn(SUPERVISE[0], [*SUPERVISE[1:], "--", "sh", "-c", "echo rea''dy; read line"], env=env, timeout=30)
    try:
        child.expect_exact("ready")
        sid = wait_for(lambda: Store(tmp_path / "new-home" / "supervise.db").sessions(), 10)[0]["id"]
        ours = [child.pid, *wait_for(lambda: [p for p in session_processes(sid) if is_recorder(p)], 10)]
        held = {pid: [n for n in mapped(pid) if "_decimal" in n] for pid in ours}
        child.sendline("")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert held == {pid: [] for pid in ours}
    applied = Store(tmp_path / "new-home" / "supervise.db")
    try:
        assert migrations.pending(applied.conn) == []
    finally:
        applied.close()


@pytest.mark.parametrize(
    "args, unwanted",
    [
        (["--version"], ("typer", "supervisor.cli.app")),  # what scripts and status lines ask, often
        # the PTY loop: every profile is imported, none needs OpenSSL to start; Linux's folders need no platformdirs
        (["--", "true"], ("typer", "hashlib", "_ssl", "platformdirs")),
    ],
)
def test_what_the_commands_a_user_waits_on_leave_unloaded(tmp_path, args, unwanted):
    """The modules Python says it imported (PYTHONPROFILEIMPORTTIME) for `supervise --version`
    and for the start of a session in a data folder made already: none of the slow ones
    that neither needs."""
    env = {**os.environ, "SUPERVISE_HOME": str(tmp_path / "home")}
    subprocess.run(
        [*SUPERVISE, "--", "true"], env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True, timeout=60
    )  # (its migration)
    env["PYTHONPROFILEIMPORTTIME"] = "1"
    done = subprocess.run([*SUPERVISE, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.returncode == 0, done.stderr[-2000:]
    assert "supervisor" in imported  # the imports were told
    assert sorted(m for m in imported if m.split(".")[0] in unwanted or m in unwanted) == []
    if args == ["--version"]:
        assert done.stdout == "supervise 0.1.0\n"
