"""The inspection commands, run as a user runs them (subprocess, real files)."""

import asyncio
import json
import os
import stat
import threading
from pathlib import Path

import pytest

from conftest import run_cli
from helpers import latest


@pytest.fixture
def two_sessions():
    run_cli("--name", "first", "--", "sh", "-c", "echo hello-first; exit 0", check=True)
    run_cli("--", "sh", "-c", "echo hello-second; exit 2")
    return latest()


def test_sessions_lists_newest_first_as_text_and_json(two_sessions):
    text = run_cli("sessions", check=True).stdout.splitlines()
    assert text[0].split()[:2] == ["ID", "STATUS"]
    assert text[1].startswith(two_sessions["id"]) and " failed " in text[1]
    assert "first: sh -c" in text[2]
    rows = json.loads(run_cli("sessions", "--json", check=True).stdout)
    assert [r["exit_code"] for r in rows] == [2, 0]
    for key in ("id", "name", "command", "agent", "cwd", "status", "started", "ended", "exit_code"):
        assert key in rows[0]
    assert rows[1]["name"] == "first" and rows[1]["agent"] == "sh" and rows[1]["cwd"] == os.getcwd()


def test_show_gives_the_session_with_its_events(two_sessions):
    sid = two_sessions["id"]
    data = json.loads(run_cli("show", sid[:4], "--json", check=True).stdout)
    assert data["id"] == sid
    kinds = [e["kind"] for e in data["events"]]
    assert kinds[0] == "start" and kinds[-1] == "exit"
    assert data["events"][-1]["detail"] == {"exit_code": 2}
    human = run_cli("show", sid, check=True).stdout
    assert f"id:               {sid}" in human and "exit_code:        2" in human and "start" in human


def test_export_formats(two_sessions, tmp_path):
    sid = two_sessions["id"]
    assert "hello-second" in run_cli("export", sid, check=True).stdout.splitlines()
    cast = run_cli("export", sid, "--format", "cast", check=True).stdout
    assert json.loads(cast.splitlines()[0])["version"] == 2
    out = tmp_path / "s.json"
    run_cli("export", sid, "-f", "json", "-o", str(out), check=True)
    data = json.loads(out.read_text())
    assert data["id"] == sid and "hello-second" in data["text"] and data["events"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_recorded_files_are_private(two_sessions, home):
    for p in [home, home / "sessions", Path(two_sessions["cast_path"]).parent]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    for p in [home / "supervise.db", Path(two_sessions["cast_path"]), Path(two_sessions["log_path"])]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["show", "zzzzzz"], 1, "supervise: no session matches 'zzzzzz' (hint: run `supervise sessions` to list ids)"),
        (["export", "zzzzzz"], 1, "supervise: no session matches"),
        (["export", "x", "--format", "pdf"], 2, "supervise: unknown format 'pdf' (hint: use one of: text, cast, json)"),
        ([], 2, "supervise: no command given"),
        (["run"], 2, "supervise: no command given"),
        (["--inject", "maybe", "--", "true"], 2, "supervise: unknown --inject mode 'maybe' (hint: use one of: auto, type, off)"),
        (["resume"], 2, "supervise: which session? (hint: give an id (`supervise sessions` lists them) or --last)"),
        (["resume", "zzzzzz"], 1, "supervise: no session matches 'zzzzzz'"),
        (["show"], 2, "supervise: which session? (hint: give an id (`supervise sessions` lists them))"),  # no terminal: no picker
        (["context", "--all"], 2, "supervise: which session? (hint: give an id (`supervise sessions` lists them))"),
    ],
)
def test_bad_input_gets_one_clear_line_and_a_non_zero_exit(args, code, message):
    p = run_cli(*args)
    assert p.returncode == code
    assert message in p.stderr
    assert "Traceback" not in p.stderr


def test_ambiguous_prefix(home):
    from supervisor.store.database import Store

    store = Store.open_default()
    store.create_session(id="qq2345", command="a", argv=["a"], cwd="/")
    store.create_session(id="qq2346", command="b", argv=["b"], cwd="/")
    p = run_cli("show", "qq")
    assert p.returncode == 1
    assert p.stderr.strip() == "supervise: 'qq' is ambiguous: it matches 2 sessions (qq2346, qq2345) (hint: type more characters of the id)"


def test_unwritable_data_dir_and_corrupt_database(tmp_path, home):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    p = run_cli("--", "echo", "hi", env={**os.environ, "SUPERVISE_HOME": str(blocker / "x")})
    assert p.returncode == 1
    assert p.stderr.strip().startswith("supervise: cannot write to data directory")
    assert "hint: set SUPERVISE_HOME" in p.stderr
    home.mkdir(parents=True)
    db = home / "supervise.db"
    db.write_bytes(b"garbage" * 1000)
    for args in (["sessions"], ["--", "echo", "hi"]):
        p = run_cli(*args)
        assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1
        assert "supervise doctor --repair" in p.stderr
    assert db.read_bytes() == b"garbage" * 1000


def test_supervisors_starting_at_once_all_make_the_data_directory(tmp_path):
    """`supervise ps` polled beside a session that is starting: whichever makes a level of a
    fresh data directory first, none of them fails for finding it made."""
    from supervisor.errors import SuperviseError
    from supervisor.paths import ensure_private_dir

    for i in range(100):
        target = tmp_path / f"home{i}" / "data" / "supervise"
        start = threading.Barrier(4)
        failed = []

        def make():
            start.wait()
            try:
                ensure_private_dir(target)
            except SuperviseError as exc:
                failed.append(exc)

        makers = [threading.Thread(target=make) for _ in range(4)]
        for t in makers:
            t.start()
        for t in makers:
            t.join()
        assert not failed, failed[0]
        assert stat.S_IMODE(target.stat().st_mode) == 0o700


def test_resume_starts_a_linked_session_with_the_same_command_and_cwd(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    run_cli("--", "sh", "-c", 'echo "args:$*:$(pwd)"', "sh", "a1", cwd=work, check=True)
    first = latest()
    p = run_cli("resume", first["id"], "--", "extra", check=True)
    assert f"args:a1 extra:{work}" in p.stdout
    second = latest()
    assert second["parent_id"] == first["id"] and second["cwd"] == str(work)
    p = run_cli("resume", "--last", check=True)
    assert f"args:a1 extra:{work}" in p.stdout
    shown = json.loads(run_cli("show", first["id"], "--json", check=True).stdout)
    assert shown["children"] == [second["id"]]
    assert "parent:" in run_cli("show", second["id"], check=True).stdout


def test_db_path_works_with_the_real_datasette(two_sessions, home):
    from datasette.app import Datasette

    path = run_cli("db-path", check=True).stdout.strip()
    assert path == str(home / "supervise.db")

    async def fetch():
        ds = Datasette([path])
        r = await ds.client.get("/supervise/sessions.json?_shape=array&_sort_desc=started")
        e = await ds.client.get("/supervise/events.json?_shape=array")
        return r.json(), e.json()

    sessions, events = asyncio.run(fetch())
    assert sessions[0]["id"] == two_sessions["id"]
    assert {e["kind"] for e in events} >= {"start", "exit"}


def test_export_redact_masks_secrets_in_every_format():
    key = "sk-ant-api03-Xq9vB2mK7pL4nR8sT1wY6zA3cE5gH0jU2iO4kM6nP8qR-AbCdEfGhIjKl"
    run_cli("--", "sh", "-c", f"echo 'ANTHROPIC_API_KEY={key}'; echo 'DB_PASSWORD=hunter2hunter2'", check=True)
    sid = latest()["id"]
    for fmt in ("text", "cast", "json"):
        plain = run_cli("export", sid, "-f", fmt, check=True).stdout
        masked = run_cli("export", sid, "-f", fmt, "--redact", check=True).stdout
        assert key in plain and key not in masked and "hunter2hunter2" not in masked, fmt
        assert "[REDACTED:anthropic-key]" in masked or "[REDACTED:env-secret]" in masked
    cast = run_cli("export", sid, "-f", "cast", "--redact", check=True).stdout.splitlines()
    assert all(json.loads(line) for line in cast)  # still a valid recording


def test_version_is_printed_for_the_flag_and_the_command():
    from supervisor import __version__

    for args in (["--version"], ["-V"], ["version"]):
        r = run_cli(*args)
        assert r.returncode == 0 and r.stdout == f"supervise {__version__}\n", args


def test_help_has_one_usage_line_and_flowing_sentences():
    wide = {**os.environ, "COLUMNS": "400"}
    top = run_cli("--help", env=wide).stdout
    assert top.count("Usage:") == 1 and "supervise [OPTIONS] -- AGENT [ARGS]... | COMMAND [ARGS]..." in top
    # a command's help is not broken where its docstring's lines were
    assert any(
        "agent and options; the agent's own conversation carried on" in line
        for line in run_cli("resume", "--help", env=wide).stdout.splitlines()
    )
    assert any("API key, Docker and Datasette" in line for line in top.splitlines())


def test_help_keeps_every_word_of_an_options_help():
    """Help is rendered as rich markup: a `[section]` of config.toml must not be taken for
    a style and vanish from the text."""
    out = run_cli("run", "--help", env={**os.environ, "COLUMNS": "400"}).stdout
    assert "Default: [limits] on_limit in config.toml, else notify." in out
    assert "Default: [notify] terminal in config.toml, else off." in out


def test_no_arguments_show_a_short_usage_and_the_most_used_commands():
    p = run_cli()
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert lines[0].startswith("Usage: supervise") and "supervise -- claude" in p.stderr and "supervise ps" in p.stderr
    assert lines[-1].startswith("supervise: no command given")
