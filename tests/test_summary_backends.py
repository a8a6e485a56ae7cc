"""Summary backends: the real Claude Code (tests/agents) on a login, against the fake
Anthropic API; and `auto`'s choice.

Claude Code is set up as a subscription login would be, and nothing of it is in supervise's
environment: no ANTHROPIC_* variable, no key. Its HOME has `~/.claude/.credentials.json`
with an OAuth entry (what `claude` writes at /login) and `~/.claude/settings.json` whose `env`
block points it at the fake (the one stand-in: the endpoint). Claude Code then sends
`Authorization: Bearer <the login's token>` to the fake; supervise never sees the token.
"""

import json
import os
import time
from pathlib import Path

import pytest

import sessiongen
from agentdriver import LOGIN_TOKEN as TOKEN, claude_bin, claude_login
from conftest import run_cli
from fakeapi import STRUCTURED_OUTPUT, FakeAnthropic, structured
import procs
from helpers import wait_for
from supervisor import config
from supervisor.contexts import digest, schema, summarizer
from supervisor.contexts.backends import choose
from supervisor.store.database import Store

GOOD = sessiongen.CONTEXT
EMPTY = {key: "" if key in schema.TEXT_FIELDS else [] for key in (*schema.TEXT_FIELDS, *schema.LIST_FIELDS)}
# Claude Code's own system prompt, which ours replaces (~15,000 tokens of it).
THEIRS = "You are Claude Code, Anthropic's official CLI for Claude"


@pytest.fixture
def api():
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def claude_home(tmp_path, api):
    home = tmp_path / "user-home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True}))
    claude_login(home, api.url)
    return home


def login_env(home: Path, path_first: str | None = None) -> dict:
    """supervise's environment on a login: nothing of Anthropic's or OpenAI's, no key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "SUPERVISE_SUMMARY_"))}
    env["HOME"] = str(home)
    if path_first:
        env["PATH"] = f"{path_first}:{env['PATH']}"
    return env


@pytest.fixture
def session_digest():
    text, _ = sessiongen.generate(200_000)
    text += "\nexport DB_PASSWORD=hunter2hunter2\n"
    return digest.build(text, budget=6_000)


def claude_session() -> dict:
    return {"agent": "claude", "argv": [claude_bin(), "--model", "x"], "cwd": "/"}


def cfg(**kw) -> config.Summary:
    return config.Summary(**{"backend": "claude", "timeout": 30.0, **kw})


def left_running(home: Path) -> list[int]:
    """Live processes whose HOME is `home`, besides supervise's own (a recorder finishing):
    Claude Code started for a summary, and anything it started; once any killed are gone."""
    return procs.left_running(lambda cmdline, environ: f"HOME={home}".encode() in environ and b"supervisor.run.recorder" not in cmdline)


def transcripts(home: Path) -> list[Path]:
    return sorted((home / ".claude" / "projects").rglob("*.jsonl")) if (home / ".claude" / "projects").exists() else []


# -- Claude Code on a login ---------------------------------------------------------------------


def test_claude_code_on_a_login_fills_the_context_with_our_prompt_and_schema(api, claude_home, session_digest):
    api.add(structured(GOOD, usage={"input_tokens": 2100, "output_tokens": 300}), times=None)
    env = login_env(claude_home)
    assert not [k for k in env if k.startswith("ANTHROPIC_")]
    started = time.monotonic()
    previous = {"current_task": "earlier task marker"}
    result = summarizer.summarize(session_digest, previous, cfg(), claude_session(), env)
    took = time.monotonic() - started
    assert (result.source, result.backend, result.error) == ("model", "claude", None), result.error
    assert result.context == schema.validate(GOOD)
    assert result.model == "claude-haiku-4-5"
    assert result.input_tokens >= 2100 and result.output_tokens >= 300 and result.cost_usd > 0
    first = api.messages()[0]
    assert first.headers.get("authorization") == f"Bearer {TOKEN}" and "x-api-key" not in first.headers
    assert first.body["model"] == "claude-haiku-4-5"
    assert first.tool(STRUCTURED_OUTPUT)["input_schema"] == schema.SCHEMA
    assert [t["name"] for t in first.body["tools"]] == [STRUCTURED_OUTPUT]  # --tools "": nothing else to call
    system = "\n".join(b["text"] for b in first.body["system"])
    assert summarizer.SYSTEM in system and THEIRS not in system and len(system) < len(summarizer.SYSTEM) + 1000
    sent = json.dumps(first.body)
    assert "earlier task marker" in sent and "hunter2hunter2" not in sent and "[REDACTED:env-secret]" in sent
    assert first.last_user_text().strip() == summarizer.model_input(session_digest, previous).strip()  # the digest, whole
    assert transcripts(claude_home) == []  # --no-session-persistence: nothing for `claude --resume`
    assert left_running(claude_home) == []
    print(f"claude -p: {took:.2f}s, {len(sent)} bytes sent")


def test_a_malformed_answer_is_asked_for_once_more(api, claude_home, session_digest):
    api.add(structured(EMPTY), match=lambda r: not r.has_tool_result, times=1)  # valid JSON Schema, empty to us
    api.add(structured(GOOD), times=None)
    result = summarizer.summarize(session_digest, None, cfg(), claude_session(), login_env(claude_home))
    assert (result.source, result.backend) == ("model", "claude"), result.error
    firsts = [r for r in api.messages() if not r.has_tool_result]
    assert len(firsts) == 2


LIMIT_HEADERS = {
    "anthropic-ratelimit-unified-status": "rejected",
    "anthropic-ratelimit-unified-5h-status": "rejected",
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
}


@pytest.mark.parametrize(
    "reply, reason",
    [
        ({"status": 401, "message": "OAuth token revoked"}, "claude -p failed: Failed to authenticate. API Error: 401 OAuth token revoked"),
        ({"status": 429, "message": "limit", "headers": LIMIT_HEADERS}, "claude -p failed: You've hit your 5-hour limit"),
        ({"text": "I can't help with that."}, "malformed answer (no structured output; the model said: I can't help with that.), twice"),
    ],
    ids=["is_error", "usage-limit", "refusal"],
)
def test_an_error_a_limit_or_a_refusal_falls_back_to_the_heuristic_with_the_reason(api, claude_home, session_digest, reply, reason):
    if "headers" in reply:  # resets in an hour, as Claude Code reads it
        reset = str(int(time.time()) + 3600)
        reply = {
            **reply,
            "headers": {**reply["headers"], "anthropic-ratelimit-unified-reset": reset, "anthropic-ratelimit-unified-5h-reset": reset},
        }
    api.add(reply, times=None)
    result = summarizer.summarize(session_digest, None, cfg(), claude_session(), login_env(claude_home))
    assert (result.source, result.backend) == ("heuristic", "claude")
    assert result.error.startswith(reason), result.error
    assert result.context["original_request"]  # the heuristic's, never empty
    assert left_running(claude_home) == []


def test_a_hanging_api_is_cut_off_at_the_deadline_with_nothing_left_running(api, claude_home, session_digest):
    # (answered after 60 s, an answer that came at all would be the model's: the cut-off is what is seen)
    api.add({"tool_use": {"name": STRUCTURED_OUTPUT, "input": GOOD}, "delay": 60}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(timeout=4.0), claude_session(), login_env(claude_home))
    assert (result.source, result.backend, result.error) == ("heuristic", "claude", "claude -p timed out after 4s")
    assert api.messages(), "Claude Code never reached the API"
    assert left_running(claude_home) == []  # its whole process group was killed


@pytest.mark.parametrize(
    "script, reason",
    [
        ("cat >/dev/null; echo 'Welcome to Claude Code!'", "claude -p printed no JSON result: Welcome to Claude Code!"),
        ("echo \"error: unknown option '--json-schema'\" >&2; exit 1", "claude -p failed (exit 1): error: unknown option '--json-schema'"),
    ],
    ids=["garbage", "old-release"],
)
def test_output_that_is_not_claude_codes_json_falls_back(tmp_path, session_digest, script, reason):
    # A broken install or an old release, standing in for `claude` on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / "claude").chmod(0o755)
    result = summarizer.summarize(session_digest, None, cfg(), None, login_env(tmp_path, str(bin_dir)))
    assert (result.source, result.backend, result.error) == ("heuristic", "claude", reason)


def test_claude_not_found_falls_back_without_running_anything(tmp_path, session_digest):
    env = login_env(tmp_path)
    env["PATH"] = str(tmp_path)
    result = summarizer.summarize(session_digest, None, cfg(), None, env)
    assert (result.source, result.backend, result.error) == ("heuristic", "claude", "claude not found on PATH")


# -- through the CLI and the recorder ---------------------------------------------------------------


def test_summarize_with_the_claude_backend_through_the_cli(api, claude_home):
    claude_dir = str(Path(claude_bin()).parent)
    env = login_env(claude_home, claude_dir)
    run_cli(
        "--", "sh", "-c", "echo '❯ fix the flaky test in tests/test_net.py'; echo 'Error: TimeoutError in test_net.py'", env=env, check=True
    )
    sid = json.loads(run_cli("sessions", "--json", env=env, check=True).stdout)[0]["id"]
    api.add(structured(GOOD), times=None)
    p = run_cli("summarize", "--summary-backend", "claude", sid, env=env, check=True)
    assert "from the model (claude-haiku-4-5), backend claude" in p.stderr, p.stderr
    assert "Handle empty currency columns" in p.stdout
    assert "fix the flaky test" in api.messages()[0].last_user_text()
    row = json.loads(run_cli("context", sid, "--json", env=env, check=True).stdout)
    assert (row["backend"], row["source"], row["model"]) == ("claude", "model", "claude-haiku-4-5")
    assert row["input_tokens"] > 0 and row["output_tokens"] > 0 and row["cost_usd"] > 0
    shown = run_cli("show", sid, env=env, check=True).stdout
    assert "model via claude (claude-haiku-4-5)" in shown
    assert json.loads(run_cli("show", sid, "--json", env=env, check=True).stdout)["contexts"][0]["backend"] == "claude"
    assert "model via claude" in run_cli("context", sid, env=env, check=True).stderr
    assert transcripts(claude_home) == []

    p = run_cli("summarize", "--summary-backend", "heuristic", sid, env=env, check=True)  # round 2: no model asked
    assert "round 2" in p.stderr and "backend heuristic" in p.stderr and len(api.messages()) == 1
    bad = run_cli("summarize", "--summary-backend", "gpt", sid, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("supervise: unknown summary backend 'gpt' (hint: use one of: auto, api, claude")


def test_auto_uses_the_claude_code_the_session_ran(api, claude_home, tmp_path):
    """No key, no `claude` on PATH: the session's own program is the one asked."""
    log = tmp_path / "session.log"
    log.write_text("❯ add a --dry-run flag to the importer\n● Edit(src/importer.py)\n")
    store = Store.open_default()
    session = store.create_session(
        command="claude", argv=[claude_bin()], agent="claude", cwd=str(tmp_path), log_path=str(log), status="completed"
    )
    store.close()
    api.add(structured(GOOD), times=None)
    env = login_env(claude_home)
    p = run_cli("summarize", session["id"], env=env, check=True)
    assert "backend claude" in p.stderr, p.stderr
    assert "--dry-run flag" in api.messages()[0].last_user_text()


def test_a_summary_backend_given_to_run_reaches_the_recorder(api, claude_home):
    env = login_env(claude_home, str(Path(claude_bin()).parent))
    env["SUPERVISE_SUMMARY_BACKEND"] = "heuristic"  # the flag wins over it
    api.add(structured(GOOD), times=None)
    run_cli(
        "run",
        "--summary-backend",
        "claude",
        "--agent",
        "aider",
        "--",
        "sh",
        "-c",
        "echo '> build the importer'",
        env=env,
        check=True,
        timeout=60,
    )
    sid = json.loads(run_cli("sessions", "--json", env=env, check=True).stdout)[0]["id"]
    store = Store.open_default()
    row = wait_for(lambda: next((r for r in store.contexts(sid) if r["trigger"] == "session_end"), None), 30)
    assert (row["backend"], row["source"]) == ("claude", "model"), row["error"]
    assert left_running(claude_home) == []


def test_doctor_names_what_auto_chooses_and_why(claude_home, tmp_path):
    config_dir = {"SUPERVISE_CONFIG": str(tmp_path / "config")}
    with_claude = run_cli("doctor", env={**login_env(claude_home, str(Path(claude_bin()).parent)), **config_dir})
    line = next(l for l in with_claude.stdout.splitlines() if l[9:].startswith("summary "))
    assert line.startswith(
        "ok       summary    auto → claude (no API key; claude answers here); claude 2.1.330: headless structured output ok"
    ), line
    env = login_env(claude_home)
    env["PATH"] = "/usr/bin:/bin"  # no claude
    without = run_cli("doctor", env={**env, **config_dir})
    line = next(l for l in without.stdout.splitlines() if l[9:].startswith("summary "))
    assert line.startswith("warn     summary    auto → heuristic (no API key, and no agent CLI that can summarize"), line


# -- auto's choice -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "has_key, agent, usable, expected",
    [
        (True, "claude", {"claude": "/bin/claude"}, ("api", None)),
        (False, "claude", {"claude": "/project/node_modules/.bin/claude"}, ("claude", "/project/node_modules/.bin/claude")),
        (False, "aider", {"claude": "/usr/bin/claude"}, ("claude", "/usr/bin/claude")),
        (False, None, {"claude": "/usr/bin/claude"}, ("claude", "/usr/bin/claude")),
        (False, "claude", {}, ("heuristic", None)),
        (False, "aider", {}, ("heuristic", None)),
    ],
)
def test_auto_chooses_the_api_then_the_sessions_cli_then_another_then_the_heuristic(has_key, agent, usable, expected):
    chosen = choose.choose(has_key, agent, usable)
    assert (chosen.backend, chosen.executable) == expected
    assert chosen.why


def test_the_session_s_own_program_is_preferred_to_the_one_on_path(tmp_path):
    exe = claude_bin()
    session = {"agent": "claude", "argv": [exe], "cwd": "/"}
    assert choose.executable("claude", session, {"PATH": str(tmp_path)}) == exe
    assert choose.executable("claude", {**session, "agent": "aider"}, {"PATH": str(tmp_path)}) is None


def test_a_release_without_headless_structured_output_is_passed_over(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\necho 'Usage: claude [options]'\necho '  -p, --print  Print response and exit'\n")
    (bin_dir / "claude").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    assert "has no --json-schema" in choose.probe("claude", str(bin_dir / "claude"), env)
    assert choose.resolve(config.Summary(), None, env).backend == "heuristic"
    assert choose.resolve(config.Summary(), {"agent": "claude", "argv": [claude_bin()], "cwd": "/"}, env).backend == "claude"


def test_the_backend_is_set_in_the_config_file_or_the_environment(tmp_path):
    (tmp_path / "config.toml").write_text('[summary]\nbackend = "claude"\n')
    env = {"SUPERVISE_CONFIG": str(tmp_path)}
    assert config.load(env).summary.backend == "claude"
    assert config.load({**env, "SUPERVISE_SUMMARY_BACKEND": "heuristic"}).summary.backend == "heuristic"
    assert config.load({**env, "SUPERVISE_SUMMARY_BACKEND": "heuristic"}, backend="api").summary.backend == "api"
    with pytest.raises(Exception, match="unknown summary backend 'gpt'"):
        config.load({**env, "SUPERVISE_SUMMARY_BACKEND": "gpt"})
