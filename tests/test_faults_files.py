"""Fault suite, bad files: each a clear one-line error, and the rest still works.

| fault                                         | what is kept                                         |
| --------------------------------------------- | ---------------------------------------------------- |
| a truncated `.cast` (cut mid-line)            | everything before the cut: export and replay work    |
| a corrupt `.cast` (not asciicast at all)      | one line naming the file; the session list and the   |
|                                               | other sessions' exports work                         |
| a truncated database                          | the file as it was (never "repaired" over); one line |
|                                               | with the fix (`supervise doctor --repair`, in        |
|                                               | tests/test_bad_input_database.py); `patterns`        |
|                                               | commands and `doctor` still run                      |
| a pattern whose regex backtracks without end  | the session, the terminal and the other patterns:    |
|                                               | that pattern is turned off at its time limit, and    |
|                                               | the user is told which one                           |

(A pattern file that does not parse: tests/test_patterns.py::test_a_broken_pattern_file_*.)
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, which_or_skip
from helpers import latest, session, spawn

import pexpect


def _recorded(text: str) -> dict:
    run_cli("--", "sh", "-c", f"echo {text}", check=True)
    return latest()


def test_a_truncated_recording_keeps_all_before_the_cut(tmp_path):
    run_cli("--", "sh", "-c", "echo kept-before-the-cut; sleep 0.3; echo the-line-cut-in-half", check=True)
    s = latest()
    cast = Path(s["cast_path"])
    assert "the-line-cut-in-half" in cast.read_text().splitlines()[-1]
    lines = cast.read_bytes().splitlines(keepends=True)
    cast.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # a crash mid-write
    text = run_cli("export", s["id"], "--format", "text", check=True).stdout
    assert "kept-before-the-cut" in text
    # the real asciinema stops at a torn line; `export --format cast` writes a whole one
    repaired = tmp_path / "repaired.cast"  # (export never writes into the sessions folder)
    run_cli("export", s["id"], "--format", "cast", "-o", str(repaired), check=True)
    replay = subprocess.run([which_or_skip("asciinema"), "cat", str(repaired)], capture_output=True, text=True)
    assert replay.returncode == 0 and "kept-before-the-cut" in replay.stdout


def test_a_corrupt_recording_is_one_clear_line_and_the_rest_works():
    good = _recorded("the-good-one")
    bad = _recorded("the-bad-one")
    Path(bad["cast_path"]).write_bytes(b"\x00\xffnot a recording\n{{{\n")
    done = run_cli("export", bad["id"], "--format", "cast")
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("supervise: ") and bad["cast_path"] in lines[0] and "hint" in lines[0]
    assert "Traceback" not in done.stderr
    assert run_cli("export", good["id"], "--format", "text", check=True).stdout.count("the-good-one") >= 1
    listed = json.loads(run_cli("sessions", "--json", check=True).stdout)
    assert {good["id"], bad["id"]} <= {s["id"] for s in listed}


@pytest.mark.slow
def test_a_truncated_database_is_left_as_it_was_and_said_in_one_line(home):
    for i in range(20):
        _recorded(f"session-{i}")
    db = home / "supervise.db"
    subprocess.run(
        [sys.executable, "-c", f"import sqlite3; c = sqlite3.connect({str(db)!r}); c.execute('pragma wal_checkpoint(truncate)')"],
        check=True,
    )
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    before = db.read_bytes()
    for args in (["sessions"], ["--", "echo", "hi"], ["export", "x"]):
        done = run_cli(*args)
        assert done.returncode != 0, args
        said = done.stderr.strip().splitlines()
        assert len(said) == 1 and said[0].startswith(f"supervise: database {db} is damaged") and "supervise doctor --repair" in said[0], (
            args,
            done.stderr,
        )
    assert db.read_bytes() == before  # nothing written over it
    assert run_cli("patterns", "list").returncode == 0  # what does not need the database still runs
    doctor = run_cli("doctor")
    assert doctor.returncode == 1 and "database" in doctor.stdout and "supervise doctor --repair" in doctor.stdout


EVIL = r"""
[agent]
name = "slowpat"
title = "A pattern file with one bad regex"
commands = ["never-run-slowpat"]

[[patterns]]
name = "backtracks"
event = "compaction_started"
regex = '^(a+?)+?\1b'

[[patterns]]
name = "fine"
event = "compaction_finished"
regex = 'Conversation compacted'
"""

WORDY = r"""
import sys, time
print('a' * 30 + '!', flush=True)  # a line the bad regex backtracks on for ever
time.sleep(0.5)
print('Conversation compacted', flush=True)
line = sys.stdin.readline()
print('still answering: ' + line.strip(), flush=True)
"""


def test_a_backtracking_pattern_is_turned_off_and_the_session_goes_on(tmp_path):
    patterns = tmp_path / "slowpat.toml"
    patterns.write_text(EVIL)
    c = spawn(["--patterns", str(patterns), "--agent", "slowpat", "--inject", "off", "--", sys.executable, "-c", WORDY], cols=120)
    c.expect_exact("Conversation compacted", timeout=20)
    c.sendline("hello")
    c.expect_exact("still answering: hello", timeout=10)
    c.expect(pexpect.EOF, timeout=30)
    c.close()
    assert c.exitstatus == 0
    assert "supervise: pattern slowpat/backtracks took over" in c.before and "turned off" in c.before
    s = session(latest()["id"])
    kinds = [e["kind"] for e in s["events"]]
    assert "compaction_finished" in kinds  # the good pattern still works
    assert "a" * 30 + "!" in Path(s["log_path"]).read_text()
