"""`supervise ps`, from another process, following the real Claude Code (tests/agents) on a
subscription login through every state it shows: waiting, working, permission, compacting,
limited (and its usage limit as an event with the reset time, cleared when it works again)."""

import json
import subprocess
import threading
import time
from datetime import datetime, timezone


from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_login_env
from conftest import SUPERVISE, run_cli
from fakeapi import FakeAnthropic, default_reply, usage_limit
from helpers import latest, wait_for
from supervisor.store.database import Store

SOON = 2.0  # seconds: each state in `ps` within this of it showing on screen (its frame goes through the events thread; a loaded 2-core machine took 1.1 s)


class Watcher(threading.Thread):
    """`supervise ps --json` again and again, as another process would: when each state was
    first listed for the session."""

    def __init__(self, env: dict):
        super().__init__(daemon=True)
        self.env = env
        self.stop = threading.Event()
        self.seen: list[tuple[float, dict]] = []  # (when the listing was read, the session's row)

    def run(self) -> None:
        while not self.stop.is_set():
            out = subprocess.run([*SUPERVISE, "ps", "--json"], env=self.env, capture_output=True, text=True)
            rows = json.loads(out.stdout) if out.returncode == 0 else []
            if rows:
                self.seen.append((time.monotonic(), rows[0]))

    def listed(self, state: str, after: float, timeout: float = 15.0) -> dict:
        """The first row that lists `state` read after `after` (waits for it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for t, row in list(self.seen):
                if t >= after and row["state"] == state:
                    return {**row, "after": t - after}
            time.sleep(0.05)
        raise AssertionError(f"`ps` never listed {state!r}; it listed {[r['state'] for _, r in self.seen[-40:]]}")


def shown(screen: Screen, pattern: str, timeout: float = 60.0) -> float:
    """Pump the screen until its visible rows show `pattern`; when they did."""
    import re

    rx = re.compile(pattern)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.05)
        if rx.search("\n".join(line.text for line in screen.vt.view())):
            return time.monotonic()
    raise AssertionError(f"the screen never showed {pattern!r}:\n" + "\n".join(line.text for line in screen.vt.view()))


def test_ps_follows_claude_code_through_every_state_and_its_usage_limit(tmp_path, home):
    claude_bin()
    project = tmp_path / "work"
    project.mkdir()
    with FakeAnthropic() as api:
        api.add(lambda r: {**default_reply(r), "delay": 4.0}, match=lambda r: r.is_compaction, times=None)
        api.add(lambda r: {**default_reply(r), "delay": 4.0}, match=lambda r: "slow" in r.last_user_text())
        api.add(
            {
                "text": "I will clean the build.",
                "tool_use": {"name": "Bash", "input": {"command": "rm -rf build", "description": "Clean the build"}},
            },
            match=lambda r: r.has_tools and "clean" in r.last_user_text(),
        )
        reset = int(time.time()) + 25
        api.add(usage_limit(reset), match=lambda r: "limited" in r.last_user_text())
        # working 4 s, a second past SUPERVISE_NOTIFY_DONE_AFTER: a "done" whichever way the screen's timing falls
        api.add(lambda r: {**default_reply(r), "delay": 4.0}, match=lambda r: time.time() >= reset and not r.is_compaction, times=None)
        told = tmp_path / "told"
        env = {
            **claude_login_env(tmp_path / "claude-home", project, api.url),
            "SUPERVISE_HOME": str(home),
            # the user's notify command, a slow one: the session never waits for it
            "SUPERVISE_NOTIFY_COMMAND": f"sleep 0.5; echo {{id}} {{agent}} {{state}} {{reset_at}} >> {told}",
            "SUPERVISE_NOTIFY_DONE_AFTER": "3",
        }
        screen = Screen(["--", claude_bin(), "--model", CLAUDE_MODEL], env, project, cols=120, rows=30)
        watcher = Watcher(env)
        watcher.start()
        try:
            late = {}
            late["waiting"] = watcher.listed("waiting", shown(screen, IDLE))["after"]
            screen.type("turn 1: a slow one")
            late["working"] = watcher.listed("working", shown(screen, "esc to interrupt"))["after"]
            shown(screen, IDLE)
            screen.type("please clean the build")
            late["permission"] = watcher.listed("permission", shown(screen, r"Do you want to proceed\?"))["after"]
            screen.child.send("\x1b")  # Esc: refuse
            shown(screen, IDLE)
            screen.type("/compact")
            late["compacting"] = watcher.listed("compacting", shown(screen, "Compacting conversation"))["after"]
            shown(screen, r"Compacted", 60)
            shown(screen, IDLE)
            screen.type("turn 2: limited now")
            row = watcher.listed("limited", shown(screen, "Usage limit reached"))
            late["limited"] = row["after"]
            # the reset as Claude Code shows it: to the minute, in its zone
            assert datetime.fromisoformat(row["reset_at"]) == datetime.fromtimestamp(reset, timezone.utc).replace(second=0)
            assert row["agent"] == "claude" and row["cwd"] == str(project)
            # the user continues after the reset (Claude Code offers to continue by itself,
            # "Continuing shortly", but against the fake it did not within a minute): working
            # again clears the limit
            time.sleep(max(0.0, reset + 1 - time.time()))
            screen.type("continue")
            watcher.listed("working", shown(screen, "esc to interrupt"))
            shown(screen, IDLE)
            sid = latest()["id"]
            store = Store.open_default({"SUPERVISE_HOME": str(home)})
            try:
                events = wait_for(lambda: [e for e in store.events(sid) if e["kind"] in ("limit_reached", "limit_cleared")] or None, 10)
            finally:
                store.close()
            assert [e["kind"] for e in events][:2] == ["limit_reached", "limit_cleared"]
            assert events[0]["detail"]["reset_at"] == row["reset_at"]
            assert "5-hour limit" in events[0]["detail"]["text"]
        finally:
            watcher.stop.set()
            screen.child.sendcontrol("c")
            time.sleep(0.3)
            screen.child.sendcontrol("c")
            screen.close()
            watcher.join(10)

    # the user's command was run once per change worth telling, its placeholders filled
    def told_lines() -> list[str]:
        return told.read_text().splitlines() if told.exists() else []

    deadline = time.monotonic() + 10
    while len(told_lines()) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = told_lines()
    assert [line.split()[1:3] for line in lines] == [["claude", s] for s in ("done", "permission", "compacting", "limited", "done")]
    assert {line.split()[0] for line in lines} == {sid}
    assert lines[3].split()[3] == row["reset_at"]
    print(f"ps lists each state this long after the screen shows it: {late}")
    assert all(seconds <= SOON for seconds in late.values()), late
    # once the session is over it is not running
    assert json.loads(run_cli("ps", "--json", check=True).stdout) == []
