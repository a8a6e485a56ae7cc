"""Claude Code compacting an idle session by itself, under supervise, against the fake API.

Claude Code 2.1.299+ compacts a session of 100K+ tokens that has sat idle for 0.9 of the
1-hour prompt-cache lifetime (54 minutes), timed by the wall clock from its last request.
libfaketime moves Claude Code's wall clock (only its, not its timers) 53m45s forward while
the fake model answers the big turn, so the timer fires some 15 s after that turn ends."""

import json
from pathlib import Path

import pytest

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env
from conftest import require
from fakeapi import FakeAnthropic, default_reply
from helpers import latest, recorder_done, session, wait_for
from test_claude_e2e import (
    HEAD,
    SUMMARY,
    TASK,
    injections,
    is_summary_request,
    kinds,
    ours_in,
    quit_claude,
    turn_requests,
    turns,
    typed_ours,
)

FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")  # Debian's package `faketime`
JUMP = 54 * 60 - 15  # seconds: the idle timer (54 min after the request) then fires 15 s after the turn
SHM = Path("/dev/shm")
NOTICE = "Compacted while idle, before the prompt cache expired"
BIG = {"input_tokens": 12, "cache_read_input_tokens": 120_000, "output_tokens": 9}  # above the 100K floor, below auto-compact


def clock_shifted(bin_dir: Path, clock: Path) -> str:
    """A `claude` that runs the real one with its wall clock `clock`'s offset ahead; the
    preload is set here so that it reaches Claude Code and nothing of supervise's. (The
    programs Claude Code starts inherit it: its hook, which only passes JSON to supervise's
    socket, runs with the same clock.)"""
    bin_dir.mkdir()
    wrapper = bin_dir / "claude"
    preload = {
        "LD_PRELOAD": str(FAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(clock),
        "FAKETIME_NO_CACHE": "1",  # the offset is read at each call: the jump takes at once
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",  # timers and timeouts keep real time
        "NO_FAKE_STAT": "1",  # file times as they are
    }
    wrapper.write_text("#!/bin/sh\nexec env " + " ".join(f"{k}={v}" for k, v in preload.items()) + f' {claude_bin()} "$@"\n')
    wrapper.chmod(0o700)
    return str(wrapper)


@pytest.fixture
def shm_cleared():
    """libfaketime leaves a semaphore and a shared-memory file in /dev/shm for each process it
    ran in that did not exit cleanly (Claude Code, and each program it starts): removed after."""
    before = set(SHM.glob("*faketime_*"))
    yield
    for path in set(SHM.glob("*faketime_*")) - before:
        pid = path.name.rsplit("_", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            path.unlink(missing_ok=True)


def test_idle_compaction_is_detected_once_and_the_hook_gives_the_context_once(tmp_path, home, shm_cleared):
    require(FAKETIME.exists(), "libfaketime is not installed (apt-get install faketime)")
    claude_bin()
    project = tmp_path / "work"
    project.mkdir()
    clock = tmp_path / "clock"
    clock.write_text("+0\n")

    def big_turn(r):
        clock.write_text(f"+{JUMP}\n")  # while the request is in flight: it was sent before the jump
        return {**default_reply(r), "usage": BIG, "delay": 0.8}

    with FakeAnthropic() as api:
        api.add(lambda r: {**default_reply(r), "delay": 0.8}, match=lambda r: r.is_compaction, times=None)
        api.add(SUMMARY, match=is_summary_request, times=None)
        api.add(big_turn, match=lambda r: r.last_user_text().startswith("turn 3") and not r.is_compaction)
        env = {
            **claude_env(tmp_path / "claude-home", project, api.url),
            "SUPERVISE_HOME": str(home),
            "ENABLE_PROMPT_CACHING_1H": "1",  # a key's cache lives 5 minutes, and idle compaction needs 1 hour
            "CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "100000",
        }
        screen = Screen(["--", clock_shifted(tmp_path / "bin", clock), "--model", CLAUDE_MODEL], env, project)
        try:
            screen.wait(IDLE, 60)
            turns(screen, [1, 2, 3])
            # nobody types now: Claude Code compacts by itself, and says so
            wait_for(lambda: [r for r in api.messages() if r.is_compaction], 120, what="an idle compaction")
            screen.wait(NOTICE, 60)
            wait_for(lambda: injections(session(latest()["id"])), 60, what="the context given")
            screen.wait(IDLE, 60)
            turns(screen, [4])
        finally:
            quit_claude(screen)
        s = wait_for(lambda: (lambda s: s if s["status"] != "active" else None)(session(latest()["id"])), 20)
        recorder_done(s["id"])
        s = session(s["id"])
        compactions = [r for r in api.messages() if r.is_compaction]
        after = turn_requests(api, "turn 4")
    assert len(compactions) == 1
    # one compaction, seen on screen, in the transcript and by the hook, counted once
    assert [e["kind"] for e in kinds(s)] == ["compaction_started", "compaction_finished"], kinds(s)
    finished = kinds(s)[1]["detail"]
    assert finished["trigger"] == "auto" and {"transcript", "hook"} <= set(finished["sources"]), finished
    # given back once, through the hook, nothing typed into Claude Code
    [given] = injections(s)
    assert given["channel"] == "hook" and given["source"] == "compact" and given["reason"] == "compaction" and given["confirmed"]
    assert not [r for r in api.messages() if typed_ours(r)]
    assert after and all(ours_in(r) == 1 for r in after) and TASK in json.dumps(after[0].body)
    assert HEAD not in json.dumps(turn_requests(api, "turn 3")[-1].body)
    # the notice is Claude Code's, not the user's: no round took it for a request
    from supervisor.store.database import Store

    rows = Store.open_default().contexts(s["id"])
    assert rows and all(NOTICE not in json.dumps(r["context"], ensure_ascii=False) for r in rows)
    assert rows[-1]["context"]["latest_request"] == "turn 4: please say hello"
