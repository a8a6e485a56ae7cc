"""Secrets stay in the session's private files: the database, which every door shows (the
CLI, MCP, Datasette and its SQL, telemetry), holds the record masked; command lines are shown
masked and the recorder's own command line carries nothing of the session's; `resume` runs
the command as it was typed. An older database is masked once, said in one line. Real
sessions, a real database file."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import SUPERVISE, run_cli
from helpers import latest, session, wait_for
from procs import children, is_recorder

ANTHROPIC = "sk-ant-api03-" + "Wq3rT8yU1iO5pA9sD2fG6hJ0kL4zX7cV" * 3
GITHUB = "ghp_" + "Zr8Lm2Qx7Vb4Nc9Kp1Hs6Jd3Tf5Wg0Ya2EuQ"
PASSWORD = "hunter2-correct-horse"
WROTE = "import sys; open(sys.argv[-1], 'a').write(' '.join(sys.argv[1:-1]) + '\\n'); print('token', sys.argv[2])"


def everything_in(db: Path) -> str:
    """Every value of every table of the database, as text."""
    with sqlite3.connect(db) as conn:
        return "\n".join(conn.iterdump())


def test_command_lines_are_shown_masked_and_resume_runs_them_as_typed(tmp_path, home):
    got = tmp_path / "argv.txt"
    run_cli(
        "--name", f"release {GITHUB}", "--",
        sys.executable, "-c", WROTE, f"--api-key={ANTHROPIC}", GITHUB, "--password", PASSWORD, str(got),
        check=True, cwd=tmp_path,
    )  # fmt: skip
    sid = latest()["id"]
    typed = f"--api-key={ANTHROPIC} {GITHUB} --password {PASSWORD}"
    shown = [
        run_cli("sessions", check=True).stdout,
        run_cli("sessions", "--json", check=True).stdout,
        run_cli("show", sid, check=True).stdout,
        run_cli("show", sid, "--json", check=True).stdout,
        json.dumps(session(sid)),
        everything_in(home / "supervise.db"),
    ]
    for text in shown:
        for secret in (ANTHROPIC, GITHUB, PASSWORD):
            assert secret not in text and secret[-10:] not in text
    assert "--api-key=[REDACTED:option-value]" in shown[1] and "--password '[REDACTED:option-value]'" in shown[1]
    # a search for a secret finds nothing; the index holds the line masked
    assert run_cli("search", GITHUB, cwd=tmp_path).returncode == 1
    assert "[REDACTED:github-token]" in run_cli("search", "token", check=True, cwd=tmp_path).stdout
    # the command as typed is in the session's private folder, and resume runs it
    kept = home / "sessions" / sid / "command.json"
    assert kept.stat().st_mode & 0o777 == 0o600 and GITHUB in kept.read_text()
    run_cli("resume", sid, check=True, cwd=tmp_path)
    assert got.read_text().splitlines() == [typed, typed]


def test_the_recorder_is_told_in_a_private_file_not_on_its_command_line(tmp_path, home):
    gate = tmp_path / "gate"
    script = f"echo {GITHUB}; while [ ! -e {gate} ]; do sleep 0.05; done"
    proc = subprocess.Popen(
        [*SUPERVISE, "--", "sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        recorder = wait_for(lambda: next((p for p in children(proc.pid) if is_recorder(p)), None), what="the recorder")
        cmdline = Path(f"/proc/{recorder}/cmdline").read_bytes().decode()
        assert GITHUB not in cmdline and "sleep" not in cmdline and "echo" not in cmdline
        told = Path(cmdline.split("\0")[4])
        assert told.name == "recorder.json" and told.stat().st_mode & 0o777 == 0o600
    finally:
        gate.touch()
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_an_older_database_is_masked_once_said_in_one_line(tmp_path, home):
    """As a database written before supervise masked what it stores: every table holds the
    secrets in the clear. The first command masks them all, says so once; search finds none;
    the command as it was typed is kept for resume."""
    run_cli("--", "sh", "-c", "echo the heron line", check=True, cwd=tmp_path)
    sid = latest()["id"]
    db = home / "supervise.db"
    raw = ["sh", "-c", f"echo {GITHUB}", "--token", PASSWORD]
    (home / "sessions" / sid / "command.json").unlink()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "update sessions set command = ?, argv = ?, name = ? where id = ?", [" ".join(raw), json.dumps(raw), f"n {ANTHROPIC}", sid]
        )
        conn.execute("update events set detail = ? where session_id = ? and kind = 'start'", [json.dumps({"argv": raw}), sid])
        conn.execute("update log_chunks set text = text || ? where session_id = ?", [f"key {ANTHROPIC}\n", sid])
        conn.execute("delete from _sqlite_migrations where name = 'm014_secrets_masked'")
    assert ANTHROPIC in everything_in(db)
    first = run_cli("sessions", check=True)
    lines = first.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("supervise: masking secrets in the database and its search index, once:"), lines
    assert run_cli("sessions", check=True).stderr == ""  # once
    text = everything_in(db)
    for secret in (ANTHROPIC, GITHUB, PASSWORD):
        assert secret not in text
    assert run_cli("search", ANTHROPIC, cwd=tmp_path).returncode == 1
    assert sid in run_cli("search", "heron", check=True, cwd=tmp_path).stdout
    assert json.loads((home / "sessions" / sid / "command.json").read_text()) == raw
