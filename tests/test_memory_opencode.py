"""The real OpenCode (pinned in tests/agents) looks up an earlier session through supervise's
MCP server, given to it for the run, against the fake API: with no permission prompt, and
with a per-run config the user set already kept alongside ours."""

import json
import re
import time

import pytest

from agentdriver import CLAUDE_MODEL, OPENCODE_IDLE as IDLE, Screen, opencode_bin, opencode_env
from fakeapi import FakeAnthropic
from helpers import latest, recorder_done, session
from planted import DECISION, FRAME, LOOKUP, REQUEST, SECRET, is_summary_request, leaked, summary_of_session_1, tool_results

TOOL = "supervise_search"
PROMPT = "Permission required"  # OpenCode's approval box, over its input


def is_turn(r):
    return r.has_tools and not is_summary_request(r)


def looks_up(r):
    """The model of session 2: asked to look it up, it calls supervise's search, then answers
    with the line it found."""
    if r.has_tool_result:
        lines = [line for t in tool_results(r) for line in t.splitlines() if "kestrel" in line]
        found = next((line for line in lines if "Use the kestrel" in line), lines[0] if lines else "nothing")
        return {"text": f"From the record: {found.rsplit(' · ', 1)[-1][:70]}"}  # the hit's text: one screen line
    return {"tool_use": {"name": TOOL, "input": {"query": "importer queue"}}}


def shown(screen) -> str:
    """What the screen shows now (OpenCode draws on the alternate screen)."""
    return "\n".join(line.text.rstrip() for line in screen.vt.view())


def watched(screen, pattern, timeout, frames):
    """screen.wait, keeping every frame that showed a permission prompt in `frames`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.2)
        now = shown(screen)
        if PROMPT in now:
            frames.append(now)
        if re.search(pattern, screen.text()):
            return
        assert screen.child.isalive(), f"OpenCode ended; the screen shows:\n{screen.text()[-3000:]}"
    raise AssertionError(f"screen never showed {pattern!r}; it shows:\n{screen.text()[-3000:]}")


@pytest.fixture
def opencode(tmp_path, home):
    """start(extra_env) -> (screen, api, project): `supervise -- opencode` at its idle prompt,
    on the fake API, supervise's contexts made by the fake API too."""
    opencode_bin()
    api = FakeAnthropic().start()
    env, project = opencode_env(tmp_path / "opencode", api.url, CLAUDE_MODEL)
    env.update(SUPERVISE_HOME=str(home), SUPERVISE_SUMMARY_BASE_URL=api.url)
    api.add(summary_of_session_1(), match=is_summary_request, times=None)
    screens = []

    def start(extra=None):
        for attempt in (1, 2):
            screen = Screen(["--", opencode_bin()], {**env, **(extra or {})}, project)
            screens.append(screen)
            try:
                screen.wait(IDLE, 45 if attempt == 1 else 90)
                break
            except AssertionError:
                # OpenCode, now and then, never gets past the terminal queries it starts with when
                # nothing answers them, as this screen does not (nothing drawn in 45 s; other
                # times it draws within seconds): started once more
                if attempt == 2 or screen.text().strip():
                    raise
                screen.quit_with_ctrl_c()
        screen.pump(2.0)  # its input box takes keys a moment after the footer is drawn
        return screen, api, project

    yield start
    for screen in screens:
        if screen.child.isalive():
            screen.quit_with_ctrl_c()
    api.stop()


def test_a_second_session_looks_the_first_ones_decision_up_through_supervise_with_no_prompt(opencode):
    first, api, project = opencode()
    api.add({"text": f"Decided. {DECISION}."}, match=lambda r: is_turn(r) and r.last_user_text().strip().endswith(REQUEST))
    first.type_keys(REQUEST)
    first.wait("Decided. Use the kestrel", 90)
    first.type_keys(f"and my key is {SECRET}")
    first.wait(r"Reply to: and my key", 90)
    first.quit_with_ctrl_c()
    one = latest()["id"]
    recorder_done(one)
    assert session(one)["project"] == str(project)

    second, api, _ = opencode()
    before = len(api.messages())
    api.add(looks_up, match=is_turn, times=None)
    frames: list[str] = []
    second.type_keys(LOOKUP)
    watched(second, r"From the record: Decided\. Use the kestrel", 120, frames)
    watched(second, IDLE, 30, frames)
    asked = api.messages()[before:]
    assert any(r.tool(TOOL) for r in asked if is_turn(r)), "OpenCode did not offer supervise's search tool"
    answers = [t for r in asked for t in tool_results(r)]
    assert answers, "supervise's search tool never answered"
    assert answers[0].startswith(FRAME), answers[0][:300]
    assert DECISION in answers[0] and one in answers[0]
    # the secret typed in session 1 reached none of session 2's requests, not even in part
    everything = json.dumps([r.body for r in asked])
    assert not leaked(everything)
    # the answer reached the screen, and no permission prompt ever stood in the way
    assert "kestrel" in second.text().split("From the record:")[-1]
    assert not frames and PROMPT not in second.text()


USER_CONFIG = """{
  // theirs: every tool asks first, and their requests carry a header of their own
  "permission": {"*": "ask"},
  "provider": {"anthropic": {"options": {"headers": {"X-Team": "importers"}}}},
}"""


def test_the_users_own_per_run_config_is_kept_and_supervise_still_runs_with_no_prompt(opencode):
    screen, api, _ = opencode({"OPENCODE_CONFIG_CONTENT": USER_CONFIG})

    def model(r):
        """supervise's search first, then a shell command (theirs to allow), then an answer."""
        called = [
            b.get("name")
            for m in r.body["messages"]
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_use"
        ]
        if TOOL not in called:
            return {"tool_use": {"name": TOOL, "input": {"query": "importer queue"}}}
        if "bash" not in called:
            return {"tool_use": {"name": "bash", "input": {"command": "echo allowed-by-hand", "description": "Print a word"}}}
        return {"text": "LOOKED-AND-RAN"}

    api.add(model, match=is_turn, times=None)
    frames: list[str] = []
    screen.type_keys(LOOKUP)
    watched(screen, PROMPT, 120, frames)
    # the prompt is theirs, for the shell: supervise's search had run and answered without one
    turns = [r for r in api.messages() if is_turn(r)]
    answers = [t for r in turns for t in tool_results(r)]
    assert answers and answers[0].startswith(("Recorded by supervise", "supervise:")), answers
    asking = shown(screen)
    assert "bash" in asking.lower() or "echo allowed-by-hand" in asking, asking
    assert TOOL not in asking.split(PROMPT, 1)[1], asking
    screen.child.send("\r")  # Allow once
    screen.wait("LOOKED-AND-RAN", 90)
    turns = [r for r in api.messages() if is_turn(r)]
    assert any("allowed-by-hand" in t for r in turns for t in tool_results(r))
    # their provider setting still applies: every turn of OpenCode's carries their header
    assert turns and all(r.headers.get("x-team") == "importers" for r in turns)
