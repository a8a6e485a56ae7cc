"""Summaries against the fake Anthropic API: a real HTTP server on 127.0.0.1."""

import json
import os
from dataclasses import replace

import pytest

from conftest import run_cli
import sessiongen
from supervisor import config
from supervisor.contexts import digest, schema as ctx, summarizer
from fakeapi import FakeAnthropic

GOOD = sessiongen.CONTEXT


@pytest.fixture
def api():
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def session_digest():
    text, _ = sessiongen.generate(300_000)
    text += "\nexport DB_PASSWORD=hunter2hunter2\nAuthorization: Bearer abcdef0123456789abcdef\n"
    return digest.build(text, budget=8_000)


def cfg(api, **kw):
    return config.Summary(base_url=api.url, api_key="test-key", **{"max_retries": 2, "timeout": 10.0, **kw})


def tool_reply(data):
    return {"tool_use": {"name": "record_session_context", "input": data}, "usage": {"input_tokens": 3000, "output_tokens": 400}}


def test_a_good_structured_answer_becomes_the_context(api, session_digest):
    api.add(tool_reply(GOOD))
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "model" and result.error is None
    assert result.context == ctx.validate(GOOD)
    assert result.cost_usd == pytest.approx(3000 * 1e-6 + 400 * 5e-6)
    sent = api.messages()[0].body
    assert sent["model"] == "claude-haiku-4-5"
    assert sent["tool_choice"] == {"type": "tool", "name": "record_session_context"}
    body = json.dumps(sent)
    assert "hunter2hunter2" not in body and "abcdef0123456789abcdef" not in body  # masked before it left
    assert "[REDACTED:env-secret]" in body and "[REDACTED:bearer-token]" in body


def test_the_previous_context_goes_in_for_the_next_round(api, session_digest):
    api.add(tool_reply(GOOD))
    summarizer.summarize(session_digest, {"current_task": "earlier task marker"}, cfg(api))
    assert "earlier task marker" in api.messages()[0].last_user_text()


def test_a_malformed_answer_is_asked_for_once_more(api, session_digest):
    api.add(tool_reply({"current_task": 42}))
    api.add(tool_reply(GOOD))
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "model" and len(api.messages()) == 2


def test_malformed_twice_falls_back_to_the_heuristic(api, session_digest):
    api.add({"text": "Here is a summary, in prose instead of the tool."}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "heuristic"
    assert result.error == "malformed answer (no tool call in the answer), twice"
    assert (
        result.context["original_request"].startswith(sessiongen.REQUEST.removeprefix("❯ ")[:40])
        or sessiongen.REQUEST in result.context["original_request"]
    )
    assert len(api.messages()) == 2


def test_429_then_success_is_retried(api, session_digest):
    api.add({"status": 429, "message": "rate limited", "headers": {"retry-after": "0"}})
    api.add(tool_reply(GOOD))
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "model" and len(api.messages()) == 2


def test_529_until_the_retries_run_out_falls_back(api, session_digest):
    api.add({"status": 529, "message": "Overloaded", "headers": {"retry-after": "0"}}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "heuristic" and result.error.startswith("model call failed: 529 Overloaded")
    assert len(api.messages()) == 3  # first try and two retries


def test_a_401_falls_back_at_once(api, session_digest):
    api.add({"status": 401, "message": "invalid x-api-key"}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "heuristic" and "401" in result.error and len(api.messages()) == 1


def test_a_timeout_falls_back(api, session_digest):
    api.add({**tool_reply(GOOD), "delay": 3.0}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(api, timeout=0.5, max_retries=0))
    assert result.source == "heuristic" and result.error == "model call timed out after 0.5s"


def test_an_error_message_with_escapes_and_control_keys_becomes_one_plain_line(api, session_digest):
    api.add({"status": 400, "message": "bad\x1b[2J\x1b]0;owned\x07 request\r\nline two\x00"}, times=None)
    result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "heuristic" and result.error == "model call failed: 400 bad [2J ]0;owned request line two"


def test_a_model_behind_a_proxy_from_the_environment_is_reached_through_it(api, session_digest, monkeypatch):
    with ForwardingProxy() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        api.add(tool_reply(GOOD))
        result = summarizer.summarize(session_digest, None, cfg(api))
    assert result.source == "model" and proxy.forwarded == [f"POST {api.url}/v1/messages"]


class ForwardingProxy:
    """A plain HTTP proxy on 127.0.0.1 that forwards what it is sent (absolute URLs) and
    notes each request."""

    def __enter__(self):
        import http.server
        import threading
        import urllib.request

        forwarded = self.forwarded = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                forwarded.append(f"POST {self.path}")
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection", "connection")}
                direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                with direct.open(urllib.request.Request(self.path, body, headers, method="POST")) as answer:
                    payload = answer.read()
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.headers["Content-Type"])
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_no_api_key_falls_back_without_a_call(api, session_digest):
    result = summarizer.summarize(session_digest, None, config.Summary(base_url=api.url))
    assert result.source == "heuristic" and result.error.startswith("no API key")
    assert api.messages() == []


def test_the_prompt_stays_within_its_budget():
    big = {**GOOD, "completed_steps": [f"step {i}: " + "did a thing " * 20 for i in range(300)]}
    prompt = ctx.render(ctx.validate(big), 3)
    assert digest.estimate_tokens(prompt) <= ctx.PROMPT_BUDGET
    assert "round 3" in prompt and sessiongen.REQUEST in prompt and "step 299" in prompt


def test_summarize_and_context_commands_chain_rounds(api, tmp_path):
    run_cli("--", "sh", "-c", "echo '❯ fix the flaky test in tests/test_net.py'; echo 'Error: TimeoutError in test_net.py'", check=True)
    sid = json.loads(run_cli("sessions", "--json", check=True).stdout)[0]["id"]
    api.add(tool_reply(GOOD))
    env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key"}
    p = run_cli("summarize", sid, env=env, check=True)
    assert "round 1" in p.stderr and "from the model (claude-haiku-4-5)" in p.stderr
    assert "Handle empty currency columns" in p.stdout
    assert "fix the flaky test" in api.messages()[0].last_user_text()
    p = run_cli("summarize", sid, env={**env, "ANTHROPIC_API_KEY": ""}, check=True)  # round 2: no key now
    assert "round 2" in p.stderr and "heuristic" in p.stderr
    row = json.loads(run_cli("context", sid, "--json", check=True).stdout)
    assert row["round"] == 2 and row["source"] == "heuristic" and row["context"]["current_task"]
    assert run_cli("context", sid, check=True).stdout.startswith("[supervise] You are continuing earlier work")


@pytest.mark.slow
def test_contexts_are_made_periodically_and_at_the_end_of_a_session(tmp_path):
    from helpers import latest, wait_for
    from supervisor.store.database import Store

    env = {
        **os.environ,
        "SUPERVISE_SUMMARY_EVERY_KB": "4",
        "SUPERVISE_SUMMARY_MIN_SECONDS": "0",
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_AUTH_TOKEN": "",
        "ANTHROPIC_BASE_URL": "",
    }
    script = "for i in $(seq 1 400); do echo \"built module $i\"; done; echo 'Error: KeyError in src/app.py'; sleep 7"
    run_cli("--agent", "aider", "--", "sh", "-c", script, env=env, check=True, timeout=60)
    sid = latest()["id"]
    store = Store.open_default()
    rows = wait_for(lambda: (lambda r: r if len(r) >= 2 else None)(store.contexts(sid)), 30)
    assert [r["trigger"] for r in rows][:1] == ["periodic"] and rows[-1]["trigger"] == "session_end"
    assert [r["round"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(r["source"] == "heuristic" and r["error"].startswith("no API key") for r in rows)
    assert "Error: KeyError in src/app.py" in rows[-1]["context"]["errors_and_resolutions"]


def test_the_apis_token_count_corrects_the_estimate(api, tmp_path):
    from supervisor.contexts import rounds
    from supervisor.store.database import Store

    text, _ = sessiongen.generate(3_000_000)
    log = tmp_path / "session.log"
    log.write_text(text)
    store = Store(tmp_path / "s.db")
    session = store.create_session(command="claude", argv=["claude"], cwd="/", log_path=str(log), status="completed")
    api.count_factor = 3.0  # the real tokenizer counts three times what we estimate
    api.add(tool_reply(GOOD), times=None)
    row = rounds.make(store, session, "manual", config.Settings(summary=cfg(api, budget=4_000)))
    assert row["digest_tokens"] <= 4_000  # shrunk until the API's count fits
    counts = [r for r in api.requests if r.path == "/v1/messages/count_tokens"]
    assert len(counts) == 2  # counted, rebuilt smaller, counted again
    sent = api.messages()[0].last_user_text()
    assert digest.estimate_tokens(sent) * 3 <= 4_000 * 1.1


def test_a_local_model_server_is_asked_without_a_key(api, session_digest):
    """A base URL on this machine set for supervise (Ollama, LM Studio, llama-server, vLLM):
    the api backend asks it with no key; the same URL in the agents' ANTHROPIC_BASE_URL alone
    (a local proxy for an agent's login) is not taken for one."""
    api.add(tool_reply(GOOD))
    env = {"SUPERVISE_CONFIG": "/nonexistent", "SUPERVISE_SUMMARY_BASE_URL": api.url.replace("127.0.0.1", "localhost")}
    local = config.load(env).summary
    assert local.local and not local.has_key
    result = summarizer.summarize(session_digest, None, replace(local, base_url=api.url), {"agent": None}, env)
    assert (result.source, result.backend, result.error) == ("model", "api", None)
    [sent] = api.messages()
    said = sent.headers.get("x-api-key", "") + sent.headers.get("authorization", "")
    assert said.endswith("local") and "test-key" not in str(sent.headers)
    proxied = config.load({"SUPERVISE_CONFIG": "/nonexistent", "ANTHROPIC_BASE_URL": api.url}).summary
    assert not proxied.local and not proxied.uses_api
    assert not config.load({"SUPERVISE_CONFIG": "/nonexistent", "SUPERVISE_SUMMARY_BASE_URL": "https://api.example.com"}).summary.local
