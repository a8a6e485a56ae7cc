"""Gemini CLI's door, installed as a user installs it: `supervise hooks install gemini` writes
supervise's extension and has the real Gemini CLI link it (the user's settings file untouched,
comments and all), `uninstall` takes it out; the hooks run as Gemini CLI runs them. Its live
end-to-end test (tests/test_agents_e2e.py) shows the context reaching its model through them."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import SUPERVISE, require
from kits import gemini as kit
from supervisor.detection import patterns
from supervisor.doctor import agents as doctor_agents
from supervisor.giveback.hookserver import HookServer
from supervisor.profiles import gemini

THEIRS = """{
  // mine: kept as I wrote it
  "ui": {"theme": "Default"},
  "security": {"folderTrust": {"enabled": false}}
}
"""


@pytest.fixture
def user(tmp_path):
    exe = kit.binary()
    require(exe.exists(), f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(THEIRS)
    env = {"HOME": str(home), "PATH": f"{exe.parent}:{os.environ['PATH']}", "SUPERVISE_HOME": str(tmp_path / "data")}
    return env


def supervise(env, *args):
    return subprocess.run([*SUPERVISE, *args], env=env, capture_output=True, text=True, timeout=120, cwd=env["HOME"])


def listed(env) -> str:
    done = subprocess.run(["gemini", "extensions", "list"], env=env, capture_output=True, text=True, timeout=120, cwd=env["HOME"])
    return done.stdout + done.stderr


def test_install_links_our_extension_and_uninstall_takes_it_out_leaving_the_users_settings_as_they_were(user, tmp_path):
    dry = supervise(user, "hooks", "install", "gemini", "--dry-run")
    folder = tmp_path / "data" / "doors" / "gemini"
    assert dry.returncode == 0 and f"gemini extensions link {folder} --consent" in dry.stdout, dry
    assert not folder.exists() and gemini.PROFILE.door_here(user) is None  # a dry run changes nothing

    done = supervise(user, "hooks", "install", "gemini")
    assert done.returncode == 0 and "now gets its context back through its own hooks" in done.stderr, done
    assert "supervise (1.0.0)" in listed(user)
    assert gemini.PROFILE.door_here(user) == gemini.PROFILE.door
    assert gemini.PROFILE.with_hook(["gemini"], tmp_path, "s", at_start=False, env=user).env == {"SUPERVISE_HOOK_SOCKET": "s"}
    check = doctor_agents.agent("gemini", patterns.load_all(env={}), user)
    assert check.detail.endswith(f"context back: {gemini.PROFILE.door}"), check
    assert os.stat(folder).st_mode & 0o077 == 0  # ours alone

    again = supervise(user, "hooks", "install", "gemini")
    assert again.returncode == 0 and "already: brought up to date" in again.stderr, again

    gone = supervise(user, "hooks", "uninstall", "gemini")
    assert gone.returncode == 0 and "no longer has supervise's door" in gone.stderr, gone
    assert "supervise" not in listed(user) and not folder.exists()
    assert gemini.PROFILE.with_hook(["gemini"], tmp_path, "s", at_start=False, env=user) is None  # typed again
    twice = supervise(user, "hooks", "uninstall", "gemini")
    assert twice.returncode == 0 and "had no door of supervise's" in twice.stderr, twice
    assert (Path(user["HOME"]) / ".gemini" / "settings.json").read_text() == THEIRS


@pytest.mark.parametrize("agent, said", [("claude", "claude has nothing to install"), ("gemnii", "no agent 'gemnii'")])
def test_an_agent_with_nothing_to_install_gets_one_line(user, agent, said):
    done = supervise(user, "hooks", "install", agent)
    assert done.returncode == 2 and done.stderr.startswith(f"supervise: {said}") and done.stderr.count("\n") == 1, done


def test_its_hooks_name_their_source_and_never_hold_a_prompt_back(tmp_path):
    asked = []

    def answer(request):
        asked.append(request)
        return "[supervise] context for " + request["source"]

    hooks = json.loads(gemini.extension_files(tmp_path)[tmp_path / "hooks" / "hooks.json"])["hooks"]
    before, resume = hooks["BeforeAgent"][0]["hooks"][0], hooks["SessionStart"][0]
    assert resume["matcher"] == "resume" and before["name"] == "supervise"  # its spinner shows the name
    # its PreCompress "auto" fires before every turn, compressing or not: no witness of a compaction
    assert [g["matcher"] for g in hooks["PreCompress"]] == ["manual"]

    def run(command, payload, env):
        base = {"PATH": os.environ["PATH"], **env}
        return subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True, env=base, timeout=30)

    sock = str(tmp_path / "h.sock")
    server = HookServer(sock, answer, lambda where, exc: None)
    server.start()
    try:
        prompt = run(before["command"], {"hook_event_name": "BeforeAgent", "prompt": "rename it"}, {"SUPERVISE_HOOK_SOCKET": sock})
        started = run(
            resume["hooks"][0]["command"], {"hook_event_name": "SessionStart", "source": "resume"}, {"SUPERVISE_HOOK_SOCKET": sock}
        )
    finally:
        server.close()
    assert json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"] == "[supervise] context for prompt"
    assert json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"] == "[supervise] context for resume"
    assert [a["source"] for a in asked] == ["prompt", "resume"]
    # outside supervise, or supervise moved away: nothing printed, exit 0 (anything else refuses the prompt)
    assert run(before["command"], {"hook_event_name": "BeforeAgent"}, {}).returncode == 0
    moved = before["command"].replace("hook.py", "gone.py").replace("python", "nopython")
    assert run(moved, {}, {}).returncode == 0


def test_a_run_that_names_its_extensions_keeps_its_choice():
    assert gemini.PROFILE.hooks(["gemini"]) and gemini.PROFILE.hooks(["gemini", "-m", "x"])
    for argv in (["gemini", "-e", "mine"], ["gemini", "--extensions=mine"], ["gemini", "-e=none"]):
        assert not gemini.PROFILE.hooks(argv), argv
