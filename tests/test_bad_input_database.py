"""A database damaged inside, moved aside by hand, or on a read-only disk: every command that
meets the damage says so in the line `doctor` gives, with its fix; `doctor --repair` keeps
what can be read and brings back every session from its recording; the commands that only
read work on a read-only data directory. Real runs, real files, the real CLI."""

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SUPERVISE, run_cli, run_cli_unprivileged
from helpers import overwrite_pages, table_pages

CONTEXT_NOTE = "recordings hold no contexts: `supervise summarize ID` makes one"


def damage_line(db: Path) -> str:
    return (
        f"supervise: database {db} is damaged: SQLite cannot read all of it (hint: `supervise doctor --repair` keeps what is "
        f"readable, moves the damaged file aside and brings every recording back)"
    )


def incomplete_line(db: Path) -> str:
    return (
        f"supervise: database {db} is damaged: this answer may be incomplete (hint: `supervise doctor --repair` keeps what is "
        f"readable, moves the damaged file aside and brings every recording back)"
    )


def recorded(n: int) -> list[dict]:
    """`n` real sessions, oldest first."""
    for i in range(n):
        run_cli("--", "sh", "-c", f"echo hi-{i}", check=True)
    return list(reversed(json.loads(run_cli("sessions", "--json", check=True).stdout)))


def damage(db: Path, table: str) -> bytes:
    """Garbage over a page of `table` (one in the middle of it); the file's bytes after."""
    pages = table_pages(db, table)
    overwrite_pages(db, pages[len(pages) // 2 : len(pages) // 2 + 1])
    return db.read_bytes()


def folder_bytes(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted((home / "sessions").rglob("*")) if p.is_file()}


def exports(sessions: list[dict]) -> dict[str, str]:
    return {s["id"]: run_cli("export", s["id"], check=True).stdout for s in sessions}


def listed() -> list[dict]:
    return json.loads(run_cli("sessions", "--json", check=True).stdout)


# -- the damage is said, the same way, by every command ------------------------------------------


def test_every_command_that_meets_a_damaged_database_says_so_in_the_line_doctor_gives(home):
    sessions = recorded(4)
    db = home / "supervise.db"
    damaged = damage(db, "sessions")
    files = folder_bytes(home)
    sid = sessions[1]["id"]
    for args in (  # those that need the row on the damaged page refuse
        ["show", sid],
        ["export", sid],
        ["context", sid],
        ["export", sid, "-f", "json"],
        ["resume", sid],
    ):
        done = run_cli(*args)
        assert (done.returncode, done.stderr, done.stdout) == (1, damage_line(db) + "\n", ""), args
    # a list gives what it can read (here, none of the rows), and says it may be incomplete
    listing = run_cli("sessions", "--json")
    assert (listing.returncode, listing.stderr, json.loads(listing.stdout)) == (1, incomplete_line(db) + "\n", [])
    doctor = run_cli("doctor")
    assert doctor.returncode == 1
    at = doctor.stdout.splitlines().index(f"problem  database   database {db} is damaged: SQLite cannot read all of it")
    assert doctor.stdout.splitlines()[at + 1] == (
        " " * 20 + "fix: `supervise doctor --repair` keeps what is readable, moves the damaged file aside and brings every recording back"
    )
    assert db.read_bytes() == damaged and folder_bytes(home) == files  # nothing written over what is left


def test_a_run_that_meets_the_damage_says_it_in_the_same_line(home):
    recorded(3)
    db = home / "supervise.db"
    damage(db, "sessions")
    done = run_cli("--", "echo", "never-recorded")
    assert (done.returncode, done.stderr) == (1, damage_line(db) + "\n")
    assert "internal error" not in done.stderr


# -- doctor --repair ------------------------------------------------------------------------------


def test_repair_brings_every_session_back_from_a_damaged_database_and_keeps_the_damaged_file(home):
    sessions = recorded(4)
    before = exports(sessions)
    db = home / "supervise.db"
    with sqlite3.connect(db) as conn:
        events = conn.execute("select count(*) from events").fetchone()[0]
    damaged = damage(db, "sessions")
    files = folder_bytes(home)

    done = run_cli("doctor", "--repair")
    assert done.returncode == 0, done.stderr
    [aside] = [p for p in home.iterdir() if p.name.startswith("supervise.db.damaged-") and not p.name.endswith(("-wal", "-shm"))]
    assert done.stderr == (
        f"supervise: moved the damaged database to {aside}; kept 0 sessions, {events} events, 0 contexts; "
        f"re-imported 4 sessions from their recordings; {CONTEXT_NOTE}\n"
    )
    assert aside.read_bytes() == damaged
    back = {s["id"]: s for s in listed()}
    assert sorted(back) == sorted(s["id"] for s in sessions)
    for s in sessions:
        # (how it ended, from its exit event; every field: test_repair_facts.py)
        assert (back[s["id"]]["command"], back[s["id"]]["argv"], back[s["id"]]["status"]) == (s["command"], s["argv"], "completed")
    assert exports(sessions) == before
    assert folder_bytes(home) == files  # the recordings and their logs as they were

    again = run_cli("doctor", "--repair")
    assert (again.returncode, again.stderr) == (0, f"supervise: nothing to repair: the database {db} is sound and lists every recording\n")
    assert len(listed()) == 4
    assert "database" in run_cli("doctor").stdout and f"ok       database   {db} (4 sessions, integrity ok)" in run_cli("doctor").stdout


def test_repair_keeps_the_sessions_and_rebuilds_events_lost_on_a_bad_page(home):
    sessions = recorded(4)
    db = home / "supervise.db"
    damage(db, "events")
    assert run_cli("show", sessions[0]["id"]).stderr == incomplete_line(db) + "\n"

    done = run_cli("doctor", "--repair")
    [aside] = [p for p in home.iterdir() if p.name.startswith("supervise.db.damaged-") and not p.name.endswith(("-wal", "-shm"))]
    assert (done.returncode, done.stderr) == (
        0,
        f"supervise: moved the damaged database to {aside}; kept 4 sessions, 0 events, "
        "0 contexts; re-imported 0 sessions from their recordings; rebuilt the events "
        "of 4 kept sessions from their recordings\n",
    )
    kept = {s["id"]: s for s in listed()}
    for s in sessions:  # the rows as they were: status, exit code, directory
        assert {k: kept[s["id"]][k] for k in ("status", "exit_code", "cwd", "started")} == {
            k: s[k] for k in ("status", "exit_code", "cwd", "started")
        }
        shown = json.loads(run_cli("show", s["id"], "--json", check=True).stdout)
        assert [(e["kind"], e["detail"].get("exit_code", "-")) for e in shown["events"]] == [("start", "-"), ("exit", 0)]


def test_a_database_moved_aside_by_hand_is_rebuilt_from_the_recordings_with_their_text_logs(home):
    sessions = recorded(3)
    before = exports(sessions)
    db = home / "supervise.db"
    log = Path(sessions[0]["log_path"])
    log_before = log.read_bytes()
    log.unlink()
    files = folder_bytes(home)
    db.rename(home / "supervise.db.corrupt")
    for suffix in ("-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            Path(f"{db}{suffix}").rename(home / f"supervise.db.corrupt{suffix}")

    doctor = run_cli("doctor")
    assert (
        f"warn     database   {db} (0 sessions, integrity ok); 3 recordings are not in the database ({home / 'sessions'})"
        in doctor.stdout.splitlines()
    )
    assert " " * 20 + "fix: `supervise doctor --repair` brings them back" in doctor.stdout.splitlines()

    done = run_cli("doctor", "--repair")
    assert (done.returncode, done.stderr) == (
        0,
        f"supervise: the database {db} is sound; re-imported 3 sessions from their "
        f"recordings (1 text log rendered again); {CONTEXT_NOTE}\n"
        # the events that held the rest went with the database moved aside
        f"supervise: 3 sessions re-imported ({', '.join(s['id'] for s in sessions)}) without what neither their events "
        "nor their recordings hold: folder, project, branch, exit code (so it reads `interrupted`), options, agent (read from its command)\n",
    )
    assert sorted(s["id"] for s in listed()) == sorted(s["id"] for s in sessions)
    assert exports(sessions) == before
    assert log.read_bytes() == log_before  # the text log written again, as the live one was
    assert {k: v for k, v in folder_bytes(home).items() if k != str(log.relative_to(home))} == files
    search = json.loads(run_cli("show", sessions[0]["id"], "--json", check=True).stdout)
    assert search["command"] == "sh -c 'echo hi-0'" and search["events"][0]["kind"] == "start"

    again = run_cli("doctor", "--repair")
    assert again.stderr.startswith("supervise: nothing to repair") and len(listed()) == 3


def test_a_recording_that_cannot_be_read_is_named_and_left_as_it_is(home):
    recorded(1)
    bad = home / "sessions" / "zzzzzz"
    bad.mkdir(mode=0o700)
    (bad / "session.cast").write_bytes(b"\x00not a recording\n")
    done = run_cli("doctor", "--repair")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"supervise: the database {home / 'supervise.db'} is sound; re-imported 0 sessions from their recordings",
        f"supervise: could not re-import {bad}: {bad / 'session.cast'} is not an asciicast v2 file (hint: the folder is left as it is)",
    ]
    assert (bad / "session.cast").read_bytes() == b"\x00not a recording\n" and sorted(os.listdir(bad)) == ["session.cast"]


def test_a_database_is_not_repaired_under_a_session_still_running(home):
    recorded(2)
    db = home / "supervise.db"
    live = subprocess.Popen(
        [*SUPERVISE, "--", "sleep", "60"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not [s for s in listed() if s["status"] == "active"]:
            assert time.monotonic() < deadline and live.poll() is None, "the session never started"
            time.sleep(0.05)
        [running] = [s for s in listed() if s["status"] == "active"]
        damaged = damage(db, "events")
        done = run_cli("doctor", "--repair")
        assert (done.returncode, done.stderr) == (
            1,
            f"supervise: session {running['id']} is still running (pid {running['pid']}): "
            "its database is not repaired under it (hint: let it end (or `kill "
            f"{running['pid']}`), then run `supervise doctor --repair` again)\n",
        )
        assert db.read_bytes() == damaged and not [p for p in home.iterdir() if ".damaged-" in p.name]
    finally:
        os.killpg(live.pid, signal.SIGTERM)
        live.wait(30)


# -- a read-only data directory -------------------------------------------------------------------


@pytest.fixture
def read_only(home):
    """Three sessions in a data directory (and database) then made read-only; made writable again after."""
    sessions = recorded(3)
    run_cli("summarize", sessions[0]["id"], "--summary-backend", "heuristic", check=True)
    db = home / "supervise.db"
    with sqlite3.connect(db) as conn:
        conn.execute("pragma wal_checkpoint(truncate)")
    folders = [home, *[p for p in (home / "sessions").rglob("*") if p.is_dir()]]
    for folder in folders:
        folder.chmod(0o500)
    db.chmod(0o400)
    yield sessions
    for folder in folders:
        folder.chmod(0o700)
    db.chmod(0o600)


def test_commands_that_only_read_work_on_a_read_only_data_directory(home, read_only):
    sessions = read_only
    db = home / "supervise.db"
    before, names = db.read_bytes(), sorted(os.listdir(home))
    listed_ro = run_cli_unprivileged("sessions", "--json")
    assert listed_ro.returncode == 0, listed_ro.stderr
    assert [s["id"] for s in json.loads(listed_ro.stdout)] == [s["id"] for s in reversed(sessions)]
    sid = sessions[0]["id"]
    for args in (["sessions"], ["show", sid], ["ps"], ["db-path"]):
        done = run_cli_unprivileged(*args)
        assert (done.returncode, done.stderr) == (0, ""), (args, done.stderr)
    assert run_cli_unprivileged("export", sid).stdout == "hi-0\n"
    context = run_cli_unprivileged("context", sid)
    assert context.returncode == 0 and context.stdout.strip()
    doctor = run_cli_unprivileged("doctor")
    assert f"ok       database   {db} (3 sessions, integrity ok)" in doctor.stdout.splitlines()
    assert db.read_bytes() == before and sorted(os.listdir(home)) == names  # nothing made, nothing changed

    run = run_cli_unprivileged("--", "echo", "hi")
    assert (run.returncode, run.stderr) == (
        1,
        f"supervise: cannot write to data directory {home}: Permission denied (hint: set SUPERVISE_HOME to a writable directory)\n",
    )
    repair = run_cli_unprivileged("doctor", "--repair")
    assert (repair.returncode, repair.stderr) == (1, run.stderr)
    assert db.read_bytes() == before and sorted(os.listdir(home)) == names


def test_a_read_only_database_that_needs_a_migration_says_so(home):
    recorded(1)
    db = home / "supervise.db"
    with sqlite3.connect(db) as conn:  # as an older supervise left it: its last migration not yet run
        conn.execute("delete from _sqlite_migrations where name = (select max(name) from _sqlite_migrations)")
        conn.commit()
        conn.execute("pragma wal_checkpoint(truncate)")
    home.chmod(0o500)
    db.chmod(0o400)
    try:
        done = run_cli_unprivileged("sessions")
        assert (done.returncode, done.stderr) == (
            1,
            f"supervise: database {db} is read-only, and this supervise must upgrade its "
            f"schema to read it (hint: make {home} and the database writable and run "
            "any supervise command once, or read it with the supervise that wrote it)\n",
        )
    finally:
        home.chmod(0o700)
        db.chmod(0o600)
