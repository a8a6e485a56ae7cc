"""Claude Code's side of injection: its command line on resume, the per-run settings, and the
SessionStart hook script run as Claude Code runs it (a subprocess, JSON on stdin)."""

import json
import os
import subprocess

from supervisor.giveback import claude
from supervisor.giveback.hookserver import HookServer


def test_resume_replaces_the_old_sessions_own_resume_flags():
    assert claude.without_resume(["claude", "--resume", "abc", "--model", "x"]) == ["claude", "--model", "x"]
    assert claude.without_resume(["claude", "-r", "--model", "x"]) == ["claude", "--model", "x"]
    assert claude.without_resume(["claude", "--continue", "-c", "--resume=abc", "hi"]) == ["claude", "hi"]
    assert claude.resume_argv(["claude", "--resume", "old", "-p"], "new") == ["claude", "--resume", "new", "-p"]
    assert claude.resume_argv(["claude", "--resume", "old"], None) == ["claude"]  # --fresh


def test_the_settings_file_is_private_and_asks_for_startup_only_when_resumed(tmp_path):
    argv = claude.with_hook(["claude", "--model", "x"], tmp_path / "s.json", resumed=False)
    assert argv == ["claude", "--settings", str(tmp_path / "s.json"), "--model", "x"]
    assert oct(os.stat(tmp_path / "s.json").st_mode & 0o777) == "0o600"
    [entry] = json.loads((tmp_path / "s.json").read_text())["hooks"]["SessionStart"]
    assert entry["matcher"] == "compact|resume"
    assert claude.settings(resumed=True)["hooks"]["SessionStart"][0]["matcher"] == "compact|resume|startup"
    assert claude.has_own_settings(["claude", "--settings", "x.json"]) and not claude.has_own_settings(["claude"])


def run_hook(env, payload):
    command = claude.hook_command()
    return subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], **env}, timeout=30)


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
    assert json.loads(done.stdout) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "[supervise] context for compact"}}
    assert asked == [{"source": "compact", "session_id": "u-1"}]


def test_the_hook_never_breaks_the_agent(tmp_path):
    # not under supervise, or the recorder is gone: nothing printed, exit 0
    for env in ({}, {"SUPERVISE_HOOK_SOCKET": str(tmp_path / "gone.sock")}):
        done = run_hook(env, {"source": "compact"})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
