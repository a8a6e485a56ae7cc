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


def supervise_argv() -> list[str]:
    """The supervise to record with: $SUPERVISE (a command line), else the one on PATH."""
    if os.environ.get("SUPERVISE"):
        return os.environ["SUPERVISE"].split()
    found = shutil.which("supervise")
    if found is None:
        sys.exit("supervise not found: install it (scripts/setup) or set SUPERVISE")
    return [found]


@contextmanager
def recording(name: str, argv: list[str], env: dict, cwd: Path, out: Path, cols: int = 120, rows: int = 40) -> Iterator[Screen]:
    """Run `argv` under supervise (private SUPERVISE_HOME, keystrokes recorded, nothing typed
    by supervise itself: a fixture shows the agent as it is) as a Screen; on exit, copy the
    session's recording to OUT/NAME.cast.gz."""
    sv = Path(tempfile.mkdtemp(prefix="sv-"))
    try:
        env = {**env, "SUPERVISE_HOME": str(sv)}
        screen = Screen(["--name", name, "--record-input", "--inject", "off", "--", *argv], env, cwd, cols=cols, rows=rows, supervise=supervise_argv())
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
    finally:
        shutil.rmtree(sv, ignore_errors=True)


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
