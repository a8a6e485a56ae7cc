"""Telemetry as teams run it: supervised sessions exporting OTLP to a local receiver (a real
HTTP or gRPC server decoding the protobuf, tests/otlpreceiver.py). Every event of a
compaction-and-context round arrives with its documented attributes; content only with the
opt-in, redacted; an endpoint killed mid-session and back, or one that never answers, costs
the session nothing; a wrong setting is one clear line. The real agents' runs are in
test_telemetry_agents.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import textwrap
import time
from pathlib import Path

import pexpect
import pytest

from conftest import ROOT, SUPERVISE
from helpers import demo_agent, latest, recorder_done, session, wait_for
from otlpreceiver import GrpcReceiver, HttpReceiver
from planted import SECRET
from supervisor.cli.demo_agent import REQUEST
from supervisor.store.database import Store
from supervisor.telemetry import signals

TURN = "turn 2: rename the total column in src/totals.py"
SECRET_TURN = f"turn 3: deploy with the key {SECRET}"
DEMO = ["run", "--agent", "demo", "--inject", "type", "--", *demo_agent()]


def demo_env(url: str | None, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY", "OTEL_"))}
    env.update(TERM="xterm-256color", OTEL_METRIC_EXPORT_INTERVAL="500", OTEL_EXPORTER_OTLP_TIMEOUT="2000", **extra)
    if url:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
    return env


def start_demo(env: dict) -> pexpect.spawn:
    child = pexpect.spawn(SUPERVISE[0], DEMO, env=env, encoding="utf-8", codec_errors="replace", timeout=60, dimensions=(40, 120))
    child.expect_exact("demo: done: --json added and tested.")  # its scripted compaction, its context given back
    child.expect_exact("demo› ")
    return child


def turn_and_compact(child: pexpect.spawn, text: str) -> None:
    child.send(text + "\r")
    child.expect_exact("all tests passed")
    child.expect_exact("demo› ")
    child.send("/compact\r")
    child.expect(r"demo: my task: ([^\r\n]*)")
    assert child.match.group(1) == REQUEST
    child.expect_exact("demo› ")


def finish(child: pexpect.spawn) -> str:
    """/exit; what supervise printed after it."""
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    child.close()
    return child.before


def exported_once(received, event: str, count: int = 1) -> list[dict]:
    return wait_for(lambda: (lambda found: found if len(found) >= count else None)(received.events(event)), 30, what=event)


def assert_session_records(received, sid: str) -> None:
    """Every record is the session's, with the documented attributes, on the documented resource."""
    records = received.events()
    assert records, "nothing arrived"
    row = session(sid)
    project, key = Path(row["project"]).name, row["project_key"]
    for r in records:
        assert r["event"].startswith("supervise."), r
        assert r["attributes"]["supervise.session.id"] == sid, r
        assert r["attributes"]["supervise.agent"] == "demo" and r["attributes"]["supervise.project"] == project, r
        assert r["attributes"]["supervise.project.id"] == hashlib.sha256(key.encode()).hexdigest()[:16], r
        assert r["resource"]["service.name"] == "supervise" and r["resource"]["host.name"], r["resource"]
        assert abs(r["time_ns"] / 1e9 - time.time()) < 600, r


def test_a_session_exports_its_compactions_context_rounds_and_give_backs(home):
    receiver = HttpReceiver().start()
    try:
        child = start_demo(demo_env(receiver.url))
        sid = latest()["id"]
        turn_and_compact(child, TURN)
        said = finish(child)
        recorder_done(sid)
        received = receiver.received
        [start] = exported_once(received, "supervise.session.start")
        assert start["attributes"]["supervise.session.kind"] == "new" and start["body"] == "session started"
        finished = exported_once(received, "supervise.compaction.finished", 2)
        assert all(f["attributes"]["supervise.sources"] == ["regex"] for f in finished)
        made = exported_once(received, "supervise.context.made", 3)  # two compactions and the session's end
        assert [m["attributes"]["supervise.context.round"] for m in made] == [1, 2, 3]
        assert made[-1]["attributes"]["supervise.context.trigger"] == "session_end"
        assert all(m["attributes"]["supervise.context.backend"] == "heuristic" for m in made)
        given = exported_once(received, "supervise.context.given_back", 2)
        assert [(g["attributes"]["supervise.giveback.channel"], g["attributes"]["supervise.giveback.confirmed"]) for g in given] == [
            ("typed", True),
            ("typed", True),
        ]
        [end] = exported_once(received, "supervise.session.end")
        assert end["attributes"]["supervise.session.outcome"] == "exited" and end["attributes"]["process.exit.code"] == 0
        assert_session_records(received, sid)
        # the metrics: counted by what a dashboard groups by, and no session id there
        wait_for(lambda: received.total("supervise.context.rounds") == 3, 30, what="three rounds counted")
        assert received.total("supervise.compactions", **{"supervise.compaction.outcome": "finished"}) == 2
        assert received.total("supervise.context.given_back", **{"supervise.giveback.channel": "typed"}) == 2
        assert received.total("supervise.session.started", **{"supervise.session.kind": "new"}) == 1
        assert received.total("supervise.session.ended", **{"supervise.session.outcome": "exited"}) == 1
        times = {dict(k)["supervise.state"]: v for k, v in received.latest("supervise.state.time").items()}
        assert times.get("working", 0) > 0 and times.get("waiting", 0) > 0 and times.get("compacting", 0) > 0, times
        assert received.total("supervise.sessions.active") == 0  # it ended: running in no state
        assert not any("supervise.session.id" in p["attributes"] for p in received.points)
        # no content without the opt-in: the user's words and our context stay on this machine
        for r in received.events():
            assert REQUEST not in str(r["body"]) and TURN not in str(r["body"]), r
        assert not received.events(signals.LOG_LINES) and not received.events(signals.USER_REQUEST)
        assert "telemetry" not in said, said
    finally:
        receiver.stop()


def test_content_goes_only_with_the_opt_in_and_masked(home):
    receiver = HttpReceiver().start()
    try:
        child = start_demo(demo_env(receiver.url, SUPERVISE_TELEMETRY_CONTENT="1"))
        sid = latest()["id"]
        turn_and_compact(child, SECRET_TURN)
        finish(child)
        recorder_done(sid)
        received = receiver.received
        made = exported_once(received, signals.CONTEXT_MADE, 3)
        store = Store.open_default()
        prompts = [row["prompt"] for row in store.contexts(sid)]
        store.close()
        assert [m["body"] for m in made] == prompts  # the context, as the agent was given it
        lines = "\n".join(r["body"] for r in received.events(signals.LOG_LINES))
        assert "turn 3: deploy with the key [REDACTED:anthropic-key]" in lines, lines[-2000:]
        everything = repr(received.events())
        assert SECRET not in everything and SECRET[:24] not in everything
    finally:
        receiver.stop()


@pytest.mark.slow
def test_an_endpoint_killed_mid_session_and_back_loses_the_session_nothing(home):
    receiver = HttpReceiver().start()
    port = receiver.port
    env = demo_env(receiver.url)
    child = start_demo(env)
    sid = latest()["id"]
    try:
        exported_once(receiver.received, "supervise.context.given_back")
        receiver.stop()  # killed: its port refuses
        turn_and_compact(child, TURN)
        store = Store.open_default()
        wait_for(lambda: len(store.contexts(sid)) >= 2, 30, what="the second round, made while the endpoint was down")
        receiver = HttpReceiver(port, receiver.received).start()  # back, on the same port
        turn_and_compact(child, "turn 3: add a --csv flag beside --json")
        said = finish(child)
        recorder_done(sid)
        received = receiver.received
        # what happened after it came back arrives, and the counts carry what the outage lost
        rounds = exported_once(received, signals.CONTEXT_MADE, 3)
        assert 4 in [r["attributes"]["supervise.context.round"] for r in rounds]  # (3: the third compaction, 4: the end)
        wait_for(lambda: received.total("supervise.context.rounds") == 4, 30, what="every round counted")
        wait_for(lambda: received.total("supervise.telemetry.dropped") > 0, 30, what="the dropped records counted")
        # said once, at the agent's exit, with where
        assert said.count("telemetry to http://127.0.0.1:") == 1, said
        assert re.search(
            rf"supervise: telemetry to http://127\.0\.0\.1:{port} failed \(Connection refused\); what is not sent is counted", said
        ), said
        # and nothing of the session itself was lost
        s = session(sid)
        kinds = [e["kind"] for e in s["events"]]
        assert kinds.count("compaction_finished") == 3 and kinds.count("injection") == 3, kinds
        assert len(store.contexts(sid)) == 4
        store.close()
    finally:
        child.close(force=True)
        receiver.stop()


@pytest.mark.slow
def test_an_endpoint_that_never_answers_holds_up_nothing(home):
    receiver = HttpReceiver().start()
    receiver.mode = "hang"
    try:
        child = start_demo(demo_env(receiver.url))
        sid = latest()["id"]
        turn_and_compact(child, TURN)
        said = finish(child)
        # the recorder ends within the export timeout's bounds, its last round made
        recorder_done(sid, 60)
        s = session(sid)
        kinds = [e["kind"] for e in s["events"]]
        assert kinds.count("compaction_finished") == 2 and kinds.count("injection") == 2 and "exit" in kinds, kinds
        store = Store.open_default()
        assert [r["trigger"] for r in store.contexts(sid)][-1] == "session_end"
        store.close()
        assert said.count("supervise: telemetry to") == 1, said
    finally:
        receiver.released.set()
        receiver.stop()


def test_over_grpc_too(home):
    receiver = GrpcReceiver().start()
    try:
        child = start_demo(demo_env(receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL="grpc"))
        sid = latest()["id"]
        finish(child)
        recorder_done(sid)
        exported_once(receiver.received, "supervise.context.given_back")
        exported_once(receiver.received, "supervise.session.end")
        assert_session_records(receiver.received, sid)
        wait_for(lambda: receiver.received.total("supervise.session.ended") == 1, 30, what="the session's end counted")
    finally:
        receiver.stop()


def test_without_the_sdk_a_session_runs_and_says_so_once(home, tmp_path):
    """The default install has no OpenTelemetry SDK: an endpoint set is one line, the run as usual."""
    shadow = tmp_path / "shadow" / "opentelemetry"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no OpenTelemetry here')\n")
    env = demo_env("http://127.0.0.1:9", PYTHONPATH=str(shadow.parent))
    child = start_demo(env)
    sid = latest()["id"]
    said = finish(child)
    recorder_done(sid)
    assert said.count("the OpenTelemetry SDK is not installed") == 1, said
    assert "pip install 'supervise-agents[otlp]'" in said
    assert [e["kind"] for e in session(sid)["events"]].count("injection") == 1


@pytest.mark.parametrize(
    "variable, value, said",
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobf", "did you mean http/protobuf?"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "1m", "OTEL_METRIC_EXPORT_INTERVAL must be a whole number of milliseconds"),
        ("SUPERVISE_TELEMETRY_CONTENT", "maybe", "SUPERVISE_TELEMETRY_CONTENT must be true or false"),
    ],
)
def test_a_wrong_telemetry_variable_is_one_clear_line(home, variable, value, said):
    done = subprocess.run([*SUPERVISE, "--", "true"], env={**demo_env(None), variable: value}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("supervise: ") and said in line and "hint:" in line, line


def test_a_wrong_telemetry_table_is_one_clear_line(home, tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.toml").write_text('[telemetry]\nendpoint = "http://localhost:4318"\nprotocol = "udp"\n')
    env = {**demo_env(None), "SUPERVISE_CONFIG": str(tmp_path / "conf")}
    done = subprocess.run([*SUPERVISE, "--", "true"], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "[telemetry] protocol must be one of http/protobuf, grpc, not 'udp'" in line, line


def test_the_table_sets_it_up_as_the_variables_do(home, tmp_path):
    receiver = HttpReceiver().start()
    try:
        (tmp_path / "conf").mkdir()
        (tmp_path / "conf" / "config.toml").write_text(
            textwrap.dedent(f"""\
                [telemetry]
                endpoint = "{receiver.url}"
                resource_attributes = "deployment.environment.name=dev,team=parsers"
                export_interval_seconds = 0.5
                """)
        )
        child = start_demo({**demo_env(None), "SUPERVISE_CONFIG": str(tmp_path / "conf")})
        sid = latest()["id"]
        finish(child)
        recorder_done(sid)
        [end] = exported_once(receiver.received, "supervise.session.end")
        assert end["resource"]["team"] == "parsers" and end["resource"]["deployment.environment.name"] == "dev"
    finally:
        receiver.stop()


def test_search_and_mcp_lookups_are_counted(home, tmp_path):
    receiver = HttpReceiver().start()
    try:
        env = demo_env(receiver.url)
        child = start_demo(env)
        sid = latest()["id"]
        finish(child)
        recorder_done(sid)
        found = subprocess.run([*SUPERVISE, "search", "--all", "json"], env=env, capture_output=True, text=True, timeout=30)
        assert found.returncode == 0 and sid in found.stdout, found.stderr
        wait_for(
            lambda: receiver.received.total("supervise.lookups", **{"supervise.lookup.via": "cli"}) == 1, 30, what="the search counted"
        )
        asked = _mcp_search(env, "json")
        assert sid in asked
        wait_for(
            lambda: receiver.received.total("supervise.lookups", **{"supervise.lookup.via": "mcp", "supervise.lookup.tool": "search"}) == 1,
            30,
            what="the MCP search counted",
        )
    finally:
        receiver.stop()


def _mcp_search(env: dict, words: str) -> str:
    """One search through `supervise mcp --all` (every project's), as an agent asks it (JSON-RPC over stdio)."""
    from supervisor.doctor.memory import HANDSHAKE  # (doctor's own: initialize, initialized)

    search = {"name": "search", "arguments": {"query": words, "all_projects": True}}
    messages = [*HANDSHAKE[:2], {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search}]
    proc = subprocess.Popen(
        [*SUPERVISE, "mcp", "--all"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    answer = ""
    for message in messages:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" in message:
            answer = proc.stdout.readline()
    proc.stdin.close()
    proc.wait(30)
    return answer


# -- what each event becomes (plain functions) ------------------------------------------------


SESSION = signals.Session("abc123", "claude", "2.1.330", "parser", kind="handoff", parent="xyz789", handoff_from="codex")


def test_a_hand_off_is_a_record_and_a_count_of_its_own():
    counts, records = signals.of_event("start", {"argv": ["claude"]}, SESSION, content=False)
    assert [c.metric for c in counts] == ["supervise.session.started", "supervise.handoffs"]
    assert counts[1].attributes["supervise.handoff.from"] == "codex" and "supervise.session.id" not in counts[1].attributes
    assert [r.event for r in records] == ["supervise.session.start", signals.HANDOFF]
    assert records[0].attributes["supervise.session.parent"] == "xyz789"
    assert "argv" not in repr(records)  # a command line may hold a secret


def test_a_context_round_counts_its_tokens_and_cost_and_shows_its_text_only_with_content():
    row = {
        "round": 2,
        "trigger": "compaction_started",
        "source": "model",
        "backend": "api",
        "model": "claude-haiku-4-5",
        "input_tokens": 1200,
        "output_tokens": 300,
        "cost_usd": 0.0027,
        "prompt": "[supervise] You are continuing",
    }
    counts, [record] = signals.of_context(row, SESSION, content=False)
    by = {(c.metric, c.attributes.get("gen_ai.token.type")): c.value for c in counts}
    assert by == {
        ("supervise.context.rounds", None): 1,
        ("supervise.context.tokens", "input"): 1200,
        ("supervise.context.tokens", "output"): 300,
        ("supervise.context.cost", None): 0.0027,
    }
    assert record.body == "context round 2 made (compaction_started)" and record.attributes["gen_ai.request.model"] == "claude-haiku-4-5"
    assert signals.of_context(row, SESSION, content=True)[1][0].body == row["prompt"]


def test_limits_and_continues_are_counted_and_the_rest_is_not_exported():
    assert signals.of_event("limit_reached", {"reset_at": "2026-11-26T16:21:00+00:00", "text": "limit"}, SESSION, False)[1][0].warn
    counts, _ = signals.of_event("limit_continue", {"channel": "typed", "typed": False, "why": "the user was typing"}, SESSION, False)
    assert counts[0].attributes["supervise.continue.typed"] is False
    assert signals.of_event("idle_prompt", {"text": "›"}, SESSION, False) == ([], [])
    summary = signals.of_event("agent_summary", {"text": "the agent's summary", "tokens": 5}, SESSION, False)[1][0]
    assert summary.body == "the agent summarized its session" and summary.attributes["supervise.tokens"] == 5


def test_time_in_each_state_counts_the_one_under_way():
    clock = signals.StateClock()
    clock.change("working", 2.0)
    clock.change("waiting", 5.0)
    assert clock.totals(9.0) == {"starting": 2.0, "working": 3.0, "waiting": 4.0}
    clock.end(10.0)
    assert clock.totals(50.0) == {"starting": 2.0, "working": 3.0, "waiting": 5.0} and clock.current() is None


def test_the_docs_table_every_name_and_attribute():
    doc = (ROOT / "docs" / "teams.md").read_text()
    names = [
        *signals.METRICS,
        *(name for name, _ in signals.EVENTS.values()),
        signals.CONTEXT_MADE,
        signals.HANDOFF,
        signals.USER_REQUEST,
        signals.LOG_LINES,
    ]
    attributes = [
        *signals.DETAIL_ATTRIBUTES.values(),
        "supervise.session.id",
        "supervise.agent",
        "supervise.agent.version",
        "supervise.project",
        "supervise.project.id",
    ]
    missing = [n for n in [*names, *attributes] if f"`{n}`" not in doc]
    assert not missing, f"docs/teams.md does not name: {missing}"
    assert Path(ROOT / "docs" / "grafana-dashboard.json").is_file()


def _prometheus_name(name: str, kind: str, unit: str) -> str:
    """As the collector's Prometheus exporter writes a metric's name (dots to underscores, the unit, _total)."""
    unit = {"s": "seconds"}.get(unit, "" if unit.startswith("{") else unit)
    return name.replace(".", "_") + (f"_{unit}" if unit else "") + ("_total" if kind in ("counter", "observable_counter") else "")


def test_the_dashboard_and_the_collector_config_name_only_what_is_exported():
    import yaml  # (Datasette's dependency)

    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exported = {_prometheus_name(name, kind, unit) for name, (kind, unit, _) in signals.METRICS.items()}
    labels = {a.replace(".", "_") for a in [*signals.DETAIL_ATTRIBUTES.values(), *signals.Session("x", "y").record_attributes()]}
    labels |= {"supervise_agent_version", "supervise_project", "supervise_state", "supervise_session_kind", "supervise_session_outcome"}
    labels |= {"supervise_compaction_outcome", "supervise_context_backend", "supervise_context_source", "supervise_context_trigger"}
    labels |= {"supervise_handoff_from", "supervise_lookup_via", "supervise_lookup_tool"}
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"] if t["datasource"]["type"] == "prometheus"]
    queries += [v["query"]["query"] for v in dashboard["templating"]["list"]]
    used = {m for q in queries for m in re.findall(r"\b(supervise_\w+)\{|label_values\((\w+),", q) for m in m if m}
    assert used and used <= exported, used - exported
    said = {m for q in queries for m in re.findall(r"\b(supervise_\w+)\s*(?:=~|=)", q)} | {
        m for q in queries for m in re.findall(r"by \(([^)]*)\)", q) for m in m.split(", ")
    }
    assert {s for s in said if s.startswith("supervise_")} <= labels, {s for s in said if s.startswith("supervise_")} - labels
    assert len(dashboard["panels"]) >= 8 and {p["type"] for p in dashboard["panels"]} >= {"timeseries", "logs"}
    collector = yaml.safe_load((ROOT / "docs" / "otel-collector.yaml").read_text())
    assert collector["service"]["pipelines"]["metrics"]["exporters"] == ["prometheus"]
    assert collector["service"]["pipelines"]["logs"]["exporters"] == ["otlphttp/loki"]
    assert (ROOT / "docs" / "otel-collector.yaml").read_text().split("\n", 1)[1] in (ROOT / "docs" / "teams.md").read_text()


def _doctor_row(env: dict) -> dict:
    done = subprocess.run([*SUPERVISE, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=120)
    return next(c for c in json.loads(done.stdout) if c["name"] == "telemetry")


def test_doctor_says_where_it_goes_and_whether_anything_answers_there(home):
    receiver = HttpReceiver().start()
    port = receiver.port
    try:
        row = _doctor_row(demo_env(receiver.url))
        assert row["status"] == "ok" and row["detail"].startswith(f"http/protobuf to http://127.0.0.1:{port}, without content"), row
    finally:
        receiver.stop()
    row = _doctor_row(demo_env(f"http://127.0.0.1:{port}"))
    assert row["status"] == "warn" and "nothing answers at" in row["detail"] and "Connection refused" in row["detail"], row
    assert _doctor_row(demo_env(None))["detail"].startswith("off: no OTLP endpoint set")


def test_it_is_off_unless_an_endpoint_is_set_and_can_be_left_to_the_agents():
    from supervisor import config

    assert not config.load(env={}).telemetry.on
    on = config.load(env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}).telemetry
    assert on.on and on.protocol == "http/protobuf" and not on.content
    assert not config.load(env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "SUPERVISE_TELEMETRY": "off"}).telemetry.on
    assert not config.load(env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}).telemetry.on
    assert config.load(env={"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}).telemetry.on


@pytest.mark.slow
def test_a_usage_limit_waited_out_is_reached_waited_continued_and_cleared(home):
    """The demo agent's limit resets seconds later; supervise waits it out and types a continue."""
    receiver = HttpReceiver().start()
    try:
        argv = [*DEMO, "--limit-seconds", "4"]
        argv[1:1] = ["--on-limit", "wait"]
        env = demo_env(receiver.url, SUPERVISE_LIMIT_MARGIN="1")
        child = pexpect.spawn(SUPERVISE[0], argv, env=env, encoding="utf-8", codec_errors="replace", timeout=60, dimensions=(40, 120))
        child.expect_exact("demo: done: --json added and tested.")
        child.expect_exact("demo› ")
        sid = latest()["id"]
        child.send("limit: the next step")
        time.sleep(0.3)
        child.send("\r")
        child.expect(r"Usage limit reached · resets")
        child.expect_exact("● Edit src/report.py: continue", timeout=60)  # the continue supervise typed, worked on
        child.expect_exact("demo› ")
        finish(child)
        recorder_done(sid)
        received = receiver.received
        for event in ("supervise.limit.reached", "supervise.limit.wait", "supervise.continue.typed", "supervise.limit.cleared"):
            exported_once(received, event)
        [reached] = received.events("supervise.limit.reached")
        assert reached["severity"] == "WARN" and reached["attributes"]["supervise.limit.reset_at"], reached
        wait_for(lambda: received.total("supervise.limit.reached") == 1, 30, what="the limit counted")
        assert received.total("supervise.limit.continues", **{"supervise.continue.typed": True}) == 1
        limited = received.total("supervise.state.time", **{"supervise.state": "limited"})
        assert limited >= 3, limited  # the limit's seconds, less the time it took to be seen
    finally:
        receiver.stop()
