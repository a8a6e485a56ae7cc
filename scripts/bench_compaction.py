#!/usr/bin/env python3
"""The agent's compaction on a long scripted session, four ways side by side: total input
tokens sent (summary calls included) with no compaction (what it would have sent, past the
limit too), masking only, summaries only, and both; requests over the limit; the share of
the planted facts (the original request, every file path read) still in the final context;
and the summary calls' share of the tokens.

The model is the fake Anthropic API (tests/fakeapi.py) scripted as in
tests/test_agent_compaction.py: each step reads a large file at a new path, then answers;
a summary call returns every section and the paths it was shown.
Usage: scripts/bench_compaction.py [--steps 300] [--limit 20000] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import test_agent_compaction as scripted  # noqa: E402
from fakeapi import FakeAnthropic  # noqa: E402
from supervisor.agent.conversation import Conversation  # noqa: E402
from supervisor.agent.loop import Agent  # noqa: E402
from supervisor.agent.model import DEFAULT_AGENT_MODEL, Model  # noqa: E402
from supervisor.store.database import Store  # noqa: E402

MODES = {
    "none": ((), "off"),
    "masking only": (("mask",), "auto"),
    "summary only": (("summary",), "auto"),
    "both": (("mask", "summary"), "auto"),
}


def run(mode: str, steps: int, limit: int) -> dict:
    layers, compaction = MODES[mode]
    tmp = Path(tempfile.mkdtemp(prefix="bench-compaction-"))
    (tmp / "ws" / "src").mkdir(parents=True)
    store = Store(tmp / "s.db")
    s = store.create_session(command="agent", argv=["agent"], cwd=str(tmp))
    with FakeAnthropic() as api:
        api.ws = tmp / "ws"
        scripted.long_session(api, steps)
        model = Model(DEFAULT_AGENT_MODEL, api.url, "test-key", None, max_tokens=2000)
        agent = Agent(
            Conversation(store, s["id"]),
            model,
            None,
            tmp / "ws",
            write=lambda text: None,
            max_steps=steps + 5,
            context_limit=limit,
            compaction=compaction,
            layers=layers,
        )
        agent.run(scripted.REQUEST)
        requests = api.messages()
    sizes = [scripted.request_tokens(r) for r in requests]
    summary_tokens = sum(size for size, r in zip(sizes, requests) if not r.has_tools)
    final = json.dumps(agent.conversation.for_api())
    facts = [scripted.REQUEST] + [f"src/mod_{n}.py" for n in range(1, steps)]
    store.close()
    shutil.rmtree(tmp, ignore_errors=True)  # the session database (15 MB at 100 steps) would pile up in /tmp
    return {
        "total": sum(sizes),
        "over": sum(size > limit for size in sizes),
        "summary_share": summary_tokens / max(1, sum(sizes)),
        "recall": sum(f.replace("\n", "\\n") in final for f in facts) / len(facts),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--limit", type=int, default=20_000)
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    results = {mode: run(mode, args.steps, args.limit) for mode in MODES}
    base = results["none"]["total"]
    print(f"{args.steps} steps, a {args.limit:,}-token window; input tokens summed over every request (summary calls included)")
    print("| compaction | input tokens | vs none | requests over the limit | facts in the final context | summary calls' share |")
    print("| --- | --- | --- | --- | --- | --- |")
    for mode, r in results.items():
        print(f"| {mode} | {r['total']:,} | {r['total'] / base:.2f}x | {r['over']} | {r['recall']:.0%} | {r['summary_share']:.1%} |")
    if args.json:
        print(
            json.dumps(
                {
                    "steps": args.steps,
                    "limit": args.limit,
                    "modes": {mode: {**r, "vs_none": r["total"] / base} for mode, r in results.items()},
                }
            )
        )


if __name__ == "__main__":
    main()
