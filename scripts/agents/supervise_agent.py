#!/usr/bin/env python3
"""Record fixtures of supervise's own agent: tests/fixtures/supervise-agent/VERSION/NAME.cast.gz.

    python scripts/agents/supervise_agent.py            # this checkout's version, every scenario

The agent program (`python -m supervisor.agent`, as `supervise agent` starts it) runs
under supervise in a real PTY against the fake Anthropic API, with the local sandbox image
(scripts/docker-up) and no network; it is driven as a person would.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, main, recording, wanted  # noqa: E402

from fakeapi import FakeAnthropic  # noqa: E402  (tests/ is on the path via common)

IMAGE = "supervise-sandbox-test:latest"


def version() -> str:
    sys.path.insert(0, str(ROOT))
    from supervisor import __version__

    return __version__


def agent_argv(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-P", "-m", "supervisor.agent", "--image", IMAGE, "--network", "none", "--workspace", str(ws), *args]


def record(version: str, out: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="rec-agent-"))
    with FakeAnthropic() as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
        env.update(ANTHROPIC_API_KEY="fake", ANTHROPIC_BASE_URL=api.url, TERM="xterm-256color", PYTHONPATH=str(ROOT))
        if wanted("task"):
            ws = base / "task"
            ws.mkdir()
            api.add(
                {
                    "text": "I will write the script and run it.",
                    "tool_uses": [
                        {"name": "write_file", "input": {"path": "hello.py", "content": "print('hello')\n"}},
                        {"name": "execute_command", "input": {"command": "cat hello.py; ls"}},
                    ],
                }
            )
            # a step whose context nearly fills the window: the footer says how little is left
            api.add({"text": "Done: hello.py is written.", "usage": {"input_tokens": 188_000, "output_tokens": 20}})
            task = "write hello.py and show it\nkeep it to one line"
            with recording("task", agent_argv(ws, "-p", "--", task), env, ws, out) as screen:
                screen.wait(r"Done: hello.py is written", 60)
        if wanted("compact"):
            ws = base / "compact"
            ws.mkdir()
            (ws / "build.log").write_text("".join(f"line {i}: module_{i} compiled\n" for i in range(2000)))
            for n in range(14):  # large outputs in a small window: old ones get masked
                api.add(
                    {
                        "text": f"pass {n}",
                        "tool_use": {"name": "read_file", "input": {"path": "build.log", "start_line": 1, "end_line": 300}},
                    }
                )
            api.add({"text": "All passes read."})
            with recording(
                "compact", agent_argv(ws, "--context-limit", "24000", "-p", "--", "read the build log again and again"), env, ws, out
            ) as screen:
                screen.wait(r"All passes read\.", 90)
        if wanted("confirm"):
            ws = base / "confirm"
            ws.mkdir()
            api.add({"tool_use": {"name": "execute_command", "input": {"command": "touch made.txt"}}})
            api.add({"text": "Made it."})
            with recording("confirm", agent_argv(ws, "--confirm", "--"), env, ws, out) as screen:
                screen.wait(r"agent›", 60)
                screen.type("make a file")
                screen.wait(r"Run this command\? \[y/N\]", 60)
                screen.type("y")
                screen.wait(r"Made it\.", 60)
                screen.wait(r"Made it\.\n.*\nagent›", 30)
                screen.type("/exit")


if __name__ == "__main__":
    main(record, version, "supervise-agent")
