#!/usr/bin/env python3
"""The commands people run in loops and prompts: how long each takes, from a new process.

Starts --sessions real supervised sessions (the demo agent, each in its own PTY, idle at its
prompt after its scripted turns) in a private SUPERVISE_HOME whose database also holds
--history finished sessions with their events, then times, side by side in one run, each
command as a user runs it (a new process each time, start-up included): `supervise version`
(the command line's start-up alone: `--version` skips it), `supervise ps --json` and `supervise sessions` while they run;
then, once they have exited, `show`, `context` and `export` of one of them (a small session,
with its context rounds). Prints the median of --runs of each and its ratio to start-up;
the target is < 150 ms for each.

Usage: scripts/bench_ps.py [--sessions 20] [--history 2000] [--runs 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

# the supervise of the environment measured (the one beside this Python), else the PATH's
BESIDE = Path(sys.executable).parent / "supervise"
SUPERVISE = str(BESIDE) if BESIDE.exists() else shutil.which("supervise") or str(BESIDE)


def fill_history(home: Path, count: int) -> None:
    """`count` finished sessions, ten events each, as a long-used database holds."""
    os.environ["SUPERVISE_HOME"] = str(home)
    from supervisor.store.database import COMPLETED, Event, Store, utcnow

    store = Store.open_default()
    try:
        for i in range(count):
            s = store.create_session(command=f"claude turn {i}", argv=["claude"], agent="claude", cwd="/tmp", pid=0)
            for k in range(10):
                store.add_event(s["id"], Event("idle_prompt", {"row": k}, float(k), utcnow()))
            store.finish_session(s["id"], COMPLETED, 0)
    finally:
        store.close()


def start_sessions(n: int, env: dict) -> list[pexpect.spawn]:
    agent = [sys.executable, "-P", "-m", "supervisor.cli.demo_agent", "--more"]
    children = []
    for _ in range(n):
        children.append(
            pexpect.spawn(
                SUPERVISE,
                ["run", "--agent", "demo", "--", *agent],
                env=env,
                encoding="utf-8",
                codec_errors="replace",
                timeout=120,
                dimensions=(40, 120),
            )
        )
    for c in children:
        c.expect_exact("demo: done: --json added and tested.")
        c.expect_exact("demo› ")
    return children


def timed(args: list[str], env: dict, runs: int) -> tuple[float, str]:
    """The median wall time of `supervise ARGS` (ms), and its last output."""
    times, out = [], ""
    for _ in range(runs):
        began = time.perf_counter()
        p = subprocess.run([SUPERVISE, *args], env=env, capture_output=True, text=True, check=True)
        times.append((time.perf_counter() - began) * 1000)
        out = p.stdout
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--history", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-ps-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_"))}
    env.update(SUPERVISE_HOME=str(base / "home"), TERM="xterm-256color")
    children = []
    try:
        fill_history(base / "home", args.history)
        children = start_sessions(args.sessions, env)
        startup, _ = timed(["version"], env, args.runs)
        ps, out = timed(["ps", "--json"], env, args.runs)
        running = len(json.loads(out))
        listing, _ = timed(["sessions"], env, args.runs)
        stop(children)
        children = []
        sid = json.loads(subprocess.run([SUPERVISE, "sessions", "--json", "-n", "1"], env=env, capture_output=True, text=True).stdout)[0][
            "id"
        ]
        each = {f"{command} ID": timed([command, sid], env, args.runs)[0] for command in ("show", "context", "export")}
        print(f"{running} sessions running, {args.history} finished; median of {args.runs} runs, each a new process (target < 150 ms):")
        print(f"  supervise version          {startup:7.1f} ms (start-up alone)")
        for name, figure in {"ps --json": ps, "sessions": listing, **each}.items():
            print(f"  supervise {name:<16} {figure:7.1f} ms ({figure / startup:.2f}x start-up)")
        if args.json:
            print(
                json.dumps(
                    {
                        "running": running,
                        "history": args.history,
                        "startup_ms": round(startup, 1),
                        "ps_ms": round(ps, 1),
                        "sessions_ms": round(listing, 1),
                        "commands_ms": {name: round(figure, 1) for name, figure in each.items()},
                    }
                )
            )
    finally:
        stop(children)
        shutil.rmtree(base, ignore_errors=True)


def stop(children: list[pexpect.spawn]) -> None:
    for c in children:
        c.sendline("/exit")
    for c in children:
        c.expect(pexpect.EOF)
        c.close()


if __name__ == "__main__":
    main()
