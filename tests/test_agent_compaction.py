"""Two-layer compaction of `supervise agent`, first layer: masking old tool outputs. The
agent's loop in-process, the real SDK, and the fake Anthropic API scripted for a long
session with a small context window."""

import json
import os
import re
import signal

import pytest

from fakeapi import FakeAnthropic
from supervisor.agent.budget import Budget
from supervisor.agent.conversation import Conversation
from supervisor.agent.loop import Agent
from supervisor.agent.model import DEFAULT_AGENT_MODEL, Cancelled, Model
from supervisor.contexts.digest import estimate_tokens
from supervisor.store.database import Store

LIMIT = 30_000
BIG = "".join(f"line {i}: the build log says module_{i} compiled in {i % 7} ms\n" for i in range(700))  # ~48 KB


def request_tokens(r) -> int:
    body = r.body
    return (
        estimate_tokens(json.dumps(body["messages"]))
        + estimate_tokens(json.dumps(body.get("tools", [])))
        + estimate_tokens(str(body.get("system", "")))
    )


def tool_pairs_intact(messages) -> bool:
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        calls = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        if calls:
            answered = [b["tool_use_id"] for b in messages[i + 1]["content"] if b["type"] == "tool_result"] if i + 1 < len(messages) else []
            if answered != calls:
                return False
    return True


@pytest.fixture
def agent_with(tmp_path):
    def make(api, limit=LIMIT, steps=200):
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "big.log").write_text(BIG)
        store = Store(tmp_path / "s.db")
        s = store.create_session(command="agent", argv=["agent"], cwd=str(tmp_path))
        model = Model(DEFAULT_AGENT_MODEL, api.url, "test-key", None, max_tokens=2000)
        out = []
        agent = Agent(Conversation(store, s["id"]), model, None, tmp_path / "ws", write=out.append, max_steps=steps, context_limit=limit)
        return agent, out, store, s["id"]

    return make


def test_a_long_session_never_exceeds_the_window_and_old_outputs_are_masked_and_recallable(agent_with):
    with FakeAnthropic() as api:
        state = {"n": 0}

        def script(req):
            state["n"] += 1
            n = state["n"]
            if n == 45:  # late in the session, the model wants an early output back
                handle = int(re.search(r"recall_output\(handle=(\d+)\)", json.dumps(req.body["messages"])).group(1))
                return {"tool_use": {"name": "recall_output", "input": {"handle": handle}}}
            if n < 50:
                return {
                    "text": f"reading the log, pass {n}",
                    "tool_use": {"name": "read_file", "input": {"path": "big.log", "start_line": 1, "end_line": 120}},
                }
            return {"text": "All passes done."}

        api.default = script
        agent, out, store, sid = agent_with(api)
        assert agent.run("read the build log fifty times") == "done"
        requests = api.messages()
    sizes = [request_tokens(r) for r in requests]
    assert max(sizes) < LIMIT, max(sizes)
    assert all(tool_pairs_intact(r.body["messages"]) for r in requests)
    text = "".join(out)
    assert "⟳ Compacting context" in text and re.search(r"✓ Context compacted: (\d+) → (\d+) tokens", text)
    before, after = (int(x) for x in re.search(r"✓ Context compacted: (\d+) → (\d+) tokens", text).groups())
    assert after < before
    pruned = store.db.execute("select count(*) from messages where session_id = ? and pruned = 1", [sid]).fetchone()[0]
    assert pruned > 0
    # the recalled output came back whole
    recalled = requests[45].body["messages"][-1]["content"][0]["content"]
    assert recalled.startswith("line 0: the build log") and "line 119:" in recalled
    # the newest outputs were never masked
    last = requests[-1].body["messages"]
    assert "[output pruned" not in json.dumps(last[-1]) and "[output pruned" not in json.dumps(last[-3])
    events = [
        json.loads(r[0]) for r in store.db.execute("select detail from events where session_id = ? and kind = 'agent_compaction'", [sid])
    ]
    assert events and all(e["layer"] == "mask" for e in events)  # masking was enough: no summary


def test_the_amounts_scale_with_the_window():
    small, big = Budget(32_000, 4_000, 1_000), Budget(200_000, 8_192, 1_000)
    assert small.protect == small.usable // 4 < 40_000 and small.min_prune == small.usable // 8
    assert big.protect == 40_000 and big.min_prune == 20_000
    assert small.target == int(small.usable * 0.8)


REQUEST = "Port the config loader to TOML.\nKeep the public API; do not touch src/cli.py."
SECTIONS = [
    "Original request",
    "Constraints and preferences",
    "Completed work",
    "Key decisions",
    "Current state",
    "Pending",
    "Errors and fixes",
    "Next step",
]


def fake_summary(req, grow=False):
    """A summary as a model would write it: every section, the paths it read about."""
    text = req.last_user_text()
    paths = sorted(set(re.findall(r"src/[a-z_0-9]+\.py", text)))
    body = "\n".join(f"## {s}\n- {'; '.join(paths) if s == 'Completed work' else 'as before'}" for s in SECTIONS)
    return {"text": body + ("\n" + "padding " * 40_000 if grow else "")}


def long_session(api, steps, grow_summary=False):
    """The model reads a large file per step (a planted path in each), then answers."""
    state = {"n": 0, "summaries": 0}

    def script(req):
        if not req.has_tools:  # the compaction's summary call
            state["summaries"] += 1
            return fake_summary(req, grow_summary)
        state["n"] += 1
        n = state["n"]
        if n < steps:
            (api.ws / f"src/mod_{n}.py").write_text(BIG)
            return {
                "text": f"step {n}: reading src/mod_{n}.py",
                "tool_use": {"name": "read_file", "input": {"path": f"src/mod_{n}.py", "start_line": 1, "end_line": 150}},
            }
        return {"text": "Ported."}

    api.default = script
    return state


def run_long(agent_with, steps, limit=20_000, grow_summary=False):
    with FakeAnthropic() as api:
        agent, out, store, sid = agent_with(api, limit=limit, steps=steps + 5)
        api.ws = agent.workspace
        (api.ws / "src").mkdir()
        state = long_session(api, steps, grow_summary)
        result = agent.run(REQUEST)
        requests = api.messages()
    events = [
        json.loads(r[0])
        for r in store.db.execute("select detail from events where session_id = ? and kind = 'agent_compaction' order by id", [sid])
    ]
    return result, requests, events, "".join(out), state, agent


def test_hundreds_of_steps_stay_under_the_limit_masking_first_summaries_chained_and_the_request_kept(agent_with):
    result, requests, events, out, state, agent = run_long(agent_with, 300)
    assert result == "done"
    turns = [r for r in requests if r.has_tools]
    summaries = [r for r in requests if not r.has_tools]
    assert len(turns) == 300 and state["summaries"] >= 2
    assert max(request_tokens(r) for r in requests) < 20_000
    assert all(tool_pairs_intact(r.body["messages"]) for r in turns)
    layers = [e["layer"] for e in events]
    assert layers[0] == "mask" and "summary" in layers  # pruning comes before summaries
    # rounds chain: every summary after the first reads the previous one
    assert all("## Previous summary" in r.last_user_text() for r in summaries[1:])
    # every summary carries the original request verbatim, put there by the agent
    stored = [e["summary"] for e in events if e["layer"] == "summary"]
    assert stored and all(f"## Original request\n{REQUEST}\n" in s for s in stored)
    # after a pivot the next request is the summary and the kept messages, nothing older
    last = turns[-1].body["messages"]
    assert last[0]["content"][0]["text"].startswith("[The conversation so far was compacted")
    assert REQUEST in last[0]["content"][0]["text"] and "src/mod_1.py" not in json.dumps(last[1:])
    # the facts of early steps survive every round: the paths read, in the final summary
    final = agent.conversation.latest_summary()
    assert all(f"src/mod_{n}.py" in final for n in (1, 50, 150, 250))


def test_a_summary_that_would_not_shrink_the_context_is_refused_and_escalation_follows(agent_with):
    result, requests, events, out, state, agent = run_long(agent_with, 60, grow_summary=True)
    assert result == "done"
    assert agent.refused >= 1 and "refused" in out
    kinds = ["summary" if not r.has_tools else "turn" for r in requests]
    assert "summary" in kinds
    assert not any(a == b == "summary" for a, b in zip(kinds, kinds[1:]))  # never two summary calls in a row
    assert max(request_tokens(r) for r in requests) < 20_000
    assert {e["layer"] for e in events} & {"mask-harder", "drop"}


def test_prompt_too_long_from_the_api_corrects_the_estimate_compacts_and_retries(agent_with):
    with FakeAnthropic() as api:
        agent, out, store, sid = agent_with(api, limit=200_000, steps=20)
        api.ws = agent.workspace
        (api.ws / "src").mkdir()
        long_session(api, 8)
        api.add(
            {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"},
            match=lambda r: r.has_tools and "step 6" in json.dumps(r.body["messages"]),
        )
        assert agent.run(REQUEST) == "done"
        requests = api.messages()
    text = "".join(out)
    assert "✗ Context overflow: prompt is too long: 250000 tokens > 200000 maximum" in text
    assert agent.correction > 1.0  # the estimate now believes the API's count
    assert any(not r.has_tools for r in requests)  # it compacted (a summary) before retrying
    rows = store.db.execute("select count(*) from messages where session_id = ?", [sid]).fetchone()[0]
    assert rows >= 2 * 8  # nothing was deleted


@pytest.mark.parametrize("earlier_turn", [True, False])
def test_ctrl_c_the_moment_a_compaction_is_announced_abandons_it_and_never_quits(agent_with, earlier_turn):
    """Ctrl-C answered to "Compacting context" (the signal lands as the line is written, before
    anything else runs) abandons the compaction, whether or not a turn ran before `/compact`."""
    before = signal.getsignal(signal.SIGINT)
    try:
        with FakeAnthropic() as api:
            api.add({"text": "First answer."})
            agent, out, store, sid = agent_with(api, limit=200_000, steps=5)
            if earlier_turn:
                assert agent.run("first task") == "done"
            rows = store.db.execute("select count(*) from messages where session_id = ?", [sid]).fetchone()[0]

            def write(text):
                out.append(text)
                if "Compacting context" in text:
                    os.kill(os.getpid(), signal.SIGINT)

            agent.write = write
            with pytest.raises(Cancelled):
                agent.compact_now()
            assert not [r for r in api.messages() if not r.has_tools]  # no summary was asked for
        assert store.db.execute("select count(*) from messages where session_id = ?", [sid]).fetchone()[0] == rows
        assert agent.state == "idle"
    finally:
        signal.signal(signal.SIGINT, before)
