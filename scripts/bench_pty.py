#!/usr/bin/env python3
"""PTY benchmarks, measured side by side in one run, printed as ratios.

- throughput: `cat` of a large file through supervise vs `script -qfc` vs `asciinema rec`
  vs a bare PTY copy loop (scripts/bare_pty_copy.py); target >= 0.95x of the bare loop.
  Also the time until supervise exits (the text log finished) and its peak memory.
- latency: keystroke echo round trip through a raw-mode `cat`, with and without supervise;
  target: added p50 < 0.5 ms, p99 < 2 ms.
- idle CPU: supervise's own CPU time while the child sleeps; target ~0.
The flood and idle cases run supervise twice: as it is by default, and with OTLP export on
(OTEL_EXPORTER_OTLP_ENDPOINT: a receiver in this process that decodes what it gets, as a
collector does); the two within noise of each other is the target.

Usage: scripts/bench_pty.py [--mb 200] [--rounds 3] [--keys 500] [--only PART ...] [--bare-only] [--median] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ptyprocess import PtyProcess

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from procs import cpu_seconds, descendants, is_recorder  # noqa: E402

EXPORTING = "supervise, OTLP on"  # the case with export on

SUPERVISE = [sys.executable, "-m", "supervisor"]
BARE = [sys.executable, str(ROOT / "scripts" / "bare_pty_copy.py")]
COLS, ROWS = 120, 40


def make_file(path: Path, mb: int) -> int:
    """Log-like text lines; returns the number of newlines."""
    rnd = random.Random(7)
    words = "build test parser module error fixed file src lib compile link warning passed".split()
    lines = [" ".join(rnd.choice(words) for _ in range(rnd.randint(4, 16))) for _ in range(5000)]
    block = ("\n".join(f"{i:06d} {l}" for i, l in enumerate(lines)) + "\n").encode()
    reps = max(1, mb * 1024 * 1024 // len(block))
    with open(path, "wb") as fh:
        for _ in range(reps):
            fh.write(block)
    return block.count(b"\n") * reps


def peak_rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def direct_children(pid: int) -> list[int]:
    """A process's children, from its own /proc entry (not a scan of every process)."""
    try:
        return [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    except OSError:
        return []


def family_rss_kb(pid: int) -> int:
    """Peak RSS of a process plus its direct children (supervise's recorder process)."""
    return peak_rss_kb(pid) + sum(peak_rss_kb(child) for child in direct_children(pid))


def through_terminal(argv: list[str], expected: int, env: dict) -> tuple[float, float, float, int]:
    """Run argv on a fresh PTY we read as fast as possible. Returns (seconds from the first
    byte until `expected` bytes arrived, seconds from start to the first byte, seconds from
    the first byte until exit, peak RSS in KB of the process tree we started). Returns once
    the run's recorder has finished too: one left rendering a flood in the background (past
    supervise's wait for it) would take the CPU from the next case's run."""
    start = time.perf_counter()
    proc = PtyProcess.spawn(argv, dimensions=(ROWS, COLS), env=env)
    fd = proc.fd
    got = 0
    first = passthrough = None
    peak = 0
    last_rss = 0.0
    recorders: set[int] = set()
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        now = time.perf_counter()
        if first is None:
            first = now
        got += len(data)
        if passthrough is None and got >= expected:
            passthrough = now - first
        if now - last_rss > 0.1:
            peak, last_rss = max(peak, family_rss_kb(proc.pid)), now
            recorders.update(p for p in direct_children(proc.pid) if is_recorder(p))  # (the loop's own child)
    end = time.perf_counter()
    proc.wait()
    first = first or end
    while any(is_recorder(p) for p in recorders) and time.perf_counter() - end < 600:
        time.sleep(0.2)
    return passthrough or (end - first), first - start, end - first, peak


def asciinema_bin() -> str | None:
    """asciinema from the running interpreter's environment (the venv) or the PATH."""
    beside = Path(sys.executable).parent / "asciinema"
    return str(beside) if beside.exists() else shutil.which("asciinema")


def exporting_env(env: dict) -> tuple[dict, object]:
    """`env` with OTLP export on and its receiver; with the OpenTelemetry SDK or the receiver's
    proto package missing, (env, None): no such case."""
    try:
        import opentelemetry.sdk  # noqa: F401
        from otlpreceiver import exporting
    except ImportError:
        return env, None
    return exporting(env)


def bench_throughput(mb: int, rounds: int, env: dict, others: bool = True, median: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="supervise-bench-"))
    on, receiver = exporting_env(env) if others else (env, None)
    try:
        data = tmp / "data.txt"
        newlines = make_file(data, mb)
        size = data.stat().st_size
        expected = size + newlines  # the inner PTY turns \n into \r\n
        asciinema = asciinema_bin()
        cases = {
            "bare loop": [*BARE, "cat", str(data)],
            "script -qfc": ["script", "-qfc", f"cat {data}", "/dev/null"],
            "asciinema rec": [asciinema or "asciinema", "rec", "--quiet", "--overwrite", "-c", f"cat {data}", str(tmp / "asciinema.cast")],
            "supervise": [*SUPERVISE, "--", "cat", str(data)],
            EXPORTING: [*SUPERVISE, "--", "cat", str(data)],
        }
        if not others:  # the bare loop and supervise alone
            cases = {k: v for k, v in cases.items() if k in ("bare loop", "supervise")}
        if receiver is None:
            cases.pop(EXPORTING, None)
        if not shutil.which("script"):
            cases.pop("script -qfc", None)
        if not asciinema:
            cases.pop("asciinema rec", None)
        results: dict[str, list[tuple[float, float, float, int]]] = {k: [] for k in cases}
        for _ in range(rounds):  # interleaved, so drift on the machine hits every case alike
            for name, argv in cases.items():
                # each from a disk with nothing left to write: the case before (asciinema's and
                # supervise's 210 MB recordings) is not written out on this one's time
                os.sync()
                results[name].append(through_terminal(argv, expected, on if name == EXPORTING else env))
        # Best of the rounds on a quiet machine; the median on a busy one, where the bare loop's
        # luckiest round (its two processes on cores the busy loops left) is far from its usual.
        pick = (lambda v: sorted(v, key=lambda r: r[0])[len(v) // 2]) if median else (lambda v: min(v, key=lambda r: r[0]))
        best = {k: pick(v) for k, v in results.items()}
        base = best["bare loop"][0]
        print(
            f"\n## throughput: cat of {size / 1e6:.0f} MB, {COLS}x{ROWS}, {'median' if median else 'best'} of {rounds} (timed from the first byte)"
        )
        print(f"{'case':<14} {'passthrough':>12} {'MB/s':>8} {'vs bare':>8} {'start-up':>9} {'exit after':>11} {'peak RSS':>9}")
        for name, (pt, startup, total, rss) in best.items():
            print(
                f"{name:<14} {pt:>11.2f}s {size / 1e6 / pt:>8.0f} {base / pt:>7.2f}x {startup * 1000:>7.0f}ms {total:>10.2f}s {rss / 1024:>7.0f}MB"
            )
        return {
            "mb": size / 1e6,
            "rounds": rounds,
            "of_rounds": "median" if median else "best",
            "cols": COLS,
            "rows": ROWS,
            "cases": {
                name: {
                    "seconds": pt,
                    "mb_s": size / 1e6 / pt,
                    "vs_bare": base / pt,
                    "startup_ms": startup * 1000,
                    "exit_after_s": total,
                    "peak_rss_mb": rss / 1024,
                }
                for name, (pt, startup, total, rss) in best.items()
            },
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if receiver is not None:
            receiver.stop()


def bench_startup(runs: int, env: dict) -> dict:
    """Launch to the child's first output, `echo` under each, median of `runs` interleaved
    (on its own: during the flood rounds the disk is still writing the previous round out)."""
    cases = {"bare loop": [*BARE, "echo", "hi"], "supervise": [*SUPERVISE, "--", "echo", "hi"]}
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            times[name].append(through_terminal(argv, 1, env)[1])
    median = {k: sorted(v)[len(v) // 2] * 1000 for k, v in times.items()}
    print(f"\n## start-up until the child's first output, median of {runs}")
    for name, ms in median.items():
        print(f"{name:<14} {ms:7.0f} ms")
    return {"runs": runs, "cases": {k: {"startup_ms": v} for k, v in median.items()}}


def echo_latencies(argv: list[str], keys: int, env: dict) -> list[float]:
    proc = PtyProcess.spawn(argv, dimensions=(ROWS, COLS), env=env)
    fd = proc.fd
    # wait until the raw-mode cat echoes
    deadline = time.monotonic() + 20
    buf = b""
    while b"ready" not in buf and time.monotonic() < deadline:
        os.write(fd, b"r")
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            buf += os.read(fd, 65536)
        if buf.endswith(b"r" * 3):
            break
    time.sleep(0.3)
    while select.select([fd], [], [], 0.1)[0]:
        os.read(fd, 65536)
    samples = []
    for i in range(keys):
        key = bytes([97 + i % 26])
        t0 = time.perf_counter()
        os.write(fd, key)
        got = b""
        while key not in got:
            select.select([fd], [], [], 2)
            got += os.read(fd, 1024)
        samples.append(time.perf_counter() - t0)
        time.sleep(0.002)
    proc.terminate(force=True)
    return samples


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000


def bench_latency(keys: int, env: dict) -> dict:
    child = ["sh", "-c", "stty raw -echo; exec cat"]
    bare = echo_latencies(child, keys, env)
    sup = echo_latencies([*SUPERVISE, "--", *child], keys, env)
    print(f"\n## keystroke echo latency, {keys} keys, raw-mode cat")
    print(f"{'case':<12} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"{'no wrapper':<12} {pct(bare, 0.5):>8.3f} {pct(bare, 0.99):>8.3f}")
    print(f"{'supervise':<12} {pct(sup, 0.5):>8.3f} {pct(sup, 0.99):>8.3f}")
    print(f"added: p50 {pct(sup, 0.5) - pct(bare, 0.5):.3f} ms (target < 0.5), p99 {pct(sup, 0.99) - pct(bare, 0.99):.3f} ms (target < 2)")
    return {
        "keys": keys,
        "bare": {"p50_ms": pct(bare, 0.5), "p99_ms": pct(bare, 0.99)},
        "supervise": {"p50_ms": pct(sup, 0.5), "p99_ms": pct(sup, 0.99)},
        "added": {"p50_ms": pct(sup, 0.5) - pct(bare, 0.5), "p99_ms": pct(sup, 0.99) - pct(bare, 0.99)},
    }


def bench_idle(env: dict, seconds: float = 5.0) -> dict:
    print(f"\n## CPU while the child is idle ({seconds:.0f} s of `sleep`; the PTY loop and the recorder)")
    out = {"seconds": seconds, "cases": {}}
    on, receiver = exporting_env(env)
    cases = [("bare loop", [*BARE, "sleep", "30"], env), ("supervise", [*SUPERVISE, "--", "sleep", "30"], env)]
    if receiver is not None:
        cases.append((EXPORTING, [*SUPERVISE, "--", "sleep", "30"], on))
    for name, argv, case_env in cases:
        proc = PtyProcess.spawn(argv, dimensions=(ROWS, COLS), env=case_env)
        time.sleep(1.5)  # start-up is not idleness
        ours = [proc.pid, *(p for p in descendants(proc.pid) if is_recorder(p))]  # the loop and the recorder
        c0, t0 = sum(map(cpu_seconds, ours)), time.monotonic()
        time.sleep(seconds)
        used = sum(map(cpu_seconds, ours)) - c0
        elapsed = time.monotonic() - t0
        proc.terminate(force=True)
        print(f"{name:<12} {used * 1000:>7.1f} ms CPU over {elapsed:.1f} s ({100 * used / elapsed:.2f}% of a core)")
        out["cases"][name] = {"cpu_ms": used * 1000, "elapsed_s": elapsed, "pct_core": 100 * used / elapsed}
    if receiver is not None:
        receiver.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keys", type=int, default=500)
    ap.add_argument("--only", choices=["throughput", "startup", "latency", "idle"], action="append", help="this part alone (repeatable)")
    ap.add_argument("--bare-only", action="store_true", help="the flood beside the bare loop alone (no script, asciinema, OTLP export)")
    ap.add_argument("--median", action="store_true", help="the flood's median round, not its best (a busy machine)")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    results = {}
    home = tempfile.mkdtemp(prefix="supervise-bench-home-")
    env = dict(os.environ, SUPERVISE_HOME=home, TERM="xterm-256color", PYTHONPATH=str(ROOT))
    try:
        if not args.only or "throughput" in args.only:
            results["throughput"] = bench_throughput(args.mb, args.rounds, env, others=not args.bare_only, median=args.median)
        if not args.only or "startup" in args.only:
            results["startup"] = bench_startup(15, env)
        if not args.only or "latency" in args.only:
            results["latency"] = bench_latency(args.keys, env)
        if not args.only or "idle" in args.only:
            results["idle"] = bench_idle(env)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
