"""`supervise doctor`, run as a user runs it (the installed CLI, a private home, real files,
a real HTTP server for the API, the real Claude Code and Docker where there are)."""

import json
import os
import socket
import sqlite3
import stat
from pathlib import Path

import pytest

from conftest import require, run_cli
from fakeapi import FakeAnthropic
from helpers import spawn
from supervisor.detection import patterns
from supervisor.doctor import agents, checks, machine, services
from supervisor.doctor.report import Check
from supervisor.recording import asciicast
from supervisor.terminal import pty_loop

KEY = "sk-ant-api03-" + "Zq7" * 30 + "wxyz"


def doctor_env(tmp_path, **extra):
    """The user's environment without any API settings, with a config dir of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY_"))}
    env.update(SUPERVISE_CONFIG=str(tmp_path / "config"), **extra)
    return env


def run_doctor(tmp_path, *args, **extra):
    return run_cli("doctor", *args, env=doctor_env(tmp_path, **extra))


def line(out: str, name: str) -> str:
    found = [l for l in out.splitlines() if l[9:].startswith(name + " ")]
    assert found, f"no {name} line in:\n{out}"
    return found[0]


def fix_after(out: str, name: str) -> str:
    lines = out.splitlines()
    following = lines[lines.index(line(out, name)) + 1]
    assert following.lstrip().startswith("fix: "), following
    return following.strip()


# -- decisions over data ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "printed, version",
    [
        ("2.1.330 (Claude Code)\n", "2.1.330"),
        ("codex-cli 0.169.0\n", "0.169.0"),
        ("0.61.0\n", "0.61.0"),
        ("1.18.33\n", "1.18.33"),
        ("aider 0.86.2\n", "0.86.2"),
        ("\x1b[1mcodex-cli\x1b[0m 0.170.0-alpha.3\n", "0.170.0-alpha.3"),
        ("Usage: thing [options]\n", None),
    ],
)
def test_the_version_is_read_from_what_each_agent_prints(printed, version):
    assert agents.parse_version(printed) == version


def test_an_installed_version_is_compared_with_the_versions_the_shipped_patterns_were_seen_on(tmp_path):
    sets = patterns.load_all(env={"SUPERVISE_CONFIG": str(tmp_path)})
    claude = agents.verified_versions(sets["claude"])
    assert {"2.1.197", "2.1.330"} <= set(claude)  # "2.1.330 binary" counts as 2.1.330
    assert agents.verified_versions(sets["codex"]) == ["0.169.0", "0.171.0"]
    assert agents.agent_verdict("claude", "/bin/claude", "2.1.330 (Claude Code)", None, claude).status == "ok"
    assert agents.agent_verdict("claude", "/bin/claude", "1.0.44 (Claude Code)", None, ["1.0.x", "2.1.330"]).status == "ok"
    newer = agents.agent_verdict("codex", "/bin/codex", "codex-cli 0.170.0", None, ["0.169.0"])
    assert (newer.status, newer.detail) == ("warn", "/bin/codex: patterns verified on 0.169.0; you have 0.170.0")
    assert "supervise patterns check" in newer.fix
    assert agents.agent_verdict("aider", None, None, None, ["0.86.2"]).status == "warn"
    slow = agents.agent_verdict("aider", "/bin/aider", None, "did not answer in 15 s", ["0.86.2"])
    assert slow.status == "warn" and "did not answer" in slow.detail


def test_a_key_is_shown_masked_only():
    assert services.mask(KEY) == "sk-ant-…wxyz"
    assert services.mask("short-key") == "…"


def test_docker_errors_from_the_real_sdk_name_the_fix(tmp_path):
    import docker

    def error(host):
        with pytest.raises(docker.errors.DockerException) as caught:
            docker.DockerClient(base_url=host, timeout=5).ping()
        return str(caught.value)

    missing = services.docker_unreachable(error(f"unix://{tmp_path}/none.sock"))
    assert missing.status == "warn" and "apt install docker.io" in missing.fix
    dead = tmp_path / "dead.sock"  # a socket file nothing listens on: a stopped daemon
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(dead))
    s.close()
    stopped = services.docker_unreachable(error(f"unix://{dead}"))
    assert stopped.status == "warn" and "not running" in stopped.detail and "systemctl start docker" in stopped.fix


def test_a_package_built_without_a_c_compiler_is_a_warning_with_the_fix():
    check = machine.native_verdict(["the PTY loop's copy", "the recording's escapes"])
    assert check.status == "warn" and check.detail == (
        "built without a C compiler: the PTY loop's copy and the recording's escapes in Python, so floods of output pass slower"
    )
    assert "apt install gcc python3-dev" in check.fix and "reinstall" in check.fix


def test_a_check_that_raises_is_a_problem_row_and_the_others_still_run():
    def broken():
        raise KeyError("lost")

    assert checks.guarded("docker", broken) == [
        Check(
            "docker",
            "problem",
            "the check itself failed: KeyError('lost')",
            "rerun with SUPERVISE_DEBUG=1 for the traceback, and report it",
        )
    ]
    assert checks.guarded("native", machine.native) == [machine.native()]


# -- the command --------------------------------------------------------------------------------


def test_a_healthy_home_is_ok_and_exits_0(tmp_path, home):
    p = run_doctor(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert line(p.stdout, "data dir").startswith(f"ok       data dir   {home} (created, private, writable")
    db = home / "supervise.db"
    assert line(p.stdout, "database") == f"ok       database   {db} (0 sessions, integrity ok)"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    for name in ("patterns", "hook"):
        assert line(p.stdout, name).startswith("ok "), p.stdout
    require(pty_loop.native is not None and asciicast.ESCAPES_IN_C, "the C parts were not built")
    assert line(p.stdout, "native").startswith("ok       native     the PTY loop's copy of output and the recording's escapes run in C")
    assert line(p.stdout, "terminal").startswith("warn ")  # pipes here: a warning, not a problem
    assert line(p.stdout, "api").startswith("warn     api        no API key")
    assert not [l for l in p.stdout.splitlines() if l.startswith("problem")]
    assert p.stderr.startswith("supervise doctor: 0 problems")

    run_cli("--", "sh", "-c", "echo one session", check=True)
    again = run_doctor(tmp_path)
    assert line(again.stdout, "database") == f"ok       database   {db} (1 session, integrity ok)"
    assert sorted(os.listdir(home)) == ["sessions", "supervise.db"]  # the probe file is gone


def test_json_gives_every_check_with_its_status(tmp_path):
    p = run_doctor(tmp_path, "--json")
    checks = json.loads(p.stdout)
    assert p.returncode == 0
    names = [c["name"] for c in checks]
    assert names[:6] == ["terminal", "native", "data dir", "database", "config", "patterns"]
    assert {"claude", "codex", "gemini", "opencode", "aider", "hook", "notify", "api", "docker", "datasette"} <= set(names)
    assert all(c["status"] in ("ok", "warn", "problem") and set(c) == {"name", "status", "detail", "fix"} for c in checks)


def test_in_a_terminal_it_says_the_terminal_is_ok(tmp_path):
    no_api = {k: "" for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SUPERVISE_SUMMARY_API_KEY")}
    child = spawn(["doctor"], cols=100, rows=30, env={"SUPERVISE_CONFIG": str(tmp_path / "config"), **no_api})
    child.expect(r"(\w+) +terminal +(.*?)\r\n")
    assert (child.match.group(1), child.match.group(2)) == ("ok", "xterm-256color, 100x30")
    child.expect("supervise doctor: ")
    child.expect(r"\r\n")
    child.close()


def test_a_corrupt_database_is_a_problem_with_the_command_that_repairs_it_and_is_left_untouched(tmp_path, home):
    home.mkdir(mode=0o700)
    db = home / "supervise.db"
    garbage = b"this is not a database\x00\xff" * 300
    db.write_bytes(garbage)
    p = run_doctor(tmp_path)
    assert p.returncode == 1
    assert line(p.stdout, "database") == f"problem  database   database {db} is damaged: SQLite cannot read all of it"
    assert fix_after(p.stdout, "database") == (
        "fix: `supervise doctor --repair` keeps what is readable, moves the damaged file aside and brings every recording back"
    )
    assert line(p.stdout, "data dir").startswith("ok ")
    assert db.read_bytes() == garbage
    assert os.listdir(home) == ["supervise.db"]
    assert p.stderr.startswith("supervise doctor: 1 problem,")


def test_a_broken_user_pattern_file_is_a_problem_naming_the_file(tmp_path):
    mine = tmp_path / "config" / "patterns" / "mine.toml"
    mine.parent.mkdir(parents=True)
    mine.write_text('[agent]\nname="claude"\n[[patterns]]\nname="oops"\nevent="idle_prompt"\nregex="[unclosed"\n')
    p = run_doctor(tmp_path)
    assert p.returncode == 1
    assert line(p.stdout, "patterns") == (
        f"problem  patterns   pattern file {mine}, pattern 'oops': bad regex '[unclosed': unterminated character set at position 0"
    )
    assert fix_after(p.stdout, "patterns") == f"fix: fix the regex (Python `re` syntax), or remove {mine}"


@pytest.fixture
def api():
    with FakeAnthropic() as fake:
        fake.keys = {KEY}
        yield fake


def test_a_key_the_api_accepts_is_ok_and_never_shown(tmp_path, api):
    p = run_doctor(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api.url)
    assert p.returncode == 0
    assert line(p.stdout, "api") == f"ok       api        key sk-ant-…wxyz accepted by {api.url} (summaries by claude-haiku-4-5)"
    asked = [r for r in api.requests if r.path == "/v1/models"]
    assert len(asked) == 1 and KEY in (asked[0].headers.get("x-api-key", "") + asked[0].headers.get("authorization", ""))
    assert KEY not in p.stdout + p.stderr and KEY[-12:] not in p.stdout + p.stderr
    as_json = run_doctor(tmp_path, "--json", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api.url).stdout
    assert (
        KEY not in as_json and {"name": "api", "status": "ok"}.items() <= next(c for c in json.loads(as_json) if c["name"] == "api").items()
    )


def test_a_local_model_server_needs_no_key_and_is_said_to_be_local(tmp_path, api):
    p = run_doctor(tmp_path, SUPERVISE_SUMMARY_BASE_URL=api.url)
    assert line(p.stdout, "api") == (
        f"ok       api        local: {api.url}, no key needed (summaries by claude-haiku-4-5; nothing leaves this machine)"
    )
    assert f"auto → api (a local model server at {api.url})" in line(p.stdout, "summary")
    assert [r.path for r in api.requests] == ["/v1/models"]


def test_a_refused_key_is_a_problem(tmp_path, api):
    wrong = "sk-ant-api03-" + "Nope" * 20 + "9876"
    p = run_doctor(tmp_path, SUPERVISE_SUMMARY_API_KEY=wrong, SUPERVISE_SUMMARY_BASE_URL=api.url)
    assert p.returncode == 1
    assert line(p.stdout, "api") == f"problem  api        {api.url} refused the key sk-ant-…9876 (401)"
    assert "ANTHROPIC_API_KEY" in fix_after(p.stdout, "api")
    assert wrong not in p.stdout + p.stderr


def test_a_base_url_where_nothing_listens_is_a_problem_at_once(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()
    p = run_doctor(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
    assert p.returncode == 1
    # refused at once, not waited for: a timeout would say "no answer from ... in 10 s"
    assert line(p.stdout, "api").startswith(f"problem  api        cannot reach {url}: ")
    assert "base URL" in fix_after(p.stdout, "api") and KEY not in p.stdout


def test_an_agent_cli_of_an_unverified_version_is_a_warning_with_the_verified_ones(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    codex = bin_dir / "codex"  # prints its version with escape sequences around it, as some do
    codex.write_text('#!/bin/sh\nprintf "\\033]0;title\\007codex-cli 9.9.9\\033[31m\\n"\n')
    codex.chmod(0o755)
    p = run_doctor(tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    assert p.returncode == 0
    assert line(p.stdout, "codex") == f"warn     codex      {codex}: patterns verified on 0.169.0, 0.171.0; you have 9.9.9"
    assert "supervise patterns check" in fix_after(p.stdout, "codex")
    assert "\x1b" not in p.stdout and "\x07" not in p.stdout


def test_the_real_claude_code_is_ok_at_the_version_its_patterns_were_verified_on(tmp_path):
    from agentdriver import CLAUDE_VERSION, claude_bin

    claude = Path(claude_bin())
    (tmp_path / "claude-home").mkdir()
    p = run_doctor(tmp_path, PATH=f"{claude.parent}:{os.environ['PATH']}", HOME=str(tmp_path / "claude-home"))
    got = line(p.stdout, "claude")
    assert got.startswith(f"ok       claude     {CLAUDE_VERSION} at {claude} (patterns verified on "), got


def test_with_the_docker_daemon_up_docker_is_ok(tmp_path, docker_client):
    p = run_doctor(tmp_path)
    assert line(p.stdout, "docker").startswith("ok       docker     Docker ")
    image = line(p.stdout, "image")
    assert image.startswith("ok ") or "pulled on first use" in image


def test_without_docker_it_is_a_warning_with_the_fix_not_a_failure(tmp_path):
    p = run_doctor(tmp_path, DOCKER_HOST=f"unix://{tmp_path}/no-docker.sock")
    assert p.returncode == 0
    assert line(p.stdout, "docker").startswith("warn     docker     no Docker daemon socket")
    assert "apt install docker.io" in fix_after(p.stdout, "docker")


def test_datasette_is_there_with_the_plugin(tmp_path):
    assert line(run_doctor(tmp_path).stdout, "datasette").startswith("ok       datasette  0.65.")


def test_a_search_index_short_of_the_logs_is_said_with_the_command_that_fixes_it(tmp_path, home):
    run_cli("--", "sh", "-c", "echo the grebe line", check=True, cwd=tmp_path)
    assert line(run_doctor(tmp_path).stdout, "search index") == "ok       search index every ended session's text log is searchable"
    with sqlite3.connect(home / "supervise.db") as db:  # cut short: a log with nothing of it indexed
        db.execute("delete from log_chunks")
    p = run_doctor(tmp_path)
    assert line(p.stdout, "search index").startswith("warn     search index the text log of 1 session is not all in the search index")
    assert fix_after(p.stdout, "search index") == "fix: supervise search --reindex"
    assert run_cli("search", "--reindex", "grebe", cwd=tmp_path).returncode == 0
    assert line(run_doctor(tmp_path).stdout, "search index").startswith("ok ")
    with sqlite3.connect(home / "supervise.db") as db:  # emptied: the chunks are there, their index is not
        db.execute("insert into log_chunks_fts(log_chunks_fts) values ('delete-all')")
    p = run_doctor(tmp_path)
    assert p.returncode == 1
    assert line(p.stdout, "search index") == "problem  search index the full-text index lacks 1 chunk of the text logs: search misses them"
    assert fix_after(p.stdout, "search index") == "fix: supervise search --reindex"
    assert run_cli("search", "--reindex", "grebe", cwd=tmp_path).returncode == 0
    assert line(run_doctor(tmp_path).stdout, "search index").startswith("ok ")
