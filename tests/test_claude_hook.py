"""Claude Code's side of injection: its command line on resume, the per-run settings, and the
SessionStart hook script run as Claude Code runs it (a subprocess, JSON on stdin)."""

import json
import os
import subprocess

from supervisor.profiles import claude
from supervisor.giveback.hookserver import HookServer


def test_resume_replaces_the_old_sessions_own_resume_flags():
    assert claude.without_resume(["claude", "--resume", "abc", "--model", "x"]) == ["claude", "--model", "x"]
    assert claude.without_resume(["claude", "-r", "--model", "x"]) == ["claude", "--model", "x"]
    assert claude.without_resume(["claude", "--continue", "-c", "--resume=abc", "hi"]) == ["claude", "hi"]
    assert claude.resume_argv(["claude", "--resume", "old", "-p"], "new") == ["claude", "--resume", "new", "-p"]
    assert claude.resume_argv(["claude", "--resume", "old"], None) == ["claude"]  # --fresh


def test_the_settings_file_adds_our_hook_and_asks_for_startup_only_when_resumed(tmp_path):
    hooked = claude.PROFILE.with_hook(["claude", "--model", "x"], tmp_path, str(tmp_path / "h.sock"), at_start=False)
    path = tmp_path / claude.SETTINGS_FILE
    assert hooked.argv == ["claude", "--settings", str(path), "--model", "x"]
    assert hooked.env == {"SUPERVISE_HOOK_SOCKET": str(tmp_path / "h.sock")}
    [entry] = json.loads(hooked.files[path])["hooks"]["SessionStart"]
    assert entry["matcher"] == "compact|resume"
    assert claude.settings(at_start=True)["hooks"]["SessionStart"][0]["matcher"] == "compact|resume|startup"
    assert claude.has_own_settings(["claude", "--settings", "x.json"]) and not claude.has_own_settings(["claude"])


def run_hook(env, payload):
    command = claude.PROFILE.hook_command()
    return subprocess.run(
        command, shell=True, input=json.dumps(payload), capture_output=True, text=True, env={"PATH": os.environ["PATH"], **env}, timeout=30
    )


def test_the_hook_prints_the_context_the_recorder_gives(tmp_path):
    asked = []

    def answer(request):
        asked.append(request)
        return "[supervise] context for " + request["source"]

    server = HookServer(str(tmp_path / "h.sock"), answer, lambda where, exc: None)
    server.start()
    try:
        assert os.stat(tmp_path / "h.sock").st_mode & 0o077 == 0  # the user's alone
        done = run_hook({"SUPERVISE_HOOK_SOCKET": str(tmp_path / "h.sock")}, {"source": "compact", "session_id": "u-1"})
    finally:
        server.close()
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "[supervise] context for compact"}
    }
    assert asked == [{"source": "compact", "session_id": "u-1"}]


def test_the_hook_never_breaks_the_agent(tmp_path):
    # not under supervise, or the recorder is gone: nothing printed, exit 0
    for env in ({}, {"SUPERVISE_HOOK_SOCKET": str(tmp_path / "gone.sock")}):
        done = run_hook(env, {"source": "compact"})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_recorder_that_cannot_start_stops_the_run_cleanly(tmp_path, monkeypatch):
    """A run of `claude` makes a private folder for the hook's socket; when the recorder then
    cannot start (no memory for a process), the user gets one line saying so, the agent is
    stopped, the session is marked failed, and the folder and the pipes are gone."""
    import io
    import tempfile

    import pytest

    from supervisor import paths
    from supervisor.errors import SuperviseError
    from supervisor.run import recorderstart, session
    from supervisor.store.database import Store

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def ours():  # this process's socket folders, wherever a socket path fits
        return [f for base in paths.socket_bases() for f in base.glob(f"{paths.SOCKET_DIR_PREFIX}{os.getpid()}-*")]

    agent = tmp_path / "claude"
    agent.write_text("#!/bin/sh\nsleep 30\n")
    agent.chmod(0o755)
    real_popen = recorderstart.subprocess.Popen

    def no_memory(argv, **kwargs):
        if "supervisor.run.recorder" not in argv:
            return real_popen(argv, **kwargs)
        assert ours(), "no socket folder was made"
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(recorderstart.subprocess, "Popen", no_memory)
    env = {**os.environ, "SUPERVISE_CONFIG": str(tmp_path / "cfg"), "SUPERVISE_HOME": str(tmp_path / "home")}
    fds = set(os.listdir("/proc/self/fd"))
    with pytest.raises(SuperviseError) as failed:
        session.run(session.RunOptions([str(agent)], cwd=str(tmp_path)), env=env, stdin_fd=None, stdout_fd=None, stderr=io.StringIO())
    assert str(failed.value).startswith("supervise: cannot start the recorder: Cannot allocate memory; the agent was stopped (hint: ")
    assert not ours()
    row = Store(tmp_path / "home" / "supervise.db").sessions()[0]
    assert row["status"] == "failed"
    with pytest.raises(ProcessLookupError):
        os.kill(row["child_pid"], 0)
    import gc

    gc.collect()
    left = {}
    for fd in set(os.listdir("/proc/self/fd")) - fds:
        try:
            left[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass  # (the listing's own)
    assert not left
