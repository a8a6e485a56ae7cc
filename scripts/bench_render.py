#!/usr/bin/env python3
"""Text-log rendering speed on redraw-heavy streams recorded from real TUIs, per emulator.

The fixtures were recorded with supervise itself (scripts/fixtures/*.cast: `top` redrawing
at 20 Hz, a rich progress display redrawing at 30 Hz). Each stream is replayed several
times through the text-log renderer, chunk by chunk as recorded, in a few rounds; the best
round counts (this is the code's speed: a busy host slows single rounds by up to a third).
Targets (avt): >= 20 MB/s rich-progress, >= 10 MB/s top.

Usage: scripts/bench_render.py [--mb 20] [--rounds 3] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from supervisor.recording import asciicast  # noqa: E402
from supervisor.recording.emulator import EMULATORS, make  # noqa: E402
from supervisor.recording.textlog import TextLog  # noqa: E402


def load(path: Path) -> tuple[int, int, list[tuple[float, str]]]:
    header, events = asciicast.read(path)
    return header["width"], header["height"], [(t, d) for t, c, d in events if c == "o"]


def measure(emulator: str, cols: int, rows: int, chunks: list[tuple[float, str]], mb: float) -> tuple[float, int]:
    size = sum(len(d.encode()) for _, d in chunks)
    reps = max(1, int(mb * 1e6 / size))
    log = TextLog(make(emulator, cols, rows))
    lines = 0
    start = time.perf_counter()
    for rep in range(reps):
        offset = rep * (chunks[-1][0] + 1)
        for t, data in chunks:
            lines += len(log.feed(offset + t, data).logged)
    elapsed = time.perf_counter() - start
    return size * reps / 1e6 / elapsed, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=20.0, help="MB replayed per emulator (pyte gets a tenth: it is slow)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per stream and emulator; the best counts")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    results = {"mb": args.mb, "pyte_mb": args.mb / 10, "rounds": args.rounds, "streams": {}}
    print(f"{'stream':<16} {'emulator':<8} {'MB/s':>8} {'vs pyte':>8}")
    for cast in sorted((ROOT / "scripts" / "fixtures").glob("*.cast")):
        cols, rows, chunks = load(cast)
        speeds = {}
        for name in EMULATORS:
            mb = args.mb / (10 if name == "pyte" else 1)
            speeds[name] = max(measure(name, cols, rows, chunks, mb)[0] for _ in range(max(1, args.rounds)))
        for name, speed in speeds.items():
            print(f"{cast.stem:<16} {name:<8} {speed:>8.1f} {speed / speeds['pyte']:>7.1f}x")
        results["streams"][cast.stem] = {name: {"mb_s": speed} for name, speed in speeds.items()}
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
