"""Long sessions: several compactions with the user typing between, each context made from
the one before. Whatever supervise gave the agent (a typed context, echoed on screen and
quoted back) must never come back as the user's words, the agent's output or a detection;
the user's first and latest requests are carried verbatim, whatever the model wrote.

The demo agent (supervisor/cli/demo_agent.py --more) compacts on /compact and waits for the
context at its prompt, as the real agents do; it echoes what is typed like a terminal
does. Offline (the heuristic), and with the fake cheap model paraphrasing or garbling.
"""

import json
import os
import re

import pexpect
import pytest

from conftest import SUPERVISE
from fakeapi import FakeAnthropic
from helpers import demo_agent, latest, session, wait_for
from supervisor.cli.demo_agent import REQUEST
from supervisor.store.database import Store

TURNS = [
    "turn 2: rename the total column in src/totals.py",
    "turn 3: add a --csv flag beside --json in src/export_csv.py",
    "turn 4: make the tests in tests/test_csv.py cover empty reports",
]
PROMPT_ONLY = ("[supervise]", "You are continuing earlier work", "Continue from the current task")  # a digest has none of them
OURS = (*PROMPT_ONLY, "Original request (verbatim)")


def run_chained(env: dict, cols: int = 120) -> str:
    """A demo session: the scripted compaction, then per turn: the user types it, then
    /compact; each time the agent must get its context back. Returns the session id."""
    argv = ["run", "--agent", "demo", "--inject", "type", "--", *demo_agent()]
    child = pexpect.spawn(SUPERVISE[0], argv, env={**env, "TERM": "xterm-256color"}, encoding="utf-8", timeout=60, dimensions=(40, cols))
    try:
        child.expect_exact("demo: done: --json added and tested.")
        store = Store.open_default()
        sid = latest()["id"]
        for i, turn in enumerate(TURNS):
            child.expect_exact("demo› ")
            child.send(turn + "\r")
            child.expect_exact("all tests passed")
            child.expect_exact("demo› ")
            child.send("/compact\r")
            child.expect(r"demo: my task: ([^\r\n]*)")
            assert child.match.group(1) == REQUEST, f"after compaction {i + 2} the agent's task was {child.match.group(1)!r}"
            # the round given back names this turn as the user's latest request, verbatim
            given = wait_for(
                lambda: (lambda g: g if len(g) >= i + 2 else None)([e for e in store.events(sid) if e["kind"] == "injection"]), 15
            )
            row = store.contexts(sid)[given[-1]["detail"]["round"] - 1]
            assert row["context"]["latest_request"] == turn, row["context"]
        child.expect_exact("demo› ")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return sid


def assert_no_echo(sid: str) -> list[dict]:
    s = session(sid)
    rows = Store.open_default().contexts(sid)
    assert len(rows) >= 4, [r["trigger"] for r in rows]
    for row in rows:
        ctx = row["context"]
        assert ctx["original_request"] == REQUEST, (row["round"], ctx)
        assert ctx["latest_request"] in [REQUEST, *TURNS], (row["round"], ctx)
        assert ctx["current_task"], (row["round"], ctx)
        text = json.dumps(ctx, ensure_ascii=False)
        for words in OURS:
            assert words not in text, f"round {row['round']} reads back supervise's own words ({words!r}): {ctx}"
        # the prompt holds exactly one copy of the template, its own
        assert row["prompt"].count("You are continuing earlier work") == 1
    assert rows[-1]["context"]["latest_request"] == TURNS[-1]
    kinds = [e["kind"] for e in s["events"]]
    assert kinds.count("compaction_started") == 1 + len(TURNS), kinds
    assert kinds.count("compaction_finished") == 1 + len(TURNS), kinds
    # (the demo's own captions, which say "context", are unrecognized lines; our echo is not)
    echoed = [e for e in s["events"] if e["kind"] == "unrecognized" and any(w in e["detail"]["text"] for w in OURS)]
    assert not echoed, f"supervise's typed context was taken for a compaction-like line: {echoed}"
    injections = [e["detail"] for e in s["events"] if e["kind"] == "injection"]
    assert len(injections) == 1 + len(TURNS) and all(d["confirmed"] for d in injections), injections
    return rows


def offline_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}


@pytest.mark.parametrize("cols", [120, 60])
@pytest.mark.slow
def test_three_more_compactions_offline_never_read_back_our_words(cols):
    """At 60 columns the typed context wraps over many rows: every row of it is ours."""
    sid = run_chained(offline_env(), cols)
    rows = assert_no_echo(sid)
    assert {r["source"] for r in rows} == {"heuristic"}


def _digest(request) -> str:
    return request.last_user_text()


def paraphrasing(request) -> dict:
    """A model that rewords the user: the stored context must keep their words."""
    return {
        "tool_use": {
            "name": "record_session_context",
            "input": {
                "original_request": "Make the report command able to output JSON",
                "current_task": "Working on what the user asked last",
                "completed_steps": ["the JSON flag"],
                "pending_steps": [],
                "key_decisions": [],
                "relevant_files": sorted(set(re.findall(r"src/\w+\.py", _digest(request)))),
                "errors_and_resolutions": [],
            },
        }
    }


def garbling(request) -> dict:
    """A model that copies the wrong lines: the previous context's JSON as the request, the
    last prompt-like line of the digest as the task, every line with a bracket as an error.
    Given an echo of our own prompt, it would store it."""
    digest = _digest(request)
    prompt_lines = [line for line in digest.splitlines() if "demo›" in line or line.startswith("User:")]
    return {
        "tool_use": {
            "name": "record_session_context",
            "input": {
                "original_request": '"original_request": ' + json.dumps(digest.split("## Session digest")[0][-300:]),
                "current_task": prompt_lines[-1] if prompt_lines else "(none)",
                "completed_steps": [line for line in digest.splitlines() if line.startswith("●")][-10:],
                "pending_steps": [],
                "key_decisions": [],
                "relevant_files": [],
                "errors_and_resolutions": [line for line in digest.splitlines() if "[" in line][-10:],
            },
        }
    }


@pytest.mark.parametrize("model", [paraphrasing, garbling])
@pytest.mark.slow
def test_three_more_compactions_with_the_cheap_model(model):
    with FakeAnthropic() as api:
        api.add(model, match=lambda r: (r.body.get("tool_choice") or {}).get("name") == "record_session_context", times=None)
        env = {**offline_env(), "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": api.url}
        sid = run_chained(env)
        sent = [r for r in api.messages() if r.body.get("tools")]
    rows = assert_no_echo(sid)
    assert {r["source"] for r in rows} == {"model"}, [(r["source"], r["error"]) for r in rows]
    assert len(sent) >= len(rows)
    for r in sent:  # the model never read our prompt as the session's
        digest = r.last_user_text().split("## Session digest", 1)[1]
        for words in PROMPT_ONLY:
            assert words not in digest, f"the model was sent supervise's own words ({words!r}) as the session's"
