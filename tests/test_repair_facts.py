"""`supervise doctor --repair` keeps every fact it can read: each table of a real database
damaged in turn (every one of its pages overwritten in the file), the repair run as a user
runs it, and every field of every session compared with what it was. And a command that
reads a damaged database gives what it can read, saying in one line that it may be
incomplete. Real sessions, real files, the installed CLI."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from conftest import run_cli
from helpers import overwrite_pages, table_pages

# The fields a repair cannot give back, and why. Every other field must come back as it was.
NOT_KEPT = {
    "pid": "the supervisor's process id, held by the row alone: it means something only while the session runs",
    "child_pid": "the agent's process id: the same",
    # a column being added beside this change: kept once the run puts it in its row before
    # the start event is sent (run/session.py sends every field of the row it plans)
    "project_key": "not yet in the row a run plans, so not in its start event",
}
# The end: the row's is written a moment after the exit event's time, which is what is kept.
ENDED_WITHIN = 1.0  # seconds
INCOMPLETE = "is damaged: this answer may be incomplete (hint: `supervise doctor --repair` keeps what is readable"
SAID_END = ", moves the damaged file aside and brings every recording back)"


def sessions(env: dict) -> dict[str, dict]:
    """Every session's row, its files named within the data folder (a copy's are its own)."""
    rows = {s["id"]: s for s in json.loads(run_cli("sessions", "--json", env=env, check=True).stdout)}
    for row in rows.values():
        for key in ("cast_path", "log_path"):
            row[key] = os.path.relpath(row[key], env["SUPERVISE_HOME"])
    return rows


def damage_all(db: Path, table: str) -> list[int]:
    """Garbage over every page of `table`; the pages damaged."""
    pages = table_pages(db, table)
    overwrite_pages(db, pages)
    return pages


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A data folder with real sessions: named, of an agent given by --agent, in a git repo
    on a branch, exited 3; plain ones exited 0; one of the demo agent's program run as
    `python3 -m demo_agent`, its agent named by the program it runs."""
    base = tmp_path_factory.mktemp("recorded")
    home = base / "home"
    env = {**os.environ, "SUPERVISE_HOME": str(home)}
    repo = base / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "feature-x"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
    assert run_cli("-n", "fixing", "--agent", "demo", "--", "sh", "-c", "echo zebra at work; exit 3", env=env, cwd=repo).returncode == 3
    plain = base / "plain"
    plain.mkdir()
    for i in range(3):
        run_cli("--", "sh", "-c", f"echo zebra {i}; seq 1 200", env=env, cwd=plain, check=True)
    (plain / "demo_agent.py").write_text("print('zebra from the demo agent')\n")  # the demo's program, as `python3 -m` runs it
    run_cli("--", sys.executable, "-m", "demo_agent", env=env, cwd=plain, check=True)
    before = sessions(env)
    assert len(before) == 5 and sorted(s["agent"] for s in before.values()) == ["demo", "demo", "sh", "sh", "sh"]
    [branch] = [s for s in before.values() if s["exit_code"] == 3]
    assert (branch["branch"], branch["name"], branch["status"]) == ("feature-x", "fixing", "failed")
    return home, before


def tables(db: Path) -> list[str]:
    """Every table of the database, the full-text indexes' own included."""
    with sqlite3.connect(db) as conn:
        names = [n for (n,) in conn.execute("select name from sqlite_master where type = 'table' and rootpage > 0 order by name")]
    return [n for n in names if not n.startswith("sqlite_")]


def test_every_table_damaged_in_turn_loses_no_fact_of_any_session(recorded, tmp_path):
    home, before = recorded
    damaged = tables(home / "supervise.db")
    assert {"sessions", "events", "contexts", "log_chunks", "log_chunks_fts_data"} <= set(damaged)
    for table in damaged:
        copy = tmp_path / table / "home"
        shutil.copytree(home, copy)
        env = {**os.environ, "SUPERVISE_HOME": str(copy)}
        assert damage_all(copy / "supervise.db", table), table
        done = run_cli("doctor", "--repair", env=env)
        assert done.returncode == 0, (table, done.stderr)
        assert "without what neither" not in done.stderr, (table, done.stderr)  # every fact was found
        after = sessions(env)
        assert sorted(after) == sorted(before), table
        for sid, was in before.items():
            now = after[sid]
            assert set(now) == set(was), table
            differ = {k: (was[k], now[k]) for k in was if k not in NOT_KEPT and k != "ended" and was[k] != now[k]}
            assert differ == {}, (table, sid, differ)
            gap = abs((datetime.fromisoformat(was["ended"]) - datetime.fromisoformat(now["ended"])).total_seconds())
            assert gap < ENDED_WITHIN, (table, sid, was["ended"], now["ended"])
        # scoped to the project, search finds the sessions again
        found = run_cli("search", "zebra", "--json", env=env, cwd=before[next(iter(before))]["cwd"])
        assert found.returncode == 0 and json.loads(found.stdout), (table, found.stderr)


def test_sessions_from_recordings_alone_say_what_they_lack(recorded, tmp_path):
    """Both the rows and the events lost: what the recordings hold comes back, and the
    repair names what they do not."""
    home, before = recorded
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    env = {**os.environ, "SUPERVISE_HOME": str(copy)}
    for table in ("sessions", "events"):
        damage_all(copy / "supervise.db", table)
    done = run_cli("doctor", "--repair", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    lacking = [line for line in lines if "without what neither" in line]
    assert lacking == [
        f"supervise: 5 sessions re-imported ({', '.join(sorted(before, key=lambda i: before[i]['started']))}) without what "
        "neither their events nor their recordings hold: folder, project, branch, exit code (so it reads `interrupted`), options, agent (read from its command)"
    ], lines
    after = sessions(env)
    for sid, was in before.items():
        now = after[sid]
        assert {k: now[k] for k in ("name", "command", "argv", "agent")} == {k: was[k] for k in ("name", "command", "argv", "agent")} or (
            was["name"] == "fixing" and now["agent"] == "sh"  # --agent is said only by its start event
        ), (sid, now)
        assert (now["cwd"], now["exit_code"], now["status"]) == ("", None, "interrupted")


def test_show_and_search_over_a_damaged_database_give_what_they_can_read_and_say_so(recorded, tmp_path):
    home, before = recorded
    sid = next(s for s, row in before.items() if row["exit_code"] == 3)
    cwd = before[sid]["cwd"]
    for table, args in (
        ("events", ["show", sid, "--json"]),
        ("log_chunks_fts_data", ["search", "--all", "zebra"]),
        ("sessions", ["sessions"]),
    ):
        copy = tmp_path / table / "home"
        shutil.copytree(home, copy)
        env = {**os.environ, "SUPERVISE_HOME": str(copy)}
        damage_all(copy / "supervise.db", table)
        done = run_cli(*args, env=env, cwd=cwd)
        db = copy / "supervise.db"
        said = [line for line in done.stderr.splitlines() if INCOMPLETE in line]
        assert (done.returncode, said) == (1, [f"supervise: database {db} {INCOMPLETE}{SAID_END}"]), (table, done.stderr)
        if table == "events":  # the session's row, read past the damage, with no events
            shown = json.loads(done.stdout)
            assert (shown["id"], shown["cwd"], shown["events"]) == (sid, cwd, [])
        elif table == "sessions":  # every row was on the damaged page: none to list, and said
            assert "zebra" not in done.stdout
