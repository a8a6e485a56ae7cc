"""Shared parts of the per-agent fixture recorders (scripts/agents/AGENT.py).

Each recorder installs one release of a real agent CLI into a cache folder, runs it under
supervise in a real PTY against a fake model API on 127.0.0.1, drives it as a person would
(tests/agentdriver.Screen), and keeps each recording as tests/fixtures/AGENT/VERSION/NAME.cast.gz.
`scripts/bump_agents.py` runs them all for the newest releases.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from agentdriver import Screen  # noqa: E402

# The `chained` scenario: the user's original request, then a turn after each of three
# compactions (supervise types its context back in between). Distinct words, none of the
# fakes' markers, and none that look like compaction ("compact", "context").
CHAINED_TURNS = [
    "turn 1: write src/totals.py that adds up the amount column of data.csv",
    "turn 2: rename the total column in src/totals.py",
    "turn 3: add a --csv flag beside --json in src/export_csv.py",
    "turn 4: make the tests in tests/test_csv.py cover empty reports",
]

CACHE = Path(os.environ.get("SUPERVISE_AGENT_CACHE", Path.home() / ".cache" / "supervise-agents"))
FIXTURES = ROOT / "tests" / "fixtures"


def newest_npm(package: str) -> str:
    return subprocess.run(["npm", "view", package, "version"], capture_output=True, text=True, check=True).stdout.strip()


def newest_pypi(package: str) -> str:
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package], capture_output=True, text=True, check=True).stdout
    return out.split("(", 1)[1].split(")", 1)[0]  # "aider-chat (0.86.2)"


def install_npm(package: str, version: str, binary: str, ignore_scripts: bool = False) -> Path:
    """`npm install PACKAGE@VERSION` into CACHE/PACKAGE-VERSION; returns node_modules/.bin/BINARY."""
    prefix = CACHE / f"{package.replace('/', '+')}-{version}"
    exe = prefix / "node_modules" / ".bin" / binary
    if not exe.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        cmd = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", f"{package}@{version}"]
        if ignore_scripts:
            cmd.insert(2, "--ignore-scripts")
        subprocess.run(cmd, check=True)
    return exe


def install_pip(package: str, version: str, binary: str) -> Path:
    """PACKAGE==VERSION into a venv of its own at CACHE/PACKAGE-VERSION; returns its bin/BINARY."""
    venv = CACHE / f"{package}-{version}"
    exe = venv / "bin" / binary
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", f"{package}=={version}"], check=True)
    return exe


def wait_until(screen: Screen, done: Callable[[], bool], seconds: float, failure: Callable[[], str]) -> None:
    """Read the screen until `done()`; past `seconds`, fail with `failure()` (what the screen
    shows, for the one who reads the error)."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(failure())
        screen.pump(0.2)


def chained(screen: Screen, api, kit, given_answered: Callable[[object], int]) -> None:
    """The `chained` scenario for an agent with a compact command (its kit's COMPACT): the
    first turn, then for each later one its compaction, supervise typing its context at the
    prompt and the agent answering it (`given_answered(api)` counts those), then the turn."""
    kit.send(screen, CHAINED_TURNS[0], r"Reply to: turn 1")
    for text in CHAINED_TURNS[1:]:
        before = given_answered(api)
        screen.type(kit.COMPACT)
        wait_until(
            screen,
            lambda: given_answered(api) > before,
            90,
            lambda: f"no context typed after {kit.COMPACT}; the screen shows:\n{kit.view(screen)}",
        )
        kit.idle(screen)
        kit.hold(screen, 1.0)
        kit.send(screen, text, r"Reply to: " + re.escape(text[:12]))
    kit.quit(screen)


def supervise_argv() -> list[str]:
    """The supervise to record with: $SUPERVISE (a command line), else the one on PATH."""
    if os.environ.get("SUPERVISE"):
        return os.environ["SUPERVISE"].split()
    found = shutil.which("supervise")
    if found is None:
        sys.exit("supervise not found: install it (scripts/setup) or set SUPERVISE")
    return [found]


@contextmanager
def recording(
    name: str,
    argv: list[str],
    env: dict,
    cwd: Path,
    out: Path,
    cols: int = 120,
    rows: int = 40,
    given: list[tuple[str, dict]] | None = None,
) -> Iterator[Screen]:
    """Run `argv` under supervise (private SUPERVISE_HOME, keystrokes recorded) as a Screen;
    on exit, copy the session's recording to OUT/NAME.cast.gz.

    Nothing is typed by supervise itself (a fixture shows the agent as it is) unless `given`
    is a list: then supervise types its context back after each compaction (made by the
    heuristic, so no model is asked), and `given` receives (prompt, context) of each round it
    delivered, in order: what the agent echoes back of it is ours, not the session's."""
    sv = Path(tempfile.mkdtemp(prefix="sv-"))
    try:
        env = {**env, "SUPERVISE_HOME": str(sv)}
        inject = "off"
        if given is not None:
            inject = "type"
            env = {k: v for k, v in env.items() if not k.startswith("SUPERVISE_SUMMARY_")}
            env["SUPERVISE_SUMMARY_BACKEND"] = "heuristic"
        screen = Screen(
            ["--name", name, "--record-input", "--inject", inject, "--", *argv], env, cwd, cols=cols, rows=rows, supervise=supervise_argv()
        )
        try:
            yield screen
        finally:
            screen.close()
            time.sleep(0.5)
        casts = sorted(sv.glob("sessions/*/session.cast"), key=lambda p: p.stat().st_mtime)
        if not casts:
            raise RuntimeError(f"{name}: supervise recorded nothing")
        out.mkdir(parents=True, exist_ok=True)
        target = out / f"{name}.cast.gz"
        with open(casts[-1], "rb") as src, gzip.open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        print(f"recorded {target} ({target.stat().st_size} bytes)", flush=True)
        if given is not None:
            given.extend(delivered(sv, casts[-1].parent.name))
            print(f"{name}: supervise gave the agent {len(given)} context(s)", flush=True)
    finally:
        shutil.rmtree(sv, ignore_errors=True)


def delivered(home: Path, session_id: str) -> list[tuple[str, dict]]:
    """(prompt, context) of each round supervise typed into the session, in order (one it did
    not see taken was typed all the same: its echo is on screen too)."""
    from supervisor.store.database import Store

    store = Store.open_default({"SUPERVISE_HOME": str(home)})
    try:
        rows = {row["round"]: row for row in store.contexts(session_id)}
        rounds = [
            e["detail"]["round"]
            for e in store.events(session_id)
            if e["kind"] == "injection" and e["detail"].get("context_session") == session_id
        ]
        return [(rows[r]["prompt"], rows[r]["context"]) for r in rounds]
    finally:
        store.close()


def keep_record(out: Path, name: str, agent: str, env: dict, cwd: Path) -> None:
    """AGENT's own record of scenario NAME (the files its profile's transcript reader reads,
    in its folder for `cwd`) kept as OUT/record/NAME/, laid out as in that folder; a database
    copied whole, its write-ahead log folded in."""
    import sqlite3

    from supervisor import profiles

    reader = profiles.get(agent).transcript
    top, source = reader.folder(env, str(cwd)), reader.SOURCE
    found = (top.rglob("*") if source.recursive else top.glob("*")) if top.is_dir() else []
    files = sorted({f for f in map(source.followed, found) if f is not None and f.is_file()})
    target = out / "record" / name
    shutil.rmtree(target, ignore_errors=True)
    for f in files:
        copy = target / f.relative_to(top)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if f.suffix == ".db":
            with sqlite3.connect(f) as src, sqlite3.connect(copy) as dst:
                src.backup(dst)
            with sqlite3.connect(copy) as dst:
                dst.execute("VACUUM")
        else:
            shutil.copy(f, copy)
    if files:
        print(f"{name}: kept its own record ({len(files)} file(s)) in {target}", flush=True)


def save_given(out: Path, agent: str, version: str, name: str, given: list[tuple[str, dict]], requests: list[str] | None = None) -> None:
    """Write what supervise gave the agent into expected.json's entry for NAME.cast.gz
    (`given`, `given_contexts`); the other fields of the entry are kept, or left to be
    filled from `supervise patterns check` once the recording has been looked at."""
    import fixtureset

    spec = out / "expected.json"
    data = json.loads(spec.read_text(encoding="utf-8")) if spec.exists() else {"fixtures": {}}
    entry = data["fixtures"].setdefault(f"{name}.cast.gz", {"events": []})
    entry["given"] = [prompt for prompt, _ in given]
    entry["given_contexts"] = [context for _, context in given]
    if requests is not None:  # what was typed, where the screen does not tell it apart
        entry["requests"] = requests
    fixtureset.write(out, agent, version, data["fixtures"])


def main(record: Callable[[str, Path], None], newest: Callable[[], str], agent: str) -> None:
    """CLI of a recorder: AGENT.py [--version V] [--out DIR] [SCENARIO ...]."""
    import argparse

    ap = argparse.ArgumentParser(description=f"Record {agent} fixtures with the real program.")
    ap.add_argument("--version", help="the release to record (default: the newest)")
    ap.add_argument("--out", type=Path, help="where the recordings go (default: tests/fixtures/AGENT/VERSION)")
    ap.add_argument("--newest", action="store_true", help="print the newest release and exit")
    ap.add_argument("scenarios", nargs="*", help="only these")
    args = ap.parse_args()
    if args.newest:
        print(newest())
        return
    version = args.version or newest()
    out = args.out or FIXTURES / agent / version
    os.environ["RECORD_ONLY"] = json.dumps(args.scenarios)
    record(version, out)


def wanted(name: str) -> bool:
    only = json.loads(os.environ.get("RECORD_ONLY", "[]"))
    return not only or name in only
