#!/usr/bin/env python3
"""Idle cost: CPU used while an agent sits at its prompt, bare and under supervise.

For each agent (the real Claude Code against the fake Anthropic API, after a few turns so
its transcript exists, the hook server is up and injection is armed; the scripted toy agent;
a plain shell), start it under a real PTY, drive it to its idle prompt, then count the CPU
time (user + system, from /proc) of every process over --seconds: the agent alone when
bare; supervise's own processes (the PTY loop and the recorder) and the agent under
supervise. Prints a table; the target for supervise's processes is < 0.5% of a core. Each
agent runs under supervise twice: as it is by default, and with OTLP export on (to a receiver
in this process that decodes what it gets, metrics every 5 s): the two within noise.

Usage: scripts/bench_idle.py [--seconds 30] [--only claude|toy|shell ...] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from agentdriver import CLAUDE_IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env  # noqa: E402
from fakeapi import FakeAnthropic  # noqa: E402
from procs import cpu_seconds, descendants, is_recorder  # noqa: E402


def measure(screen: Screen, seconds: float, supervised: bool) -> tuple[float, float]:
    """(% of a core used by supervise's processes, by the agent's) over `seconds`."""
    root = screen.child.pid
    pids = descendants(root)
    ours = [p for p in pids if supervised and (p == root or is_recorder(p))]
    theirs = [p for p in pids if p not in ours]
    before = {p: cpu_seconds(p) for p in pids}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # keep reading the screen, as a terminal would
        screen.pump(0.5)
    used = {p: cpu_seconds(p) - before[p] for p in pids}

    def pct(group):
        return 100 * sum(used[p] for p in group) / seconds

    return pct(ours), pct(theirs)


def idle_cost(
    agent_argv: list[str], options: list[str], env: dict, cwd: Path, drive, seconds: float, supervised: bool
) -> tuple[float, float]:
    """Start the agent (under supervise with `options`, or bare), drive it to idle, measure."""
    env = {**env, **EXPORT} if supervised == "export" else env
    if supervised:
        screen = Screen([*options, "--", *agent_argv], env, cwd)
    else:
        screen = Screen(agent_argv[1:], env, cwd, supervise=agent_argv[:1])
    try:
        drive(screen)
        time.sleep(2.0)  # let it settle
        return measure(screen, seconds, supervised)
    finally:
        for key in ("c", "c", "d"):
            screen.child.sendcontrol(key)
            time.sleep(0.3)
        screen.close()


def claude(base: Path, supervised: bool, seconds: float) -> tuple[float, float]:
    project = base / "work"
    project.mkdir(parents=True)
    with FakeAnthropic() as api:
        env = claude_env(base / "claude-home", project, api.url)
        env["SUPERVISE_HOME"] = str(base / "sv")

        def drive(screen):
            screen.wait(CLAUDE_IDLE, 60)
            for i in range(1, 4):
                screen.type(f"turn {i}: please say hello")
                screen.wait(rf"Reply to: turn {i}", 60)
                screen.wait(CLAUDE_IDLE, 60)

        return idle_cost([claude_bin(), "--model", CLAUDE_MODEL], [], env, project, drive, seconds, supervised)


def toy(base: Path, supervised: bool, seconds: float) -> tuple[float, float]:
    base.mkdir(parents=True)
    argv = [sys.executable, str(ROOT / "tests" / "agents" / "toyagent.py"), "--log", str(base / "toy.jsonl"), "--paste"]
    options = ["--agent", "toy", "--patterns", str(ROOT / "tests" / "agents" / "toy.toml")]

    def drive(screen):
        screen.wait("toy: ready", 20)
        screen.type("hello there")
        screen.wait("reply to: hello there", 20)

    return idle_cost(argv, options, {**os.environ, "SUPERVISE_HOME": str(base / "sv")}, base, drive, seconds, supervised)


def shell(base: Path, supervised: bool, seconds: float) -> tuple[float, float]:
    base.mkdir(parents=True)
    env = {**os.environ, "PS1": "$ ", "HISTFILE": "/dev/null", "SUPERVISE_HOME": str(base / "sv")}

    def drive(screen):
        screen.type("echo rea''dy")
        screen.wait("ready", 10)

    return idle_cost(["bash", "--norc", "--noprofile"], [], env, base, drive, seconds, supervised)


AGENTS = {"claude": claude, "toy": toy, "shell": shell}
EXPORT: dict[str, str] = {}  # the variables that turn OTLP export on, to this run's receiver
MODES = (False, True, "export")  # bare, under supervise, under supervise exporting


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--only", choices=list(AGENTS), action="append")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    rows = []
    receiver = None
    try:
        from otlpreceiver import exporting

        on, receiver = exporting({})
        EXPORT.update(on)
    except ImportError:
        print("(no OTLP receiver here: opentelemetry-proto is not installed; no export rows)", file=sys.stderr)
    try:
        for agent in args.only or list(AGENTS):
            for supervised in MODES if receiver else MODES[:2]:
                ours, theirs = AGENTS[agent](base / f"{agent}-{supervised}", supervised, args.seconds)
                rows.append((agent, supervised, ours, theirs))
                said = {False: "bare", True: "supervise", "export": "exporting"}[supervised]
                print(f"{agent:<8} {said:<10} supervise {ours:6.2f}%   agent {theirs:6.2f}%", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        if receiver is not None:
            receiver.stop()
    print(f"\nidle CPU over {args.seconds:g} s, % of one core; target for supervise's processes < 0.5%")
    print("| agent | agent bare | agent under supervise | supervise's processes | ... with OTLP export on |")
    print("| --- | --- | --- | --- | --- |")
    by = {(a, s): (o, t) for a, s, o, t in rows}
    for agent in dict.fromkeys(a for a, *_ in rows):
        bare = by.get((agent, False), (0, float("nan")))[1]
        ours, theirs = by.get((agent, True), (float("nan"), float("nan")))
        exporting = by.get((agent, "export"), (float("nan"), 0))[0]
        print(f"| {agent} | {bare:.2f}% | {theirs:.2f}% | {ours:.2f}% | {exporting:.2f}% |")
    if args.json:
        results = {"seconds": args.seconds, "agents": {}}
        for agent in dict.fromkeys(a for a, *_ in rows):
            bare = by.get((agent, False), (None, None))[1]
            ours, theirs = by.get((agent, True), (None, None))
            exporting = by.get((agent, "export"), (None, None))[0]
            results["agents"][agent] = {
                "agent_bare_pct": bare,
                "agent_supervised_pct": theirs,
                "supervise_pct": ours,
                "supervise_exporting_pct": exporting,
            }
        if "claude" in results["agents"]:
            version = subprocess.run([claude_bin(), "--version"], capture_output=True, text=True).stdout.split()
            results["agents"]["claude"]["version"] = version[0] if version else None
        print(json.dumps(results))


if __name__ == "__main__":
    main()
