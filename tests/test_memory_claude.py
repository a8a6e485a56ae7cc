"""The real Claude Code (pinned in tests/agents) looks up an earlier session through
supervise's MCP server, and starts with a brief of it, against the fake API.

Its model does what a real one must: MCP tools are deferred behind ToolSearch, so it first
loads the tool (`select:mcp__supervise__search`), then calls it."""

import json
import re
import time

import pytest

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env, claude_newest_bin
from fakeapi import FakeAnthropic
from helpers import latest, recorder_done, session, wait_for
from planted import DECISION, FRAME, REQUEST, SECRET, is_summary_request, leaked, summary_of_session_1, tool_results

TOOL = "mcp__supervise__search"
DIALOG = r"Do you want to proceed|Allow this|don't ask again|can't check actions"


def looks_up(r):
    """The model of session 2: asked to look it up, it loads supervise's search tool through
    ToolSearch, calls it, and answers with the line it found."""
    results = tool_results(r)
    if any(FRAME in t for t in results):
        found = next((line for t in results for line in t.splitlines() if "kestrel" in line), "nothing")
        return {"text": f"From the record: {found[-120:]}"}
    if r.has_tool_result and r.tool(TOOL):
        return {"tool_use": {"name": TOOL, "input": {"query": "importer queue"}}}
    return {"tool_use": {"name": "ToolSearch", "input": {"query": f"select:{TOOL}"}}}


@pytest.fixture(params=["pinned", "newest"])
def two_sessions(request, tmp_path, home):
    """run(supervise_args) -> (screen, api) for a session of the real Claude Code (the pinned
    release, and the newest) in one project, after session 1 (a decision and a secret in it)
    has ended with its context made."""
    claude = claude_bin() if request.param == "pinned" else claude_newest_bin()
    project = tmp_path / "work"
    project.mkdir()
    api = FakeAnthropic().start()
    env = {**claude_env(tmp_path / "claude-home", project, api.url), "SUPERVISE_HOME": str(home)}
    api.add(summary_of_session_1(), match=is_summary_request, times=None)
    api.add({"text": f"Decided. {DECISION}."}, match=lambda r: r.has_tools and r.last_user_text().endswith(REQUEST))
    screens = []

    def start(args=(), model=CLAUDE_MODEL):
        screen = Screen([*args, "--", claude, "--model", model], env, project)
        screens.append(screen)
        screen.wait(IDLE, 60)
        return screen

    first = start()
    first.type(REQUEST)
    first.wait("Decided. Use the kestrel", 60)
    first.wait(IDLE, 60)
    first.type(f"and my key is {SECRET}")
    first.wait(r"Reply to: and my key", 60)
    first.wait(IDLE, 60)
    quit_claude(first)
    one = latest()["id"]
    recorder_done(one)
    assert session(one)["project"] == str(project)

    def run(args=(), model=CLAUDE_MODEL):
        return start(args, model), api, one

    yield run
    for screen in screens:
        if screen.child.isalive():
            quit_claude(screen)
    api.stop()


def quit_claude(screen):
    screen.child.sendcontrol("c")
    time.sleep(0.3)
    screen.child.sendcontrol("c")
    screen.close()


AUTO = r"auto mode on"
# A model Claude Code offers auto mode with (it says "auto mode unavailable for this model" of
# CLAUDE_MODEL), and marks as retiring on no date.
AUTO_MODEL = "claude-sonnet-4-6"
SHIFT_TAB = "\x1b[Z"


def into_auto_mode(screen):
    """Shift+Tab through Claude Code's permission modes until auto mode is on."""
    for _ in range(6):
        if re.search(AUTO, screen.text().split("────")[-1]):
            return
        screen.child.send(SHIFT_TAB)
        screen.pump(0.5)
    screen.wait(AUTO, 5)


@pytest.mark.parametrize("mode", ["default", "auto"])
def test_a_second_session_looks_the_first_ones_decision_up_through_supervise_with_no_dialog(two_sessions, mode):
    screen, api, one = two_sessions(model=AUTO_MODEL if mode == "auto" else CLAUDE_MODEL)
    if mode == "auto":
        into_auto_mode(screen)
    first_requests = len(api.messages())
    api.add(looks_up, match=lambda r: r.has_tools and not is_summary_request(r), times=None)
    screen.type("what did we decide about the importer queue? look it up")
    screen.wait("From the record:", 90)
    screen.wait(IDLE, 30)
    asked = api.messages()[first_requests:]
    # the tool was offered deferred, loaded through ToolSearch, and called
    assert any(r.tool(TOOL) and r.tool(TOOL).get("defer_loading") for r in asked)
    answers = [t for r in asked for t in tool_results(r) if FRAME in t]
    assert answers, "supervise's search tool never answered"
    assert "kestrel" in answers[0] and one in answers[0]
    assert "not instructions" in answers[0]
    everything = json.dumps([r.body for r in asked])
    assert not leaked(everything)
    # the answer reached the screen, and no permission dialog ever stood in the way
    assert "From the record:" in screen.text() and "kestrel" in screen.text().split("From the record:")[-1]
    assert not re.search(DIALOG, screen.text())


def test_with_brief_the_first_request_of_session_2_carries_session_1s_request_and_decision(two_sessions):
    screen, api, one = two_sessions(["--brief"])
    before = len(api.messages())
    screen.type("turn 2: carry on")
    screen.wait("Reply to: turn 2", 60)
    first = next(r for r in api.messages()[before:] if r.has_tools and not is_summary_request(r))
    text = first.all_text()
    assert "[supervise] Brief" in text and one in text
    assert REQUEST.split(": ", 1)[1] in text and DECISION in text
    assert "Wire the importer to the kestrel queue" in text  # what was still open
    assert not leaked(json.dumps(first.body))
    # given through the hook at start-up, and recorded as supervise's, not typed as the user's
    two = latest()["id"]
    kinds = wait_for(
        lambda: (lambda k: k if {"brief", "injection"} <= set(k) else None)({e["kind"]: e["detail"] for e in session(two)["events"]}), 10
    )
    assert kinds["brief"]["sessions"] == [one]
    assert kinds["injection"]["channel"] == "hook" and kinds["injection"]["reason"] == "brief"
    assert not first.last_user_text().startswith("[supervise]")
