#!/usr/bin/env python3
"""Idle cost: CPU and memory while agents sit at their prompt, bare and under supervise.

For each agent (the real Claude Code against the fake Anthropic API and the real Codex CLI
against the fake Responses API, each after a few turns and a /compact, so that its transcript
exists, the hook server is up, injection is armed and supervise has made a context round; the
scripted toy agent; a plain shell), start it under a real PTY, drive it to its idle prompt,
then count the CPU time (user + system, from /proc) of every process over --seconds: the
agent alone when bare; supervise's own processes (the PTY loop, the job shell, the recorder
and the MCP server the agent started) and the agent under supervise. At the end of that idle
time, the memory of each: PSS (/proc/PID/smaps_rollup: shared pages split among the processes
that map them), so that the figures of many sessions add up. Each agent runs under supervise
twice: as it is by default, and with OTLP export on (to a receiver in this process that
decodes what it gets, metrics every 5 s): the two within noise.

Then ten sessions at once (`ten`): ten of the fake-API Claude Code (the toy agent where ten
would not fit in the memory available), each in its own PTY and project folder, one fake API,
one SUPERVISE_HOME (as a user's is), each driven as above: the PSS of supervise's processes in
all, that against ten times one session's (this run's), their CPU together over --seconds,
and `supervise ps`, `supervise search WORD` and `supervise sessions` timed while they idle.

Targets: supervise's processes < 0.5% of a core; at most 60 MB PSS for one session; ten
sessions at most ten times one.

Usage: scripts/bench_idle.py [--seconds 60] [--only claude|codex|toy|shell|ten ...] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from agentdriver import AGENTS as AGENT_MODULES, CLAUDE_IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env  # noqa: E402
from conftest import SUPERVISE  # noqa: E402
from fakeapi import FakeAnthropic  # noqa: E402
from procs import cpu_seconds, descendants, left_running, pss_kb, supervise_role  # noqa: E402

ROLES = ("loop", "job shell", "recorder", "mcp")  # supervise's processes in a session
TEN = 10
AGENT_BINS = AGENT_MODULES / ".bin"  # the agent CLIs scripts/test installs
WORD = "hello"  # typed in every turn: what `supervise search` looks for in the ten sessions


@dataclass
class Run:
    """One agent's session: how to start it, drive it to idle and end it."""

    argv: list[str]
    env: dict
    cwd: Path
    drive: Callable[[Screen], None]
    options: list[str] = field(default_factory=list)
    compacts: bool = False  # the drive compacts: supervise makes a context round
    mcp: bool = False  # the agent starts supervise's MCP server
    quit: Callable[[Screen], None] = lambda screen: _ctrl(screen, "c", "c", "d")


def _ctrl(screen: Screen, *keys: str) -> None:
    for key in keys:
        if screen.child.isalive():
            screen.child.sendcontrol(key)
            time.sleep(0.3)


def claude(base: Path, api) -> Run:
    project = base / "work"
    project.mkdir(parents=True)

    def drive(screen):
        screen.wait(CLAUDE_IDLE, 60)
        for i in range(1, 4):
            screen.type(f"turn {i}: please say {WORD}")
            screen.wait(rf"Reply to: turn {i}", 60)
            screen.wait(CLAUDE_IDLE, 60)
        screen.type("/compact")
        screen.wait("Compacted", 120)
        screen.wait(CLAUDE_IDLE, 60)

    env = claude_env(base / "claude-home", project, api.url)
    return Run([claude_bin(), "--model", CLAUDE_MODEL], env, project, drive, compacts=True, mcp=True)


def codex(base: Path, api) -> Run:
    from kits import codex as kit

    env, project = kit.environment(base, api.url)

    def drive(screen):
        kit.ready(screen)
        for i in range(1, 3):
            kit.say(screen, f"turn {i}: please say {WORD}")
            screen.wait(rf"Reply to: turn {i}", 60)
            kit.idle(screen)
        kit.say(screen, kit.COMPACT)
        screen.wait(kit.COMPACTED, 120)
        kit.idle(screen)
        kit.say(screen, f"turn 3: please say {WORD}")  # its compaction hook runs as the next turn starts
        screen.wait(r"Reply to: turn 3", 60)
        kit.idle(screen)

    return Run([codex_bin()], env, project, drive, compacts=True, mcp=True, quit=kit.quit)


def codex_bin() -> str:
    from kits import codex as kit

    return str(kit.binary())


def toy(base: Path, api) -> Run:
    base.mkdir(parents=True)
    argv = [sys.executable, str(ROOT / "tests" / "agents" / "toyagent.py"), "--log", str(base / "toy.jsonl"), "--paste"]

    def drive(screen):
        screen.wait("toy: ready", 20)
        screen.type(f"please say {WORD}")
        screen.wait(f"reply to: please say {WORD}", 20)

    options = ["--agent", "toy", "--patterns", str(ROOT / "tests" / "agents" / "toy.toml")]
    return Run(argv, dict(os.environ), base, drive, options)


def shell(base: Path, api) -> Run:
    base.mkdir(parents=True)
    env = {**os.environ, "PS1": "$ ", "HISTFILE": "/dev/null"}

    def drive(screen):
        screen.type("echo rea''dy")
        screen.wait("ready", 10)

    return Run(["bash", "--norc", "--noprofile"], env, base, drive)


def fake_api(agent: str):
    """The fake model API `agent` talks to, started; None for those that need none."""
    if agent == "claude":
        return FakeAnthropic().start()
    if agent == "codex":
        from kits import codex as kit

        return kit.Model().start()
    return None


AGENTS = {"claude": claude, "codex": codex, "toy": toy, "shell": shell}
EXPORT: dict[str, str] = {}  # the variables that turn OTLP export on, to this run's receiver
MODES = (False, True, "export")  # bare, under supervise, under supervise exporting


# --- one session ---------------------------------------------------------------------------


def start(run: Run, supervised) -> Screen:
    if supervised:
        return Screen([*run.options, "--", *run.argv], run.env, run.cwd)
    return Screen(run.argv[1:], run.env, run.cwd, supervise=run.argv[:1])


def prepare(env: dict) -> None:
    """Open the data directory once, as a user's is before a session: the session does not
    migrate a new database (which keeps sqlite_utils loaded in the PTY loop)."""
    subprocess.run([*SUPERVISE, "sessions"], env=env, capture_output=True, check=True, timeout=60)


def ours(root: int) -> dict[int, str]:
    """supervise's processes in the tree under `root`, by pid: their role."""
    return {p: role for p in descendants(root) if (role := supervise_role(p))}


def settle_session(screen: Screen, run: Run, home: Path) -> dict:
    """After the drive: until its context round is written and its MCP server runs (60 s at
    most each); what was found."""
    found = {"rounds": None, "mcp_started": None}
    if run.compacts:
        sid = session_id(screen.child.pid)
        found["rounds"] = wait_until(lambda: context_rounds(home, sid), 60, screen)
    if run.mcp:
        found["mcp_started"] = bool(wait_until(lambda: "mcp" in ours(screen.child.pid).values(), 60, screen))
    return found


def wait_until(predicate, timeout: float, screen: Screen):
    deadline = time.monotonic() + timeout
    while not (got := predicate()) and time.monotonic() < deadline:
        screen.pump(0.5)
    return got


def session_id(root: int) -> str | None:
    """The session's id: its folder, in the recorder's command line."""
    for p, role in ours(root).items():
        if role == "recorder":
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                told = [a for a in fh.read().split(b"\0") if a.endswith(b"recorder.json")]
            return Path(told[0].decode()).parent.name if told else None
    return None


def context_rounds(home: Path, sid: str | None) -> int:
    try:
        con = sqlite3.connect(f"file:{home / 'supervise.db'}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("select count(*) from contexts where session_id = ?", (sid,)).fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def cpu_over(pids: list[int], seconds: float, pump: Callable[[float], None]) -> dict[int, float]:
    """CPU seconds each of `pids` used over `seconds` of wall time, `pump` reading the screens."""
    before = {p: cpu_seconds(p) for p in pids}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # keep reading the screen, as a terminal would
        pump(min(0.5, max(0.0, deadline - time.monotonic())))
    return {p: cpu_seconds(p) - before[p] for p in pids}


def memory(root: int) -> dict:
    """MB of PSS of each of supervise's roles (None: no such process), their sum, and the
    agent's processes together."""
    by: dict[str, float | None] = dict.fromkeys(ROLES)
    agent = 0.0
    for p in descendants(root):
        role, mb = supervise_role(p), pss_kb(p) / 1024
        if role:
            by[role] = (by[role] or 0.0) + mb
        else:
            agent += mb
    return {**by, "supervise": sum(v for v in by.values() if v), "agent": agent}


def end(screen: Screen, run: Run, home: Path) -> None:
    """Quit the agent; then whatever of this run is left (an agent's helper, a recorder still
    making its last round) is given 30 s to exit, and killed."""
    try:
        run.quit(screen)
    finally:
        screen.close()
        stop_all(home)


def stop_all(home: Path) -> None:
    mine = lambda cmdline, environ: f"SUPERVISE_HOME={home}".encode() in environ  # noqa: E731
    for pid in left_running(mine, wait=30):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    left_running(mine)


def idle_cost(agent: str, base: Path, supervised, seconds: float) -> dict:
    """Start the agent (under supervise, or bare), drive it to idle, measure."""
    api = fake_api(agent)
    try:
        run = AGENTS[agent](base, api)
        home = base / "sv"
        run.env = {**run.env, "SUPERVISE_HOME": str(home), **(EXPORT if supervised == "export" else {})}
        if supervised:
            prepare(run.env)
        screen = start(run, supervised)
        try:
            run.drive(screen)
            found = settle_session(screen, run, home) if supervised else {}
            time.sleep(2.0)  # let it settle
            root = screen.child.pid
            roles = ours(root) if supervised else {}
            used = cpu_over(descendants(root), seconds, screen.pump)
            mine = sum(v for p, v in used.items() if p in roles)
            result = {"supervise_pct": 100 * mine / seconds, "agent_pct": 100 * (sum(used.values()) - mine) / seconds, **found}
            if supervised:
                result["memory"] = memory(root)
            return result
        finally:
            end(screen, run, home)
    finally:
        if api is not None:
            api.stop()


# --- ten sessions at once --------------------------------------------------------------------


def fits_ten() -> bool:
    """Room for ten Claude Codes under supervise (~0.4 GB each, 6 GB asked)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) > 6 * 1024 * 1024
    except OSError:
        pass
    return False


def ten_sessions(agent: str, base: Path, seconds: float, count: int = TEN) -> dict:
    api = fake_api(agent)
    home = base / "sv"
    runs: list[Run] = []
    screens: list[Screen | None] = [None] * count
    found: list[dict] = [{} for _ in range(count)]
    driven = [threading.Event() for _ in range(count)]
    failed: list[BaseException] = []
    stop = threading.Event()
    gate = threading.Semaphore(os.cpu_count() or 2)  # drive as many at once as there are cores

    def one(i: int) -> None:
        try:
            with gate:
                screen = screens[i] = start(runs[i], True)
                runs[i].drive(screen)
                found[i] = settle_session(screen, runs[i], home)
        except BaseException as e:
            failed.append(e)
        finally:
            driven[i].set()
        while screens[i] is not None and not stop.is_set():  # a terminal keeps reading
            screens[i].pump(0.5)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(count)]
    try:
        for i in range(count):
            runs.append(AGENTS[agent](base / f"s{i}", api))
            runs[i].env = {**runs[i].env, "SUPERVISE_HOME": str(home)}
        prepare(runs[0].env)
        for t in threads:
            t.start()
        for e in driven:
            e.wait()
        if failed:
            raise failed[0]
        time.sleep(2.0)
        roots = [s.child.pid for s in screens]
        roles = {p: r for root in roots for p, r in ours(root).items()}
        used = cpu_over(list(roles), seconds, time.sleep)
        sessions = [memory(root) for root in roots]
        env, cwd = runs[0].env, runs[0].cwd
        running = len(json.loads(subprocess.run([*SUPERVISE, "ps", "--json"], env=env, cwd=cwd, capture_output=True, text=True).stdout))
        timed = {name: cli_ms(args, env, cwd) for name, args in (("ps", ["ps"]), ("search", ["search", WORD]), ("sessions", ["sessions"]))}
        return {
            "agent": agent,
            "sessions": count,
            "running": running,
            "supervise_mb": sum(s["supervise"] for s in sessions),
            "agent_mb": sum(s["agent"] for s in sessions),
            "by_role_mb": {r: sum(s[r] or 0 for s in sessions) for r in ROLES},
            "mcp_servers": sum(1 for r in roles.values() if r == "mcp"),
            "supervise_pct": 100 * sum(used.values()) / seconds,
            "cli_ms": {name: ms for name, (ms, _) in timed.items()},
            "word": WORD,
            "search_said": timed["search"][1],
            "rounds": [f.get("rounds") for f in found],
        }
    finally:
        stop.set()
        for t in threads:
            if t.ident is not None:
                t.join(5)
        for i, screen in enumerate(screens):
            if screen is not None:
                with contextlib.suppress(Exception):  # what is left is killed below
                    runs[i].quit(screen)
                    screen.close()
        stop_all(home)
        if api is not None:
            api.stop()


def cli_ms(args: list[str], env: dict, cwd: Path, runs: int = 3) -> tuple[float, str]:
    """Median wall time (ms) of `supervise ARGS` from a new process, and the start of what it printed."""
    times, said = [], ""
    for _ in range(runs):
        began = time.perf_counter()
        done = subprocess.run([*SUPERVISE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
        times.append((time.perf_counter() - began) * 1000)
        if done.returncode != 0:
            raise RuntimeError(f"supervise {' '.join(args)} failed: {(done.stderr or done.stdout).strip()[:200]}")
        said = done.stdout[:300]
    return statistics.median(times), said


# --- the report -------------------------------------------------------------------------------


def version(agent: str) -> str | None:
    binary = {"claude": claude_bin, "codex": codex_bin}.get(agent)
    if binary is None:
        return None
    said = subprocess.run([binary(), "--version"], capture_output=True, text=True).stdout.split()
    return next((w for w in said if w[:1].isdigit()), None)


def installed(agent: str) -> str | None:
    """Why `agent` cannot run here, or None."""
    binary = {"claude": AGENT_BINS / "claude", "codex": AGENT_BINS / "codex"}.get(agent)
    if binary and not binary.exists():
        return f"not installed (no {binary.relative_to(ROOT)}: scripts/test installs it)"
    return None


def report(results: dict) -> None:
    print(f"\nidle CPU over {results['seconds']:g} s, % of one core; target for supervise's processes < 0.5%")
    print("| agent | agent bare | agent under supervise | supervise's processes | ... with OTLP export on |")
    print("| --- | --- | --- | --- | --- |")
    for agent, a in results["agents"].items():
        if "skipped" in a:
            print(f"| {agent} | {a['skipped']} | | | |")
            continue
        print(
            f"| {agent} | {a['agent_bare_pct']:.2f}% | {a['agent_supervised_pct']:.2f}% | {a['supervise_pct']:.2f}% | "
            + (f"{a['supervise_exporting_pct']:.2f}% |" if a.get("supervise_exporting_pct") is not None else "— |")
        )
    print(f"\nmemory after {results['seconds']:g} s idle, PSS in MB; target for supervise's processes <= 60 MB")
    print("| agent | loop | job shell | recorder | MCP server | supervise | the agent |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for agent, a in results["agents"].items():
        m = a.get("memory")
        if m:
            cells = [f"{m[k]:.1f}" if m[k] is not None else "none" for k in (*ROLES, "supervise", "agent")]
            print(f"| {agent} | {' | '.join(cells)} |")
    t = results.get("ten")
    if t:
        print(
            f"\n{t['sessions']} {t['agent']} sessions at once ({t['running']} running): supervise {t['supervise_mb']:.0f} MB PSS"
            + (f" ({t['vs_ten_single']:.2f}x ten times one)" if t.get("vs_ten_single") else "")
            + f", the agents {t['agent_mb']:.0f} MB; {t['mcp_servers']} MCP servers; supervise's CPU {t['supervise_pct']:.2f}% of a core; "
            + ", ".join(f"{k} {v:.0f} ms" for k, v in t["cli_ms"].items())
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="idle time measured (60)")
    ap.add_argument("--only", choices=[*AGENTS, "ten"], action="append")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    chosen = args.only or [*AGENTS, "ten"]
    base = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    results: dict = {"seconds": args.seconds, "agents": {}}
    receiver = None
    try:
        from otlpreceiver import exporting

        on, receiver = exporting({})
        EXPORT.update(on)
    except ImportError:
        print("(no OTLP receiver here: opentelemetry-proto is not installed; no export rows)", file=sys.stderr)
    try:
        for agent in (a for a in chosen if a in AGENTS):
            why = installed(agent)
            if why:
                results["agents"][agent] = {"skipped": why}
                print(f"{agent:<8} skipped: {why}", flush=True)
                continue
            got = {}
            for supervised in MODES if receiver else MODES[:2]:
                got[supervised] = r = idle_cost(agent, base / f"{agent}-{supervised}", supervised, args.seconds)
                said = {False: "bare", True: "supervise", "export": "exporting"}[supervised]
                mem = f"   PSS supervise {r['memory']['supervise']:.1f} MB agent {r['memory']['agent']:.1f} MB" if "memory" in r else ""
                print(f"{agent:<8} {said:<10} supervise {r['supervise_pct']:6.2f}%   agent {r['agent_pct']:6.2f}%{mem}", flush=True)
            sup = got[True]
            results["agents"][agent] = {
                "agent_bare_pct": got[False]["agent_pct"],
                "agent_supervised_pct": sup["agent_pct"],
                "supervise_pct": sup["supervise_pct"],
                "supervise_exporting_pct": got["export"]["supervise_pct"] if "export" in got else None,
                "memory": sup["memory"],
                "rounds": sup["rounds"],
                "mcp_started": sup["mcp_started"],
                "version": version(agent),
            }
        if "ten" in chosen:
            why_toy = installed("claude") or (None if fits_ten() else "ten Claude Codes do not fit in the memory available (6 GB asked)")
            agent = "toy" if why_toy else "claude"
            t = results["ten"] = {**ten_sessions(agent, base / "ten", args.seconds), "why_toy": why_toy}
            single = results["agents"].get(agent, {}).get("memory")
            t["vs_ten_single"] = t["supervise_mb"] / (TEN * single["supervise"]) if single else None
    finally:
        shutil.rmtree(base, ignore_errors=True)
        if receiver is not None:
            receiver.stop()
    report(results)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
