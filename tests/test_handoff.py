"""`supervise resume ID --with AGENT`: the work of one real agent CLI handed to another, with
its context, against the fake API: Claude Code (on a login) to OpenCode, through OpenCode's
plugin with the user's first words; OpenCode to Claude Code, through its SessionStart hook."""

import json

from agentdriver import CLAUDE_IDLE, CLAUDE_MODEL, OPENCODE_IDLE, Screen, claude_bin, claude_login_env, opencode_bin, opencode_env
from fakeapi import FakeAnthropic
from helpers import latest, session, wait_for
from supervisor.store.database import Store

HANDOFF = "[supervise] You are taking over work that another coding agent ({}) did in this directory."
REQUEST = "add a --json flag to the report command, keep the table output as it is"


def setup(tmp_path, home):
    """(api, opencode's env, claude's env, project): both agents in one project, on the fake API;
    contexts by the heuristic (this is about the hand-off, not the summary)."""
    claude_bin(), opencode_bin()
    api = FakeAnthropic().start()
    oc_env, project = opencode_env(tmp_path / "opencode", api.url, CLAUDE_MODEL)
    cl_env = claude_login_env(tmp_path / "claude-home", project, api.url)
    ours = {"SUPERVISE_HOME": str(home), "SUPERVISE_SUMMARY_BACKEND": "heuristic"}
    return api, {**oc_env, **ours}, {**cl_env, **ours}, project


def ended(screen):
    screen.quit_with_ctrl_c()
    s = wait_for(lambda: (lambda s: s if s["status"] != "active" else None)(session(latest()["id"])), 20)
    wait_for(lambda: Store.open_default().latest_context(s["id"]), 30)  # the session-end context
    return s


def injections(s):
    return [e["detail"] for e in s["events"] if e["kind"] == "injection"]


def test_claude_code_hands_its_work_to_opencode_through_its_plugin(tmp_path, home):
    api, oc_env, cl_env, project = setup(tmp_path, home)
    try:
        claude = Screen(["--", claude_bin(), "--model", CLAUDE_MODEL], cl_env, project)
        claude.wait(CLAUDE_IDLE, 60)
        claude.type(REQUEST)
        claude.wait(r"Reply to: add a --json flag", 60)
        claude.wait(CLAUDE_IDLE, 60)
        first = ended(claude)
        n = len(api.messages())
        opencode = Screen(["resume", first["id"], "--with", opencode_bin()], oc_env, project)
        head = HANDOFF.format("claude")
        opencode.wait(OPENCODE_IDLE, 90)
        opencode.pump(2.0)
        opencode.type_keys("carry on please")  # the context goes with the user's first words, before them

        def ours(r):
            return [t for t in r.texts("user") if t.startswith(head)]

        def handed():
            return next((r for r in api.messages()[n:] if ours(r) and r.body.get("tools")), None)

        request = wait_for(handed, 90)
        opencode.wait(r"Reply to: ", 60)  # OpenCode answered it
        opencode.wait(OPENCODE_IDLE, 30)
        second = ended(opencode)
        [text] = ours(request)
        assert f"Original request (verbatim):\n{REQUEST}\n" in text  # the user's words, verbatim
        assert "history are gone" in text
        assert second["parent_id"] == first["id"] and second["agent"] == "opencode" and first["agent"] == "claude"
        [given] = injections(second)
        assert given["channel"] == "hook" and given["confirmed"] is True and given["context_session"] == second["id"]
        assert request.last_user_text() == "carry on please"  # the user's words after it, their own
        # given once: in the conversation once, as it stands at the end
        assert [len(ours(r)) for r in api.messages()[n:] if r.body.get("tools")][-1] == 1
    finally:
        api.stop()


def test_opencode_hands_its_work_to_claude_code_through_the_hook(tmp_path, home):
    api, oc_env, cl_env, project = setup(tmp_path, home)
    try:
        opencode = Screen(["--", opencode_bin()], oc_env, project)
        opencode.wait(OPENCODE_IDLE, 90)
        opencode.pump(2.0)
        opencode.type_keys(REQUEST)
        opencode.wait(r"Reply to: add a --json flag", 60)
        opencode.wait(OPENCODE_IDLE, 30)
        first = ended(opencode)
        claude = Screen(["resume", first["id"], "--with", claude_bin(), "--", "--model", CLAUDE_MODEL], cl_env, project)
        claude.wait(CLAUDE_IDLE, 60)
        claude.type("carry on please")
        claude.wait(r"Reply to: carry on please", 60)
        claude.wait(CLAUDE_IDLE, 60)
        second = ended(claude)
        [request] = [r for r in api.messages() if r.last_user_text() == "carry on please" and not r.is_compaction]
        body = json.dumps(request.body, ensure_ascii=False)
        assert body.count(HANDOFF.format("opencode")) == 1  # the hook's context, once
        assert REQUEST in body
        assert second["parent_id"] == first["id"] and second["agent"] == "claude" and first["agent"] == "opencode"
        [given] = injections(second)
        assert given["channel"] == "hook" and given["reason"] == "resume"
        assert f"children:         {second['id']}" in __import__("conftest").run_cli("show", first["id"], check=True).stdout
    finally:
        api.stop()
