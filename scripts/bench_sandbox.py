#!/usr/bin/env python3
"""Sandbox and agent overhead, side by side in one run.

Per tool call (a trivial command, `echo hi`, N times): a plain subprocess on the host,
`docker exec` from the shell, the sandbox's exec through the Docker SDK (supervise's), and
the whole execute_command tool (exec + capping). Then the agent's own cost per step with
the model taken out (a model that answers at once): persisting the assistant message and
each tool result, building the next request, running a host-side tool.

Needs a Docker engine and the local image (scripts/docker-up).
Usage: scripts/bench_sandbox.py [--calls 50] [--steps 200] [--image IMAGE] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from supervisor.agent import sandbox, tools  # noqa: E402
from supervisor.agent.conversation import Conversation  # noqa: E402
from supervisor.agent.loop import Agent  # noqa: E402
from supervisor.agent.model import Step  # noqa: E402
from supervisor.store.database import Store  # noqa: E402


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


class InstantModel:
    """Answers at once: a tool call on odd steps, text on even ones."""

    name = "instant"

    def __init__(self):
        self.n = 0

    def step(self, system, tool_defs, messages, on_text):
        self.n += 1
        if self.n % 2:
            return Step(
                [{"type": "tool_use", "id": f"t{self.n}", "name": "list_directory", "input": {}}],
                {"input_tokens": 100, "output_tokens": 10},
                "tool_use",
            )
        return Step([{"type": "text", "text": "done"}], {"input_tokens": 120, "output_tokens": 5}, "end_turn")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--image", default="supervise-sandbox-test:latest")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        client = sandbox.connect()
        box = sandbox.Sandbox.start("bench", ws, "bench", args.image, network="none", client=client)
        try:
            rows = [
                ("plain subprocess (host)", timed(lambda: subprocess.run(["sh", "-c", "echo hi"], capture_output=True), args.calls)),
                (
                    "docker exec (CLI)",
                    timed(
                        lambda: subprocess.run(["docker", "exec", box.container.id, "sh", "-c", "echo hi"], capture_output=True), args.calls
                    ),
                ),
                ("Sandbox.exec (SDK)", timed(lambda: box.exec("echo hi", 10), args.calls)),
                ("execute_command tool", timed(lambda: tools.execute_command(box, "echo hi", 10), args.calls)),
            ]
        finally:
            box.close()
        base = statistics.median(rows[1][1])
        print(f"## per tool call, {args.calls} calls of `echo hi`")
        print(f"{'case':<26} {'p50 ms':>8} {'mean ms':>8} {'vs docker exec':>15}")
        for name, ms in rows:
            print(f"{name:<26} {statistics.median(ms):>8.1f} {statistics.mean(ms):>8.1f} {statistics.median(ms) / base:>14.2f}x")

        store = Store(Path(tmp) / "s.db")
        s = store.create_session(command="agent", argv=["agent"], cwd=tmp)
        agent = Agent(Conversation(store, s["id"]), InstantModel(), None, ws, write=lambda text: None, max_steps=args.steps)
        tasks = args.steps // 2
        t = time.perf_counter()
        for i in range(tasks):
            agent.run(f"task {i}")
        per_step = (time.perf_counter() - t) * 1000 / (tasks * 2)
        print(
            f"\n## the agent's own cost per step, the model taken out ({tasks * 2} steps, conversation growing to {len(agent.conversation.messages)} messages)"
        )
        print(f"{per_step:.2f} ms per step (persisting, building the request, a host-side tool)")
        if args.json:
            print(
                json.dumps(
                    {
                        "calls": args.calls,
                        "image": args.image,
                        "per_call": {
                            name: {
                                "p50_ms": statistics.median(ms),
                                "mean_ms": statistics.mean(ms),
                                "vs_docker_exec": statistics.median(ms) / base,
                            }
                            for name, ms in rows
                        },
                        "agent_steps": tasks * 2,
                        "agent_messages": len(agent.conversation.messages),
                        "agent_step_ms": per_step,
                    }
                )
            )


if __name__ == "__main__":
    main()
