"""Summary backends: the real Codex CLI 0.169.0 on a ChatGPT login, against the fake Responses
API; Gemini CLI, which cannot summarize; and `auto` among claude, codex and gemini.

Codex is set up as a ChatGPT login would be, and nothing of it is in supervise's environment:
no OPENAI_* or CODEX_* variable, no key. Its HOME has `~/.codex/auth.json` as `codex login`
writes it for ChatGPT (`auth_mode: chatgpt`, id and access tokens, account id, a fresh
`last_refresh` so that it does not go to auth.openai.com to refresh), and `~/.codex/config.toml`
whose `openai_base_url` points the built-in OpenAI provider at the fake (the one stand-in: the
endpoint). Codex 0.169.0 accepts a ChatGPT login against that base URL and sends
`Authorization: Bearer <access token>` and `chatgpt-account-id` to it; supervise never sees either.
The user's config.toml also names an MCP server that would leave a file behind if started, and a
global AGENTS.md, which Codex sends whatever it is told (said by `supervise doctor`).
"""

import base64
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import ROOT, require, run_cli
from fake_responses import FakeResponses
from supervisor import config
from supervisor.contexts import schema, summarizer
from supervisor.contexts.backends import choose
from supervisor.profiles.codex import summary as codex
from test_summary_backends import EMPTY, GOOD, left_running, login_env, session_digest  # noqa: F401 (a fixture)

CODEX_VERSION = "0.171.0"
ACCOUNT = "acct-login-for-tests"
AGENTS_MD = "Global AGENTS.md of the user: always answer in French."
THEIRS = "You are Codex, an agent based on"  # Codex's base instructions, which ours replace


def codex_bin() -> str:
    """The pinned Codex: tests/agents (scripts/test installs it), else the agent cache where
    scripts/agents/codex.py installs it."""
    cache = Path(os.environ.get("SUPERVISE_AGENT_CACHE", Path.home() / ".cache" / "supervise-agents"))
    for path in (
        ROOT / "tests" / "agents" / "node_modules" / ".bin" / "codex",
        cache / f"@openai+codex-{CODEX_VERSION}" / "node_modules" / ".bin" / "codex",
    ):
        if path.exists():
            return str(path)
    require(False, f"Codex CLI {CODEX_VERSION} is not installed (run: npm install --prefix tests/agents)")


def _jwt(claims: dict) -> str:
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


@pytest.fixture
def responses():
    with FakeResponses(compact_delay=0) as server:
        yield server


@pytest.fixture
def codex_home(tmp_path, responses):
    home = tmp_path / "user-home"
    (home / ".codex").mkdir(parents=True)
    expires = int(time.time()) + 24 * 3600
    auth = {"chatgpt_plan_type": "plus", "chatgpt_account_id": ACCOUNT, "chatgpt_user_id": "user-tests"}
    (home / ".codex" / "auth.json").write_text(
        json.dumps(
            {
                "auth_mode": "chatgpt",
                "OPENAI_API_KEY": None,
                "tokens": {
                    "id_token": _jwt({"email": "user@example.com", "exp": expires, "https://api.openai.com/auth": auth}),
                    "access_token": _jwt({"exp": expires, "https://api.openai.com/auth": auth}),
                    "refresh_token": "rt-login-for-tests",
                    "account_id": ACCOUNT,
                },
                "last_refresh": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
            }
        )
    )
    (home / ".codex" / "config.toml").write_text(
        f'openai_base_url = "{responses.url}/v1"\n\n'
        f'[mcp_servers.user-server]\ncommand = "sh"\nargs = ["-c", "touch {home}/mcp-started; sleep 30"]\n'
    )
    (home / ".codex" / "AGENTS.md").write_text(AGENTS_MD + "\n")
    return home


def codex_session() -> dict:
    return {"agent": "codex", "argv": [codex_bin()], "cwd": "/"}


def cfg(**kw) -> config.Summary:
    return config.Summary(**{"backend": "codex", "timeout": 30.0, **kw})


def texts(call, role: str) -> list[str]:
    return [c.get("text", "") for i in call.items() if i.get("role") == role for c in i.get("content") or [] if isinstance(c, dict)]


def tool_names(call) -> list[str]:
    def names(tools):
        for tool in tools or []:
            yield from names(tool.get("tools")) if tool.get("type") == "namespace" else [tool.get("name") or tool.get("type")]

    return [n for i in call.items() if i.get("type") == "additional_tools" for n in names(i.get("tools"))]


def stand_in(tmp_path: Path, name: str, script: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / name).write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / name).chmod(0o755)
    return str(bin_dir)


# -- Codex on a ChatGPT login ---------------------------------------------------------------------


def test_codex_on_a_login_fills_the_context_with_our_instructions_and_schema(responses, codex_home, session_digest):
    responses.add({"json": GOOD, "usage": (2100, 300)}, times=None)
    env = login_env(codex_home)
    previous = {"current_task": "earlier task marker"}
    started = time.monotonic()
    result = summarizer.summarize(session_digest, previous, cfg(), codex_session(), env)
    took = time.monotonic() - started
    assert (result.source, result.backend, result.error) == ("model", "codex", None), result.error
    assert result.context == schema.validate(GOOD)
    assert (result.model, result.input_tokens, result.output_tokens, result.cost_usd) == ("gpt-6-luna", 2100, 300, None)
    [call] = responses.model_calls()
    assert call.headers["authorization"].startswith("Bearer ey") and call.headers["chatgpt-account-id"] == ACCOUNT
    assert "content-encoding" not in call.headers  # a plain body, as it was checked here
    body = call.body
    assert body["model"] == "gpt-6-luna" and body["reasoning"]["effort"] == "low"
    assert body["text"]["format"]["type"] == "json_schema" and body["text"]["format"]["strict"] is True
    assert body["text"]["format"]["schema"] == codex.strict(schema.SCHEMA)
    assert not body.get("tools")
    # What is left of its tools (0.169.0): code mode's `exec`, which fails closed with its host
    # switched off, and the multi-agent ones no flag removes. Nothing that runs, reads or fetches.
    offered = set(tool_names(call))
    assert offered <= {
        "exec",
        "wait",
        "request_user_input",
        "request_user_input_async",
        "followup_task",
        "interrupt_agent",
        "list_agents",
        "send_message",
        "spawn_agent",
        "wait_agent",
    }, offered
    developer = "\n".join(texts(call, "developer"))
    assert summarizer.SYSTEM in developer and codex.NO_TOOLS in developer and THEIRS not in json.dumps(body)
    assert "<skills_instructions>" not in developer and "<permissions instructions>" not in developer
    users = texts(call, "user")
    assert users[-1].strip() == summarizer.model_input(session_digest, previous).strip()  # the digest, whole
    assert not any("<environment_context>" in t for t in users)  # not the private folder, date, shell
    # What Codex 0.169.0 sends whatever it is told, and doctor says so: the global AGENTS.md.
    assert any(AGENTS_MD in t for t in users) and "AGENTS.md" in codex.CAVEAT
    sent = json.dumps(body)
    assert "earlier task marker" in sent and "hunter2hunter2" not in sent and "[REDACTED:env-secret]" in sent
    assert not (codex_home / "mcp-started").exists()  # the user's MCP server was not started
    assert not (codex_home / ".codex" / "sessions").exists()  # --ephemeral: nothing for `codex resume`
    assert left_running(codex_home) == []
    print(f"codex exec: {took:.2f}s, {len(sent)} bytes sent")


def test_a_malformed_answer_is_asked_for_once_more(responses, codex_home, session_digest):
    responses.add({"json": EMPTY}, times=1)  # follows the schema, empty to us
    responses.add({"json": GOOD}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(), codex_session(), login_env(codex_home))
    assert (result.source, result.backend) == ("model", "codex"), result.error
    assert len(responses.model_calls()) == 2


@pytest.mark.parametrize(
    "reply, reason",
    [
        (
            {
                "status": 429,
                "body": {
                    "error": {
                        "type": "usage_limit_reached",
                        "message": "The usage limit has been reached",
                        "plan_type": "plus",
                        "resets_in_seconds": 3600,
                    }
                },
            },
            "codex exec failed: You’ve hit your usage limit.",
        ),
        (
            {"failed": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}},
            "codex exec failed: Codex ran out of room in the model's context window.",
        ),
        ({"text": "I can't help with that."}, "malformed answer (no JSON object; the model said: I can't help with that.), twice"),
    ],
    ids=["usage-limit", "error-event", "refusal"],
)
def test_an_error_a_limit_or_a_refusal_falls_back_to_the_heuristic_with_the_reason(responses, codex_home, session_digest, reply, reason):
    responses.add(reply, times=None)
    result = summarizer.summarize(session_digest, None, cfg(), codex_session(), login_env(codex_home))
    assert (result.source, result.backend, result.model) == ("heuristic", "codex", "gpt-6-luna")
    assert result.error.startswith(reason), result.error
    assert result.context["original_request"]  # the heuristic's, never empty
    assert left_running(codex_home) == []


def test_a_hanging_api_is_cut_off_at_the_deadline_with_nothing_left_running(responses, codex_home, session_digest):
    responses.add({"json": GOOD, "delay": 60}, times=None)
    started = time.monotonic()
    result = summarizer.summarize(session_digest, None, cfg(timeout=4.0), codex_session(), login_env(codex_home))
    took = time.monotonic() - started
    assert (result.source, result.backend, result.error) == ("heuristic", "codex", "codex exec timed out after 4s")
    assert 4.0 <= took < 6.0, took
    assert responses.model_calls(), "Codex never reached the API"
    assert left_running(codex_home) == []


@pytest.mark.parametrize(
    "script, reason",
    [
        ("cat >/dev/null; echo 'Welcome to Codex'", "codex exec printed no JSON events: Welcome to Codex"),
        (
            "echo \"error: unexpected argument '--output-schema' found\" >&2; exit 2",
            "codex exec failed (exit 2): error: unexpected argument '--output-schema' found",
        ),
        (
            'cat >/dev/null; echo \'{"type":"turn.started"}\'; echo \'{"type":"item.completed","item":{"type":"command_execution"}}\';'
            ' echo \'{"type":"turn.completed","usage":{}}\'',
            "codex exec: the model used a tool (command_execution); its answer is not used",
        ),
    ],
    ids=["garbage", "old-release", "used-a-tool"],
)
def test_output_that_is_not_codexs_answer_falls_back(tmp_path, session_digest, script, reason):
    env = login_env(tmp_path, stand_in(tmp_path, "codex", script))
    result = summarizer.summarize(session_digest, None, cfg(), None, env)
    assert (result.source, result.backend, result.error) == ("heuristic", "codex", reason)


def test_an_mcp_server_that_cannot_be_switched_off_keeps_codex_from_running(codex_home, session_digest):
    config_toml = codex_home / ".codex" / "config.toml"
    config_toml.write_text(config_toml.read_text() + '\n[mcp_servers."my.server"]\ncommand = "true"\n')
    result = summarizer.summarize(session_digest, None, cfg(), codex_session(), login_env(codex_home))
    assert (result.source, result.backend) == ("heuristic", "codex")
    assert result.error.startswith("codex exec not run: the MCP server 'my.server' in "), result.error


# -- through the CLI, auto and doctor -----------------------------------------------------------------


def test_summarize_with_the_codex_backend_through_the_cli(responses, codex_home):
    env = login_env(codex_home, str(Path(codex_bin()).parent))
    run_cli("--", "sh", "-c", "echo '› fix the flaky test in tests/test_net.py'", env=env, check=True)
    sid = json.loads(run_cli("sessions", "--json", env=env, check=True).stdout)[0]["id"]
    responses.add({"json": GOOD, "usage": (1800, 250)}, times=None)
    p = run_cli("summarize", "--summary-backend", "codex", sid, env=env, check=True)
    assert "backend codex" in p.stderr, p.stderr
    assert "fix the flaky test" in texts(responses.model_calls()[0], "user")[-1]
    row = json.loads(run_cli("context", sid, "--json", env=env, check=True).stdout)
    assert (row["backend"], row["source"], row["model"]) == ("codex", "model", "gpt-6-luna")
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (1800, 250, None)


def test_auto_uses_the_sessions_own_codex_before_claude(responses, codex_home, tmp_path, session_digest):
    claude_dir = stand_in(
        tmp_path,
        "claude",
        "echo 'Usage: claude --json-schema --no-session-persistence --system-prompt --setting-sources --strict-mcp-config'",
    )
    responses.add({"json": GOOD}, times=None)
    result = summarizer.summarize(session_digest, None, config.Summary(timeout=30.0), codex_session(), login_env(codex_home, claude_dir))
    assert (result.source, result.backend) == ("model", "codex"), result.error
    chosen = choose.resolve(config.Summary(), {"agent": "aider"}, login_env(codex_home, f"{claude_dir}:{Path(codex_bin()).parent}"))
    assert chosen.backend == "claude"  # not the session's own: claude first


def test_gemini_is_a_backend_that_says_why_it_cannot_summarize(tmp_path, session_digest):
    gemini_dir = stand_in(tmp_path, "gemini", "case \"$1\" in --version) echo 0.61.0;; *) echo 'Usage: gemini -p -o json';; esac")
    env = login_env(tmp_path, gemini_dir)
    result = summarizer.summarize(session_digest, None, cfg(backend="gemini"), None, env)
    assert (result.source, result.backend) == ("heuristic", "gemini")
    assert (
        result.error == "gemini -p: this Gemini CLI cannot summarize: it has no headless structured output (no schema flag) "
        "and saves every headless run as a session"
    )
    env["PATH"] = f"{gemini_dir}:/usr/bin:/bin"
    assert choose.resolve(config.Summary(), {"agent": "gemini", "argv": ["gemini"]}, env).backend == "heuristic"
    line = doctor_line(env, tmp_path)
    assert line.startswith("warn     summary    auto → heuristic (no API key, and no agent CLI that can summarize (claude, codex)"), line
    assert "; gemini 0.61.0: this Gemini CLI cannot summarize: it has no headless structured output" in line, line


def doctor_line(env: dict, tmp_path: Path) -> str:
    out = run_cli("doctor", env={**env, "SUPERVISE_CONFIG": str(tmp_path / "config")}).stdout
    return next(l for l in out.splitlines() if l[9:].startswith("summary "))


def test_doctor_says_codex_can_summarize_and_what_it_still_sends(codex_home, tmp_path):
    only_codex = tmp_path / "only-codex"  # tests/agents holds claude too
    only_codex.mkdir()
    (only_codex / "codex").symlink_to(os.path.realpath(codex_bin()))
    env = login_env(codex_home)
    env["PATH"] = f"{only_codex}:/usr/bin:/bin"
    line = doctor_line(env, tmp_path)
    assert line == (
        f"ok       summary    auto → codex (no API key; codex answers here); codex {CODEX_VERSION}: headless structured "
        "output ok (its global AGENTS.md and multi-agent instructions still reach the model)"
    ), line


# -- auto's choice and the configuration ----------------------------------------------------------------


@pytest.mark.parametrize(
    "agent, usable, expected",
    [
        ("codex", {"claude": "/usr/bin/claude", "codex": "/p/codex"}, "codex"),
        ("claude", {"claude": "/usr/bin/claude", "codex": "/p/codex"}, "claude"),
        (None, {"claude": "/usr/bin/claude", "codex": "/p/codex"}, "claude"),
        ("gemini", {"codex": "/p/codex"}, "codex"),
        ("codex", {}, "heuristic"),
    ],
)
def test_auto_chooses_the_sessions_cli_then_claude_then_codex(agent, usable, expected):
    assert choose.choose(False, agent, usable).backend == expected


def test_the_codex_model_is_set_in_the_config_file_or_the_environment(tmp_path):
    (tmp_path / "config.toml").write_text('[summary]\nbackend = "codex"\ncodex_model = "gpt-6.1-terra"\n')
    env = {"SUPERVISE_CONFIG": str(tmp_path)}
    assert (config.load(env).summary.backend, codex.model(config.load(env).summary)) == ("codex", "gpt-6.1-terra")
    assert codex.model(config.load({**env, "SUPERVISE_SUMMARY_CODEX_MODEL": "gpt-6-luna"}).summary) == "gpt-6-luna"
    assert codex.model(config.load({"SUPERVISE_CONFIG": str(tmp_path / "none")}).summary) == codex.DEFAULT_MODEL == "gpt-6-luna"
    assert config.load({**env, "SUPERVISE_SUMMARY_BACKEND": "gemini"}).summary.backend == "gemini"
