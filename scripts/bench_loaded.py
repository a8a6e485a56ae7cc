#!/usr/bin/env python3
"""The speed rows on a loaded machine: every core kept busy by another program.

Starts one CPU-bound process per core (`os.cpu_count()` x `python3 -c "while True: pass"`, at
normal priority), as the slower and busier machines people have, then runs, side by side in
that one run, the rows whose targets must hold there as on a quiet machine:

- the flood: `cat` of --mb MB through supervise beside the bare PTY copy loop
  (scripts/bench_pty.py --only throughput --bare-only --median); target >= 0.9x of the bare loop;
- start-up until the child's first output, supervise beside the bare loop
  (scripts/bench_pty.py --only startup); target within 120 ms of it;
- the command line: `supervise --version`, `ps --json`, `sessions`, `show`, `context`,
  `export`, each from a new process while --sessions sessions run (scripts/bench_ps.py);
  target < 150 ms each.

The busy loops are killed by their pid afterwards, whatever happened. Prints each benchmark's
own output and, with --json, their figures as one JSON object on the last line of stdout:
{"hogs": N, "hog_pct": [% of a core each got], "pty": {...}, "ps": {...}}.

Usage: scripts/bench_loaded.py [--mb 200] [--rounds 5] [--sessions 20] [--history 2000] [--runs 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(ROOT / "tests"))
from procs import cpu_seconds  # noqa: E402

HOG = "while True: pass"


def start_hogs(count: int) -> list[subprocess.Popen]:
    hogs = []
    try:
        for _ in range(count):
            hogs.append(subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.DEVNULL))
    except BaseException:
        stop_hogs(hogs)
        raise
    return hogs


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        try:
            os.kill(hog.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for hog in hogs:
        hog.wait()


def bench(script: str, args: list[str]) -> dict:
    """Run a benchmark with --json; its output goes on to ours, its figures are returned."""
    done = subprocess.run([sys.executable, str(SCRIPTS / script), *args, "--json"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines = done.stdout.splitlines()
    print("\n".join(lines[:-1]), flush=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_loaded: {script} failed (exit status {done.returncode})")
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200, help="the flood's size")
    ap.add_argument("--rounds", type=int, default=5, help="flood rounds, median of")
    ap.add_argument("--sessions", type=int, default=20, help="sessions running while the commands are timed")
    ap.add_argument("--history", type=int, default=2000, help="finished sessions in the database")
    ap.add_argument("--runs", type=int, default=15, help="runs of each command, median of")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the busy loops are still killed
    count = os.cpu_count() or 1
    hogs = start_hogs(count)
    began = time.monotonic()
    try:
        print(f"## {count} busy loops running ({sys.executable} -c {HOG!r}, pids {', '.join(str(h.pid) for h in hogs)})", flush=True)
        pty = bench(
            "bench_pty.py",
            ["--only", "throughput", "--only", "startup", "--bare-only", "--median", "--mb", str(args.mb), "--rounds", str(args.rounds)],
        )
        ps = bench("bench_ps.py", ["--sessions", str(args.sessions), "--history", str(args.history), "--runs", str(args.runs)])
        elapsed = time.monotonic() - began
        got = [100 * cpu_seconds(h.pid) / elapsed for h in hogs]
    finally:
        stop_hogs(hogs)
    print(f"\neach busy loop had {', '.join(f'{g:.0f}%' for g in got)} of a core over the {elapsed:.0f} s")
    if args.json:
        print(json.dumps({"hogs": count, "hog_pct": got, "seconds": elapsed, "pty": pty, "ps": ps}))


if __name__ == "__main__":
    main()
