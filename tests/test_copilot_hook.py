"""Copilot CLI's door: a plugin folder of the run's own whose hooks ask supervise for the
context, run as Copilot CLI runs them (a shell command, its own JSON on stdin, the context read
from the top of the output). Its live end-to-end test (tests/test_agents_e2e.py) shows the
context reaching its model and the user's own hook running beside ours."""

import json
import os
import subprocess

from supervisor.doctor import machine
from supervisor.giveback.hookserver import HookServer
from supervisor.profiles import copilot


def test_the_plugin_folder_is_given_for_the_run_with_a_hook_before_each_prompt(tmp_path):
    hooked = copilot.PROFILE.with_hook(["copilot", "--model", "x"], tmp_path, str(tmp_path / "h.sock"), at_start=False)
    plugin = tmp_path / copilot.PLUGIN_DIR
    assert hooked.argv == ["copilot", f"--plugin-dir={plugin}", "--model", "x"]
    assert hooked.env == {"SUPERVISE_HOOK_SOCKET": str(tmp_path / "h.sock")}
    assert json.loads(hooked.files[plugin / ".plugin" / "plugin.json"])["name"] == "supervise"
    hooks = json.loads(hooked.files[plugin / "hooks" / "hooks.json"])["hooks"]
    assert list(hooks) == ["userPromptSubmitted", "preCompact"]  # a plain start has nothing to give as it starts
    [handler] = hooks["userPromptSubmitted"]
    assert handler["bash"].endswith("hook.py shape=flat source=prompt")
    started = copilot.PROFILE.with_hook(["copilot"], tmp_path, "s", at_start=True)
    assert set(json.loads(started.files[plugin / "hooks" / "hooks.json"])["hooks"]) == {"sessionStart", "userPromptSubmitted", "preCompact"}


def ask(command, payload, socket):
    env = {"PATH": os.environ["PATH"], "SUPERVISE_HOOK_SOCKET": socket}
    return subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)


def test_its_hooks_name_their_source_and_get_the_context_at_the_top_of_their_output(tmp_path):
    asked = []

    def answer(request):
        asked.append(request)
        return "[supervise] context for " + request["source"]

    sock = str(tmp_path / "h.sock")
    hooks = json.loads(copilot.plugin_files(tmp_path, at_start=True)[tmp_path / "hooks" / "hooks.json"])["hooks"]
    server = HookServer(sock, answer, lambda where, exc: None)
    server.start()
    try:
        # as Copilot CLI 1.0.102 sends them: a prompt's event has no source; a start's has its own
        prompt = ask(hooks["userPromptSubmitted"][0]["bash"], {"sessionId": "c-1", "prompt": "rename it"}, sock)
        start = ask(hooks["sessionStart"][0]["bash"], {"sessionId": "c-1", "source": "resume"}, sock)
    finally:
        server.close()
    assert json.loads(prompt.stdout) == {"additionalContext": "[supervise] context for prompt"}
    assert json.loads(start.stdout) == {"additionalContext": "[supervise] context for resume"}
    assert asked == [{"sessionId": "c-1", "prompt": "rename it", "source": "prompt"}, {"sessionId": "c-1", "source": "resume"}]


def test_doctor_runs_copilots_hook_as_copilot_would_and_gets_the_context_back():
    [check] = machine.hook_script(copilot.PROFILE)
    assert check.status == "ok", check
    assert copilot.PROFILE.door and copilot.PROFILE.door_at_prompt
