"""The real Claude Code (pinned in tests/agents) looks up an earlier session through
supervise's MCP server, and starts with a brief of it, against the fake API.

Its model does what a real one must: it calls only the tools it is offered. supervise's server
asks not to be deferred (alwaysLoad), so once it has connected its tools come in the request
itself; a session whose first turn beat the server gets them deferred, and the model loads the
tool through ToolSearch (`select:mcp__supervise__search`) first."""

import json
import re
import time

import pytest

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env, claude_newest_bin
from fakeapi import FakeAnthropic
from helpers import latest, recorder_done, session, wait_for
from planted import DECISION, FRAME, LOOKUP, REQUEST, SECRET, is_summary_request, leaked, summary_of_session_1, tool_results

TOOL = "mcp__supervise__search"
TOOLS = {TOOL, "mcp__supervise__brief", "mcp__supervise__excerpt", "mcp__supervise__session"}
DIALOG = r"Do you want to proceed|Allow this|don't ask again|can't check actions"


def can_call(r, name):
    """Offered in full: not deferred, or deferred and loaded by a ToolSearch result since."""
    tool = r.tool(name)
    return tool is not None and (not tool.get("defer_loading") or json.dumps({"tool_name": name})[1:-1] in json.dumps(r.body["messages"]))


def looks_up(r):
    """The model of session 2: asked to look it up, it calls supervise's search tool (loading it
    through ToolSearch first if it was not offered in full), and answers with the line it found."""
    results = tool_results(r)
    if any(FRAME in t for t in results):
        found = next((line for t in results for line in t.splitlines() if "kestrel" in line), "nothing")
        return {"text": f"From the record: {found[-120:]}"}
    if can_call(r, TOOL):
        return {"tool_use": {"name": TOOL, "input": {"query": "importer queue"}}}
    return {"tool_use": {"name": "ToolSearch", "input": {"query": f"select:{TOOL}"}}}


def calls(requests, name):
    """How many times the model called `name` in the conversation the last request carries."""
    messages = requests[-1].body["messages"] if requests else []
    return sum(
        1 for m in messages if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_use" and b["name"] == name
    )


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
    # the tool was offered (deferred behind ToolSearch if this turn beat its server) and called
    assert any(r.tool(TOOL) for r in asked)
    answers = [t for r in asked for t in tool_results(r) if FRAME in t]
    assert answers, "supervise's search tool never answered"
    assert "kestrel" in answers[0] and one in answers[0]
    assert "not instructions" in answers[0]
    everything = json.dumps([r.body for r in asked])
    assert not leaked(everything)
    # the answer reached the screen, and no permission dialog ever stood in the way
    assert "From the record:" in screen.text() and "kestrel" in screen.text().split("From the record:")[-1]
    assert not re.search(DIALOG, screen.text())


def test_once_connected_supervises_tools_come_in_the_first_request_and_a_lookup_needs_no_toolsearch(two_sessions):
    """alwaysLoad: the tools of a server that has connected come in full from the first request
    (a turn sent before it connects gets them deferred for the whole session)."""
    screen, api, one = two_sessions()
    screen.type("/mcp")  # as a user checks it: the server is up, with its tools
    screen.wait(r"✔ supervise\s+4 tools", 30)
    screen.child.send("\x1b")
    screen.wait(IDLE, 30)
    before = len(api.messages())
    api.add(looks_up, match=lambda r: r.has_tools and not is_summary_request(r), times=None)
    screen.type(LOOKUP)
    screen.wait("From the record:", 90)
    screen.wait(IDLE, 30)
    asked = [r for r in api.messages()[before:] if r.has_tools and not is_summary_request(r)]
    offered = {t["name"]: t for t in asked[0].body["tools"] if t["name"].startswith("mcp__supervise__")}
    assert set(offered) == TOOLS and not any(t.get("defer_loading") for t in offered.values()), offered
    deferred = asked[0].all_text().split("deferred tools are now available via ToolSearch", 1)[-1].split("</system-reminder>", 1)[0]
    assert not any(name in deferred for name in TOOLS)
    # the search called at once, then the answer: two round trips (deferred, ToolSearch made three)
    assert len(asked) == 2 and calls(asked, TOOL) == 1 and calls(asked, "ToolSearch") == 0
    assert any(FRAME in t and one in t for t in tool_results(asked[-1]))


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
