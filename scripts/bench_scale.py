#!/usr/bin/env python3
"""Cost as work grows: what supervise costs with many sessions and with a very long one.

Each figure is set beside an anchor measured in the same run:

- sessions: `supervise sessions` and `supervise sessions --json` (and, when
  `supervise sessions --help` lists `--all`, the same with `--all`) from a new process, with
  --sessions finished sessions in a fresh database each (created by `supervise sessions`,
  then rows inserted with sqlite3), median of --runs after one untimed, beside
  `supervise version` (the CLI's start-up alone). Target: < 300 ms at 10,000; the default
  listing flat, `--all` linear.
- export: `supervise export ID -o FILE` of a session whose text log is --export-mb of
  generated log lines, and of a tenth of that, beside `cat LOG > FILE`: seconds, MB/s and
  peak memory. Linear: the same MB/s at both sizes.
- rounds: a context round (heuristic, as the recorder makes it, through the library) once
  the session's log has grown to each of --round-mb: a round at that size less 0.5 MB, then
  0.5 MB appended and the timed round, which reads only what is new. Flat: the same time at
  every size. Writing the log is not timed.

The generated logs repeat one block of build, test and progress lines (tests/sessiongen.py's
noise) with a line of its own per block, so 1,000 MB is written in seconds.

Usage: scripts/bench_scale.py [--sessions 10,1000,10000] [--runs 9] [--export-mb 1000]
                              [--round-mb 1,100,1000] [--only sessions|export|rounds] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import sessiongen  # noqa: E402
from supervisor import config  # noqa: E402
from supervisor.contexts import rounds  # noqa: E402
from supervisor.paths import DB_NAME  # noqa: E402
from supervisor.store.database import Store  # noqa: E402

# the supervise of the environment measured (the one beside this Python), else the PATH's
BESIDE = Path(sys.executable).parent / "supervise"
SUPERVISE = str(BESIDE) if BESIDE.exists() else shutil.which("supervise")
BLOCK_BYTES = 1_000_000
STEP_MB = 0.5  # new output since the previous round, at every size
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


# --- generated data --------------------------------------------------------------------


def noise_block(size: int, seed: int = 7) -> bytes:
    """About `size` bytes of the lines a session's log is full of."""
    rnd = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = rnd.choice(sessiongen.NOISE).format(w=rnd.choice(sessiongen.WORDS), n=rnd.randint(1, 99), m=rnd.randint(100, 9999))
        lines.append(line)
        total += len(line.encode()) + 1
    return ("\n".join(lines) + "\n").encode()


def grow_log(path: Path, mb: float, block: bytes) -> None:
    """Append blocks to the log at `path` until it holds `mb` MB; a new log starts with the
    user's request, and each block with a line of its own."""
    target = int(mb * 1_000_000)
    with open(path, "ab") as fh:
        size = fh.tell()
        if size == 0:
            size += fh.write((sessiongen.REQUEST + "\n").encode())
        n = size // len(block)
        while size < target:
            size += fh.write(f"● Bash(make check STEP={n})\n".encode())
            rest = target - size
            piece = block if rest >= len(block) else block[: block.rfind(b"\n", 0, rest) + 1]  # whole lines
            size += fh.write(piece)
            n += 1
            if len(piece) < len(block):
                break


def session_row(session_id: str, started: datetime, log_path: str | None = None) -> dict:
    return {
        "id": session_id,
        "command": "claude",
        "argv": '["claude"]',
        "agent": "claude",
        "cwd": "/tmp",
        "started": started.isoformat(timespec="milliseconds"),
        "ended": (started + timedelta(minutes=5)).isoformat(timespec="milliseconds"),
        "exit_code": 0,
        "status": "completed",
        "pid": 0,
        "log_path": log_path,
    }


def new_home(home: Path, env: dict, rows: list[dict]) -> None:
    """A data directory whose database (made by supervise itself) holds `rows` as sessions."""
    env = {**env, "SUPERVISE_HOME": str(home)}
    subprocess.run([SUPERVISE, "sessions"], env=env, capture_output=True, check=True)
    columns = list(rows[0])
    db = sqlite3.connect(home / DB_NAME)
    with db:
        db.executemany(
            f"insert into sessions ({', '.join(columns)}) values ({', '.join('?' * len(columns))})", [[r[c] for c in columns] for r in rows]
        )
    db.close()


def session_ids(count: int) -> list[str]:
    """`count` distinct ids of six letters and digits, as supervise makes them."""
    return ["".join(ALPHABET[k // 36**i % 36] for i in range(6)) for k in random.Random(count).sample(range(36**6), count)]


# --- measuring ---------------------------------------------------------------------------


def median_ms(args: list[str], env: dict, runs: int) -> float:
    """The median wall time of `supervise ARGS` (ms), each a new process, after one run
    untimed (the files it reads in the page cache)."""
    subprocess.run([SUPERVISE, *args], env=env, capture_output=True, check=True)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([SUPERVISE, *args], env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def timed_process(argv: list[str], env: dict, stdout_path: Path | None = None) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MB) of one process, its stdout to `stdout_path` or nowhere."""
    with open(stdout_path or os.devnull, "wb") as out:
        began = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)  # its peak RSS, which Popen.wait does not give
        took = time.perf_counter() - began
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} ... failed (exit {proc.returncode}): {proc.stderr.read().decode(errors='replace').strip()[-300:]}")
    proc.stderr.close()
    return took, usage.ru_maxrss / 1024


def sessions(base: Path, env: dict, counts: list[int], runs: int) -> dict:
    help_text = subprocess.run([SUPERVISE, "sessions", "--help"], env=env, capture_output=True, text=True, check=True).stdout
    variants = ["", "--json"] + (["--all", "--all --json"] if re.search(r"--all\b", help_text) else [])
    began = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out = {"runs": runs, "has_all": "--all" in variants, "sizes": []}
    print(f"supervise sessions from a new process, median of {runs} runs (ms):")
    print(f"{'sessions':>9} {'version':>10} " + " ".join(f"{v or '(default)':>13}" for v in variants))
    for count in counts:
        home = base / f"sessions-{count}"
        new_home(home, env, [session_row(i, began + timedelta(minutes=k)) for k, i in enumerate(session_ids(count))])
        home_env = {**env, "SUPERVISE_HOME": str(home)}
        startup = median_ms(["version"], home_env, runs)
        ms = {v: round(median_ms(["sessions", *v.split()], home_env, runs), 1) for v in variants}
        print(f"{count:>9,} {startup:>10.1f} " + " ".join(f"{ms[v]:>13.1f}" for v in variants), flush=True)
        out["sizes"].append({"count": count, "startup_ms": round(startup, 1), "ms": ms})
        shutil.rmtree(home)
    return out


def export(base: Path, env: dict, mb: float, block: bytes) -> dict:
    """`supervise export -o` and `cat` of a session's text log at a tenth of `mb`, then at `mb`."""
    home, log, target = base / "export", base / "export.log", base / "export-out.txt"
    new_home(home, env, [session_row("export", datetime(2026, 1, 1, tzinfo=timezone.utc), str(log))])
    home_env = {**env, "SUPERVISE_HOME": str(home)}
    out = {"sizes": []}
    print(
        f"\nsupervise export ID -o FILE of a text log, beside cat LOG > FILE:\n{'log':>8} {'export':>8} {'MB/s':>7} {'peak RSS':>9} {'cat':>7} {'MB/s':>7}"
    )
    for size_mb in (mb / 10, mb):
        grow_log(log, size_mb, block)
        real_mb = log.stat().st_size / 1e6
        took, rss = timed_process([SUPERVISE, "export", "export", "-o", str(target)], home_env)
        target.unlink()
        cat_s, _ = timed_process(["cat", str(log)], env, target)
        target.unlink()
        print(f"{real_mb:>6.0f}MB {took:>7.2f}s {real_mb / took:>7.0f} {rss:>7.0f}MB {cat_s:>6.2f}s {real_mb / cat_s:>7.0f}", flush=True)
        out["sizes"].append(
            {
                "mb": real_mb,
                "export_s": took,
                "export_mb_s": real_mb / took,
                "peak_rss_mb": rss,
                "cat_s": cat_s,
                "cat_mb_s": real_mb / cat_s,
            }
        )
    log.unlink()  # its disk space, before the rounds write theirs
    return out


def context_rounds(base: Path, sizes: list[float], block: bytes) -> dict:
    """A heuristic round's time once the log has grown to each size, STEP_MB new since the last."""
    store = Store(base / "rounds.db")
    log = base / "rounds.log"
    s = store.create_session(
        name=None, command="claude", argv=["claude"], agent="claude", cwd=str(base), pid=os.getpid(), parent_id=None, options={}
    )
    store.update_session(s["id"], log_path=str(log), cast_path=str(base / "none.cast"))
    settings = config.Settings(summary=config.Summary(backend="heuristic"))
    out = {"step_mb": STEP_MB, "sizes": []}
    print(f"\ncontext rounds, {STEP_MB:g} MB new since the previous round:\n{'log':>8} {'round':>7}")
    try:
        for mb in sizes:
            grow_log(log, mb - STEP_MB, block)
            rounds.make(store, store.get_session(s["id"]), "periodic", settings, env={}, live=True)
            grow_log(log, mb, block)
            began = time.perf_counter()
            rounds.make(store, store.get_session(s["id"]), "periodic", settings, env={}, live=True)
            took = time.perf_counter() - began
            print(f"{log.stat().st_size / 1e6:>6.0f}MB {took:>6.2f}s", flush=True)
            out["sizes"].append({"mb": log.stat().st_size / 1e6, "round_s": took})
    finally:
        store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", default="10,1000,10000", help="sessions in the database, comma-separated")
    ap.add_argument("--runs", type=int, default=9, help="runs of each command (the median is kept)")
    ap.add_argument("--export-mb", type=float, default=1000)
    ap.add_argument("--round-mb", default="1,100,1000", help="MB of log at each timed round, comma-separated")
    ap.add_argument("--only", choices=["sessions", "export", "rounds"])
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    if not SUPERVISE:
        sys.exit(f"no supervise beside {sys.executable} nor on the PATH")
    base = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_"))}
    block = noise_block(BLOCK_BYTES)
    results = {}
    try:
        if args.only in (None, "sessions"):
            results["sessions"] = sessions(base, env, [int(x) for x in args.sessions.split(",")], args.runs)
        if args.only in (None, "export"):
            results["export"] = export(base, env, args.export_mb, block)
        if args.only in (None, "rounds"):
            results["rounds"] = context_rounds(base, [float(x) for x in args.round_mb.split(",")], block)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
