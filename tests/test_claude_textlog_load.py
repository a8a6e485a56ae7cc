"""The text log under load, with the real Claude Code: every reply and every typed line that
was on screen is in the log, both as the recorder wrote it live and as rendered again from
the recording after exit, while another process keeps a core busy, and in the order they
were seen.

Claude Code redraws its whole view on every change; with the machine busy, the recorder's
render thread falls behind and joins output events to catch up, which is where a line shown
between two joined frames could be lost.
"""

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env
from fakeapi import FakeAnthropic
from helpers import latest, session, wait_for
from supervisor.recording.export import render_cast

RUNS = int(os.environ.get("SUPERVISE_LOAD_RUNS", "8"))  # 120 turns; SUPERVISE_LOAD_RUNS=20 or more for a soak
TURNS = 15


def burn(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def expected(i: int) -> tuple[str, str]:
    said = f"turn {i}: please say hello number {i} to the whole team"
    return f"❯ {said}", f"● Reply to: {said}"


def one_run(tmp_path: Path, home: Path, run: int) -> tuple[list[str], list[str]]:
    project = tmp_path / f"work{run}"
    project.mkdir()
    with FakeAnthropic() as api:
        env = {**claude_env(tmp_path / f"claude-home{run}", project, api.url), "SUPERVISE_HOME": str(home)}
        screen = Screen(["--", claude_bin(), "--model", CLAUDE_MODEL], env, project, cols=120, rows=30)
        screen.wait(IDLE, 60)
        for i in range(1, TURNS + 1):
            typed, reply = expected(i)
            screen.type(typed[2:])
            screen.wait(reply.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?"), 60)
            screen.wait(IDLE, 60)
        screen.child.sendcontrol("c")
        time.sleep(0.3)
        screen.child.sendcontrol("c")
        screen.close()
    s = wait_for(lambda: (lambda x: x if x["status"] != "active" else None)(session(latest()["id"])), 30)
    missing, disordered = [], []
    live = Path(s["log_path"]).read_text(encoding="utf-8").splitlines()
    again = list(render_cast(Path(s["cast_path"])))
    for name, lines in (("live", live), ("after exit", again)):
        at = 0
        for i in range(1, TURNS + 1):
            for line in expected(i):
                if line not in lines:
                    missing.append(f"run {run}, {name} log: {line!r}")
                    continue
                try:
                    at = lines.index(line, at) + 1
                except ValueError:
                    disordered.append(f"run {run}, {name} log: {line!r}")
    return missing, disordered


@pytest.mark.timeout(60 + RUNS * 45)  # about 10 s a run here; the suite's 120 s is for one session
def test_every_reply_and_typed_line_is_in_the_log_while_the_machine_is_busy(tmp_path, home):
    claude_bin()
    stop = multiprocessing.Event()
    burner = multiprocessing.Process(target=burn, args=(stop,), daemon=True)
    burner.start()
    missing, disordered = [], []
    try:
        for run in range(1, RUNS + 1):
            lost, late = one_run(tmp_path, home, run)
            missing += lost
            disordered += late
    finally:
        stop.set()
        burner.join(5)
    assert not missing, f"{len(missing)} lines lost in {RUNS} runs of {TURNS} turns: {missing[:10]}"
    assert not disordered, f"{len(disordered)} lines logged out of order in {RUNS} runs of {TURNS} turns: {disordered[:10]}"
