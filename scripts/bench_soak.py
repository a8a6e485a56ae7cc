#!/usr/bin/env python3
"""Soak: the real Claude Code under supervise for hundreds of turns against the fake API.

Every third turn the fake model asks for a Bash command with a large output (Claude Code
runs it: `--allowedTools Bash`), every --compact-every turns the user types /compact, and
session contexts are made periodically (every --kb of output, at most every --min-seconds).
Measured: peak RSS of supervise's two processes (the PTY loop and the recorder), their CPU
per turn, the database and recording sizes, and each context round's time against how long
the session had run (the target: flat, since a round digests only what came since the last).

Usage: scripts/bench_soak.py [--turns 300] [--compact-every 75] [--kb 64] [--min-seconds 20] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env  # noqa: E402
from fakeapi import FakeAnthropic, default_reply  # noqa: E402
from procs import cpu_seconds, peak_rss_kb, recorder_pid  # noqa: E402


def proc_stat(pid: int) -> tuple[float, int]:
    """(CPU seconds, peak RSS in KB) of a live process."""
    return cpu_seconds(pid), peak_rss_kb(pid)


def reply(req) -> dict:
    """Every third turn a Bash call with a big output; its result gets a short answer."""
    messages = req.body.get("messages", [])
    last = messages[-1].get("content") if messages else None
    if isinstance(last, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
        return {"text": "Done: the listing is in."}
    text = req.last_user_text()
    if req.has_tools and text.startswith("turn ") and int(text.split()[1].rstrip(":")) % 3 == 0:
        return {
            "text": "Listing.",
            "tool_use": {"name": "Bash", "input": {"command": "seq -f 'line %g of a long build log' 1 3000", "description": "List"}},
        }
    return default_reply(req)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--compact-every", type=int, default=75)
    ap.add_argument("--kb", type=int, default=64, help="a periodic context every this much output")
    ap.add_argument("--min-seconds", type=int, default=20, help="and at most this often")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    project = base / "work"
    project.mkdir()
    sv = base / "sv"
    samples = []
    try:
        with FakeAnthropic() as api:
            api.default = reply
            env = claude_env(base / "home", project, api.url)
            env.update(SUPERVISE_HOME=str(sv), SUPERVISE_SUMMARY_EVERY_KB=str(args.kb), SUPERVISE_SUMMARY_MIN_SECONDS=str(args.min_seconds))
            screen = Screen(["--", claude_bin(), "--model", CLAUDE_MODEL, "--allowedTools", "Bash"], env, project)
            screen.wait(IDLE, 60)
            pids = [screen.child.pid, recorder_pid(screen.child.pid)]
            began = time.monotonic()
            cpu0 = sum(proc_stat(p)[0] for p in pids)
            for n in range(1, args.turns + 1):
                if n % args.compact_every == 0:
                    screen.type("/compact")
                    screen.wait("Compacted", 120)
                    screen.wait(IDLE, 60)
                screen.type(f"turn {n}: please go on")
                screen.wait(rf"(Reply to: turn {n}|Done: the listing)", 60)
                screen.wait(IDLE, 60)
                screen.vt = type(screen.vt)(120, 40)  # the driver's own screen: keep its memory flat
                if n % 25 == 0:
                    stats = [proc_stat(p) for p in pids]
                    samples.append((n, time.monotonic() - began, sum(c for c, _ in stats) - cpu0, [m for _, m in stats]))
                    print(
                        f"turn {n}: {samples[-1][1]:.0f} s, supervise CPU {samples[-1][2]:.1f} s, peak RSS loop {stats[0][1] // 1024} MB recorder {stats[1][1] // 1024} MB",
                        flush=True,
                    )
            stats = [proc_stat(p) for p in pids]
            elapsed = time.monotonic() - began
            screen.child.sendcontrol("c")
            time.sleep(0.3)
            screen.child.sendcontrol("c")
            screen.close()
        time.sleep(3)  # the session-end context
        db = sv / "supervise.db"
        con = sqlite3.connect(db)
        rounds = con.execute("select round, trigger, source, duration_ms, log_offset, created from contexts order by round").fetchall()
        sid = con.execute("select id from sessions").fetchone()[0]
        sizes = {name: (sv / "sessions" / sid / name).stat().st_size for name in ("session.cast", "session.log")}
        sizes["supervise.db"] = db.stat().st_size + sum(p.stat().st_size for p in sv.glob("supervise.db-*"))
        cpu = sum(c for c, _ in stats) - cpu0
        print(f"\n{args.turns} turns in {elapsed:.0f} s with the real Claude Code ({len(api.requests)} API requests)")
        print(f"peak RSS: PTY loop {stats[0][1] / 1024:.0f} MB, recorder {stats[1][1] / 1024:.0f} MB")
        print(f"supervise CPU: {cpu:.1f} s in all, {cpu / args.turns * 1000:.0f} ms per turn")
        print("sizes: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()))
        print("\ncontext rounds (time to make one against the log read so far):")
        print("| round | trigger | log so far | took |")
        print("| --- | --- | --- | --- |")
        for r, trigger, source, ms, offset, _ in rounds:
            print(f"| {r} | {trigger} | {(offset or 0) / 1e6:.2f} MB | {ms} ms |")
        if args.json:
            print(
                json.dumps(
                    {
                        "turns": args.turns,
                        "seconds": elapsed,
                        "requests": len(api.requests),
                        "peak_rss_mb": {"loop": stats[0][1] / 1024, "recorder": stats[1][1] / 1024},
                        "cpu_s": cpu,
                        "cpu_ms_per_turn": cpu / args.turns * 1000,
                        "sizes_mb": {k: v / 1e6 for k, v in sizes.items()},
                        "rounds": [
                            {"round": r, "trigger": trigger, "log_mb": (offset or 0) / 1e6, "ms": ms}
                            for r, trigger, source, ms, offset, _ in rounds
                        ],
                    }
                )
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
