"""Telemetry never loses anything without a word: what could not be sent is counted and said
once (at the agent's exit, to the user's terminal; at the end, into recorder.err and the
session's events), whatever went wrong (the endpoint refusing, hanging or failing, the SDK
or an event that cannot be made into a record); doctor's check asks the endpoint a real
export; a malformed OTEL_* value is one line at the start. Against the receiver of
tests/otlpreceiver.py (a real HTTP or gRPC server on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from agentdriver import Screen
from conftest import ROOT, SUPERVISE
from helpers import latest, recorder_done, session, wait_for
from otlpreceiver import GrpcReceiver, HttpReceiver
from supervisor import config
from supervisor.store import projects
from supervisor.store.database import Store
from supervisor.telemetry import signals
from supervisor.telemetry.export import SessionTelemetry

TOY = ROOT / "tests" / "agents" / "toyagent.py"
TOY_PATTERNS = ROOT / "tests" / "agents" / "toy.toml"


def otel_env(url: str | None, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY", "OTEL_"))}
    env.update(TERM="xterm-256color", OTEL_METRIC_EXPORT_INTERVAL="500", **extra)
    if url:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
    return env


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the exporting thread outlives whatever goes wrong on it ------------------------------------


class Said:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def session_telemetry(env: dict, said: Said, recorded: list) -> SessionTelemetry:
    t0 = time.monotonic()
    settings = config.load(env=env).telemetry
    telemetry = SessionTelemetry(
        settings, signals.Session("abc123", "command"), None, lambda: time.monotonic() - t0, said, None, recorded.append
    )
    telemetry.start()
    return telemetry


def test_an_event_that_cannot_be_made_into_a_record_costs_that_record_alone(capfd):
    receiver = HttpReceiver().start()
    try:
        said, recorded = Said(), []
        telemetry = session_telemetry(otel_env(receiver.url), said, recorded)
        telemetry.on_event("start", 0.0, {"argv": ["sh"]})
        telemetry.on_context({"round": 1, "trigger": "compaction_started", "input_tokens": "many"})  # no number: it cannot be counted
        telemetry.on_event("exit", 0.5, {"exit_code": 0})
        telemetry.close(5)
        received = receiver.received
        assert [r["event"] for r in received.events()] == ["supervise.session.start", "supervise.session.end"]
        assert telemetry.dropped == 1 and received.total("supervise.telemetry.dropped") == 1
        [line] = said.lines
        assert line.startswith(f"supervise: telemetry to {receiver.url} failed (") and "hint:" in line, line
        assert recorded == [{"endpoint": receiver.url, "records": 1, "reason": recorded[0]["reason"]}]
        err = capfd.readouterr().err
        assert err.count(line) == 1 and err.count("1 log records of this session were not sent") == 1, err
    finally:
        receiver.stop()


def test_an_sdk_that_cannot_be_set_up_is_one_line_and_what_was_handed_over_is_counted(monkeypatch):
    """gRPC's exporter takes only gzip: the SDK raises as it is set up, on our thread."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "deflate")
    said, recorded = Said(), []
    telemetry = session_telemetry(otel_env(f"http://127.0.0.1:{closed_port()}", OTEL_EXPORTER_OTLP_PROTOCOL="grpc"), said, recorded)
    telemetry.on_event("start", 0.0, {"argv": ["sh"]})
    telemetry.on_event("exit", 0.5, {"exit_code": 0})
    telemetry.ended()  # (the recorder, once every event is told)
    [line] = said.lines
    assert "could not be set up" in line and "deflate" in line and "hint:" in line, line
    telemetry.close(5)
    assert telemetry.dropped == 2 and [r["records"] for r in recorded] == [2]


# -- a session whose endpoint is down, hangs or fails says so, once ------------------------------


@pytest.mark.parametrize("endpoint", ["closed", "hang", "500"])
def test_a_short_session_that_lost_its_records_says_so_once(home, endpoint):
    receiver = HttpReceiver().start()
    receiver.mode = {"hang": "hang", "500": "fail"}.get(endpoint, "ok")
    url = f"http://127.0.0.1:{closed_port()}" if endpoint == "closed" else receiver.url
    try:
        env = otel_env(url, OTEL_EXPORTER_OTLP_TIMEOUT="6000")
        child = pexpect.spawn(SUPERVISE[0], ["--", "sh", "-c", "echo hi"], env=env, encoding="utf-8", timeout=60)
        child.expect_exact("hi")
        exited = time.monotonic()
        child.expect(pexpect.EOF)
        waited = time.monotonic() - exited
        child.close()
        said = [line for line in child.before.splitlines() if "telemetry" in line]
        assert len(said) == 1, child.before
        assert said[0].startswith(f"supervise: telemetry to {url} ") and "(hint: " in said[0], said
        assert waited < 4, f"the user's shell waited {waited:.1f} s for a {endpoint} endpoint"  # not the export's 6 s
        sid = latest()["id"]
        recorder_done(sid)
        [failed] = [e["detail"] for e in session(sid)["events"] if e["kind"] == "telemetry_failed"]
        assert failed["records"] == 2 and failed["endpoint"] == url, failed  # the session's start and its end
        err = (Path(session(sid)["cast_path"]).parent / "recorder.err").read_text()
        assert err.count("2 log records of this session were not sent") == 1, err
    finally:
        receiver.released.set()
        receiver.stop()


def test_a_session_whose_records_went_through_says_nothing_of_telemetry(home):
    receiver = HttpReceiver().start()
    try:
        child = pexpect.spawn(SUPERVISE[0], ["--", "sh", "-c", "echo hi"], env=otel_env(receiver.url), encoding="utf-8", timeout=60)
        child.expect(pexpect.EOF)
        child.close()
        assert "telemetry" not in child.before
        sid = latest()["id"]
        recorder_done(sid)
        assert [r["event"] for r in receiver.received.events()] == ["supervise.session.start", "supervise.session.end"]
        assert not [e for e in session(sid)["events"] if e["kind"] == "telemetry_failed"]
    finally:
        receiver.stop()


# -- doctor asks the endpoint a real export ---------------------------------------------------------


def doctor_row(env: dict) -> dict:
    done = subprocess.run([*SUPERVISE, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=120)
    return next(c for c in json.loads(done.stdout) if c["name"] == "telemetry")


@pytest.mark.parametrize(
    "mode, status, said",
    [
        ("ok", "ok", "an empty export was taken (HTTP 200)"),
        ("fail", "warn", "answered HTTP 500 Internal Server Error to an empty export"),
        ("refuse", "warn", "answered HTTP 503 Service Unavailable to an empty export"),
        ("hang", "warn", "no answer from http://127.0.0.1:{port} in 2 s to an empty export"),
    ],
)
def test_doctor_tells_what_the_endpoint_answered_to_an_empty_export(home, mode, status, said):
    receiver = HttpReceiver().start()
    receiver.mode = mode
    try:
        row = doctor_row(otel_env(receiver.url))
        assert row["status"] == status and said.format(port=receiver.port) in row["detail"], row
        assert (row["fix"] is None) == (status == "ok"), row
    finally:
        receiver.released.set()
        receiver.stop()


def test_doctor_over_grpc_asks_the_grpc_service(home):
    receiver = GrpcReceiver().start()
    try:
        row = doctor_row(otel_env(receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL="grpc"))
        assert row["status"] == "ok" and "an empty export was taken (gRPC OK)" in row["detail"], row
    finally:
        receiver.stop()
    row = doctor_row(otel_env(receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL="grpc"))
    assert row["status"] == "warn" and "Connection refused" in row["detail"] and row["fix"], row


# -- a malformed value is one line at the start --------------------------------------------------------


@pytest.mark.parametrize(
    "variable, value, said",
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:99999", "a port from 1 to 65535), not 'http://127.0.0.1:99999'"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://:4318", "an http:// or https:// URL with a host"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a", "key=value pairs separated by commas (the first pair has no =)"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "=x", "(the first pair has no name before =)"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=b,,c", "(the second pair is empty)"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20sekrit42,x-team", "(the second pair has no =)"),
        ("OTEL_RESOURCE_ATTRIBUTES", "team=parsers,a", "(the second pair has no =), not 'team=parsers,a'"),
    ],
)
def test_a_malformed_otel_value_is_one_line_at_the_start_and_a_settings_problem_for_doctor(home, variable, value, said):
    env = {**otel_env(None), variable: value}
    done = subprocess.run([*SUPERVISE, "--", "true"], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"supervise: {variable} must be ") and said in line and "(hint: e.g. " in line, line
    assert "sekrit42" not in line  # a header's value is a secret
    checks = json.loads(subprocess.run([*SUPERVISE, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=120).stdout)
    problems = [c for c in checks if c["status"] == "problem"]
    assert [(c["name"], c["detail"]) for c in problems if variable in c["detail"]] == [
        ("config", line[len("supervise: ") : line.index(" (hint")])
    ]
    assert not [c for c in checks if "report it" in (c["fix"] or "")], checks


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("endpoint", '"http://127.0.0.1:99999"', "[telemetry] endpoint must be an http:// or https:// URL with a host"),
        ("headers", '"=x"', "[telemetry] headers must be key=value pairs separated by commas (the first pair has no name before =)"),
        (
            "resource_attributes",
            '"a=b,,c"',
            "[telemetry] resource_attributes must be key=value pairs separated by commas (the second pair is empty)",
        ),
    ],
)
def test_a_malformed_telemetry_table_key_is_one_line_at_the_start(home, tmp_path, key, value, said):
    (tmp_path / "conf").mkdir()
    endpoint = "" if key == "endpoint" else 'endpoint = "http://localhost:4318"\n'
    (tmp_path / "conf" / "config.toml").write_text(f"[telemetry]\n{endpoint}{key} = {value}\n")
    env = {**otel_env(None), "SUPERVISE_CONFIG": str(tmp_path / "conf")}
    done = subprocess.run([*SUPERVISE, "--", "true"], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert said in line and "hint:" in line, line


# -- the brief's event is exported (it is emitted as the recorder starts) ------------------------------


def test_a_sessions_brief_reaches_the_collector(home, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    store = Store(home / "supervise.db")
    key = projects.key_of(store, project)  # what the project is known by (its folder, before a first commit)
    store.create_session(
        "prev22", command="toy", argv=["toy"], cwd=str(project), project=str(project), project_key=key, agent="toy", status="completed"
    )
    context = {"original_request": "port the importer to kestrel", "current_task": "x", "key_decisions": ["kestrel, not redis"]}
    context.update(completed_steps=[], pending_steps=[], relevant_files=[], errors_and_resolutions=[])
    store.add_context("prev22", lambda r: f"[supervise] round {r}", trigger="end", source="heuristic", context=context)
    store.close()
    receiver = HttpReceiver().start()
    log = tmp_path / "toy.jsonl"
    args = ["--agent", "toy", "--patterns", str(TOY_PATTERNS), "--brief", "--", sys.executable, str(TOY), "--log", str(log)]
    try:
        screen = Screen(args, otel_env(receiver.url), project)
        try:
            screen.wait("toy: ready", 20)
            sid = latest()["id"]
            wait_for(lambda: [e for e in session(sid)["events"] if e["kind"] == "injection"], 20, what="the brief typed")
        finally:
            screen.type("/exit")
            screen.close()
        recorder_done(sid)
        [given] = wait_for(lambda: receiver.received.events("supervise.brief.given"), 15, what="the brief's record exported")
        assert given["attributes"]["supervise.session.id"] == sid and given["attributes"]["supervise.brief.sessions"] == ["prev22"]
        assert "kestrel" not in json.dumps(given)  # no content without the opt-in
    finally:
        receiver.stop()
