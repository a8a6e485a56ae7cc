"""Two-layer compaction of `supervise agent`, first layer: masking old tool outputs. The
agent's loop in-process, the real SDK, and the fake Anthropic API scripted for a long
session with a small context window."""

import json
import re

import pytest

from fakeapi import FakeAnthropic
from supervisor.agent.budget import Budget
from supervisor.agent.conversation import Conversation
from supervisor.agent.loop import Agent
from supervisor.agent.model import DEFAULT_AGENT_MODEL, Model
from supervisor.contexts.digest import estimate_tokens
from supervisor.store import Store

LIMIT = 30_000
BIG = "".join(f"line {i}: the build log says module_{i} compiled in {i % 7} ms\n" for i in range(700))  # ~48 KB


def request_tokens(r) -> int:
    body = r.body
    return estimate_tokens(json.dumps(body["messages"])) + estimate_tokens(json.dumps(body.get("tools", []))) + estimate_tokens(str(body.get("system", "")))


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
                return {"text": f"reading the log, pass {n}", "tool_use": {"name": "read_file", "input": {"path": "big.log", "start_line": 1, "end_line": 120}}}
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
    events = [json.loads(r[0]) for r in store.db.execute("select detail from events where session_id = ? and kind = 'agent_compaction'", [sid])]
    assert events and all(e["layer"] == "mask" and e["after"] < e["before"] for e in events)


def test_the_amounts_scale_with_the_window():
    small, big = Budget(32_000, 4_000, 1_000), Budget(200_000, 8_192, 1_000)
    assert small.protect == small.usable // 4 < 40_000 and small.min_prune == small.usable // 8
    assert big.protect == 40_000 and big.min_prune == 20_000
    assert small.target == int(small.usable * 0.8)
