#!/usr/bin/env python3
"""Detection latency: from the bytes reaching the supervisor to the event being recorded.

A child prints a marker line every 0.25 s for a while; each marker matches a pattern. Run
twice side by side: markers alone, and markers in the middle of 10 MB/s of other output.
The recorder stores each event's latency (the loop's arrival time of the chunk to the
moment the event is written); we read them back and print p50/p99 and how many markers
were detected. Target: p99 < 50 ms under 10 MB/s.

Usage: scripts/bench_detect.py [--seconds 10] [--rate-mb 10] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from supervisor.store.database import Store  # noqa: E402

PATTERNS = """
[agent]
name = "bench"
commands = ["bench"]
[[patterns]]
name = "marker"
event = "permission_prompt"
regex = 'BENCH-MARKER-\\d+'
seen_on = "bench"
status = "spec"
"""

CHILD = r"""
import os, sys, time, random
seconds, rate = float(sys.argv[1]), float(sys.argv[2]) * 1e6
rnd = random.Random(1)
words = "alpha beta gamma delta build test parser module error fixed".split()
filler = "".join(" ".join(rnd.choice(words) for _ in range(14)) + "\n" for _ in range(2000)).encode()
out = sys.stdout.buffer
start = time.monotonic()
sent = 0
marker = 0
next_marker = start + 0.5
while time.monotonic() - start < seconds:
    now = time.monotonic()
    if now >= next_marker:
        out.write(f"BENCH-MARKER-{marker}\n".encode()); out.flush()
        marker += 1
        next_marker += 0.25
    if rate and sent < (now - start) * rate:
        chunk = filler[: 32768]
        out.write(chunk); out.flush()
        sent += len(chunk)
    else:
        time.sleep(0.001)
open(sys.argv[3], "w").write(str(marker))
"""


def run(rate_mb: float, seconds: float, tmp: Path) -> tuple[list[float], int]:
    home = tmp / f"home-{rate_mb}"
    pfile = tmp / "bench.toml"
    pfile.write_text(PATTERNS)
    env = dict(os.environ, SUPERVISE_HOME=str(home), PYTHONPATH=str(ROOT))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "supervisor",
            "--agent",
            "bench",
            "--patterns",
            str(pfile),
            "--",
            sys.executable,
            "-c",
            CHILD,
            str(seconds),
            str(rate_mb),
            str(tmp / f"sent-{rate_mb}"),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    sent = int((tmp / f"sent-{rate_mb}").read_text() or 0)
    store = Store(home / "supervise.db")
    latencies = [e["detail"]["latency_ms"] for e in store.events(store.latest()["id"]) if e["kind"] == "permission_prompt"]
    store.close()
    return latencies, sent


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate-mb", type=float, default=10.0)
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    results = {"seconds": args.seconds, "runs": []}
    tmp = Path(tempfile.mkdtemp(prefix="supervise-bench-detect-"))
    try:
        print(f"{'other output':<14} {'detected':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for rate in (0.0, args.rate_mb):
            lat, sent = run(rate, args.seconds, tmp)
            print(
                f"{rate:>8.0f} MB/s {len(lat):>4}/{sent:<5} {pct(lat, 0.5):>8.1f} {pct(lat, 0.99):>8.1f} {max(lat, default=float('nan')):>8.1f}"
            )
            if os.environ.get("BENCH_VERBOSE"):
                print("   ", [round(x) for x in lat])
            figures = {"p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99), "max_ms": max(lat, default=float("nan"))}
            results["runs"].append(
                {"rate_mb_s": rate, "detected": len(lat), "sent": sent, **{k: None if math.isnan(v) else v for k, v in figures.items()}}
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
