"""Agents' own records of a session, read: Codex's rollout files (a real one, recorded by
scripts/agents/codex.py's compact-manual scenario and trimmed of its instructions), followed in
the dated folders every Codex session shares, and the agent's own compaction summary set beside
supervise's context."""

import json

import pytest
import shutil

from fixtureset import FIXTURES
from helpers import wait_for
from supervisor.contexts import compare
from supervisor.detection import transcript
from supervisor.profiles.codex import transcript as rollout
from supervisor.profiles.recordfiles import JSON_LINES

RECORD = next((FIXTURES / "codex" / "0.169.0" / "record").glob("rollout-*.jsonl"))
THREAD = "01a215f5-fb29-7c40-b415-41fb688b728a"


def records():
    return JSON_LINES.read(RECORD)[0]


def test_a_codex_rollout_gives_the_users_words_its_replies_and_its_own_summary():
    rs = records()
    assert [rollout.session_id(r) for r in rs if rollout.session_id(r)] == [THREAD]
    assert rollout.user_messages(rs) == ["hello there", "second message", "third message after compaction"]
    lines = rollout.as_lines(rs)
    assert "› hello there" in lines and "• Fake reply #1: hello from the fake model." in lines
    assert not [line for line in lines if "environment_context" in line]  # what Codex adds is not the user's
    [compacted] = [r for r in rs if rollout.compaction(r) is not None]
    assert rollout.summary(compacted) == (
        "Checkpoint: the user is testing the terminal client with short greetings. Progress: every message was answered. "
        "Next: answer the next message briefly."
    )
    assert [rollout.summary(r) for r in rs].count(None) == len(rs) - 1


def test_a_rollout_is_found_by_its_thread_id_in_the_dated_folders(tmp_path):
    env = {"HOME": str(tmp_path)}
    top = rollout.folder(env, "/work/project")
    assert top == tmp_path / ".codex" / "sessions"
    assert rollout.folder({**env, "CODEX_HOME": str(tmp_path / "ch")}, "/x") == tmp_path / "ch" / "sessions"
    day = top / "2026" / "11" / "26"
    day.mkdir(parents=True)
    shutil.copy(RECORD, day / RECORD.name)
    assert rollout.locate(top, THREAD) == day / RECORD.name
    assert rollout.locate(top, "01a215f5-0000-0000-0000-000000000000") is None


def test_only_the_rollouts_of_the_sessions_folder_are_followed(tmp_path):
    """Every Codex on the machine writes under the same folder: a session in another folder,
    and one that began before ours, are not ours."""
    top = tmp_path / "sessions"
    top.mkdir()
    (top / "rollout-old-aaaa.jsonl").write_text(meta("aaaa", "/work/project") + "\n")
    got = []
    follower = transcript.TranscriptFollower(
        top,
        lambda record, path: got.append((path.name, rollout.user_text(record))),
        poll=0.05,
        source=rollout.SOURCE,
        claims=lambda record, path: rollout.claims(record, path, "/work/project", None),
    )
    follower.start()
    try:
        day = top / "2026" / "11" / "26"
        day.mkdir(parents=True)
        (day / "rollout-x-bbbb.jsonl").write_text("\n".join([meta("bbbb", "/elsewhere"), said("not ours")]) + "\n")
        (day / "rollout-y-cccc.jsonl").write_text("\n".join([meta("cccc", "/work/project"), said("ours")]) + "\n")
        with open(top / "rollout-old-aaaa.jsonl", "a") as fh:
            fh.write(said("an older session's") + "\n")
        wait_for(lambda: ("rollout-y-cccc.jsonl", "ours") in got)
        with open(day / "rollout-x-bbbb.jsonl", "a") as fh:
            fh.write(said("still not ours") + "\n")
        with open(day / "rollout-y-cccc.jsonl", "a") as fh:
            fh.write(said("ours again") + "\n")
        wait_for(lambda: ("rollout-y-cccc.jsonl", "ours again") in got)
    finally:
        follower.stop()
    assert [text for _, text in got if text] == ["ours", "ours again"]


def test_a_resumed_thread_is_ours_by_its_id_in_the_file_name(tmp_path):
    path = tmp_path / f"rollout-2026-11-26T03-46-11-{THREAD}.jsonl"
    assert rollout.claims(json.loads(said("carried on")), path, "/work/project", THREAD) is True
    assert rollout.claims(json.loads(said("carried on")), path, "/work/project", None) is None


def test_what_the_agents_summary_kept_beside_supervises_context():
    context = {
        "original_request": "write src/totals.py that adds up the amount column of data.csv",
        "latest_request": "rename the total column in src/totals.py",
        "relevant_files": ["src/totals.py: sums the amount column", "data.csv: the input"],
        "key_decisions": ["Use the decimal module for money, floats round wrong"],
        "errors_and_resolutions": ["KeyError 'amount' in src/totals.py: the header has a BOM, read with utf-8-sig"],
        "pending_steps": ["Rename the total column"],
        "completed_steps": [],
    }
    summary = (
        "The user wants src/totals.py to add up the amount column of data.csv. Money uses the decimal module because "
        "floats round wrong. Also touched tests/test_totals.py."
    )
    got = compare.compare(context, summary)
    assert {(i.kind, i.text) for i in got.both} >= {
        ("request", context["original_request"]),
        ("file", "src/totals.py"),
        ("file", "data.csv"),
        ("decision", context["key_decisions"][0]),
    }
    assert {(i.kind, i.text) for i in got.only_ours} == {
        ("latest request", context["latest_request"]),
        ("error", context["errors_and_resolutions"][0]),
        ("pending", "Rename the total column"),
    }
    assert [(i.kind, i.text) for i in got.only_theirs] == [("file", "tests/test_totals.py")]


def test_each_summary_is_set_beside_the_round_of_its_compaction():
    events = [
        {"kind": "agent_summary", "time": "2026-11-26T10:00:05+00:00", "offset": 5.0, "detail": {"text": "first", "tokens": 1}},
        {"kind": "idle_prompt", "time": "2026-11-26T10:00:06+00:00", "offset": 6.0, "detail": {}},
        {"kind": "agent_summary", "time": "2026-11-26T10:10:00+00:00", "offset": 600.0, "detail": {"text": "second", "tokens": 1}},
    ]
    rounds = [
        {"round": 1, "trigger": "compaction_started", "created": "2026-11-26T10:00:01+00:00", "context": {}},
        {"round": 2, "trigger": "periodic", "created": "2026-11-26T10:00:06+00:00", "context": {}},
        {"round": 3, "trigger": "compaction_finished", "created": "2026-11-26T10:09:58+00:00", "context": {}},
    ]
    assert [(k["agent_summary"], k["round"]) for k in compare.report(events, rounds)] == [("first", 1), ("second", 3)]
    assert compare.report(events, []) == [
        {"offset": 5.0, "agent_summary": "first", "agent_tokens": 1},
        {"offset": 600.0, "agent_summary": "second", "agent_tokens": 1},
    ]


def meta(thread: str, cwd: str) -> str:
    return json.dumps({"timestamp": "2026-11-26T03:46:11.887Z", "type": "session_meta", "payload": {"id": thread, "cwd": cwd}})


def said(text: str) -> str:
    item = {"type": "UserMessage", "content": [{"type": "text", "text": text}]}
    return json.dumps({"type": "event_msg", "payload": {"type": "item_completed", "item": item}})


def test_a_hooks_context_in_a_gemini_message_is_not_the_users_words():
    from supervisor.profiles.gemini import transcript as gemini

    said = "turn 2: rename the total column"
    parts = [{"text": said}, {"text": "<hook_context>[supervise] You are continuing earlier work</hook_context>"}]
    record = {"id": "m-2", "type": "user", "content": parts}
    assert gemini.user_text(record) == said
    assert gemini.user_messages([record]) == [said]
    assert not [line for line in gemini.as_lines([record]) if "supervise" in line]


@pytest.mark.parametrize("door_first", [True, False], ids=["door-first", "record-first"])
def test_the_agents_summary_said_by_its_door_and_its_record_is_kept_once(tmp_path, door_first):
    """pi's extension passes its summary as it asks for the context, and pi writes it to its
    session file: whichever supervise hears first is kept, the other adds nothing but its
    witness of the compaction; the agent's session id its door named is taken until its record
    names one."""
    import time

    from supervisor.channel import RecorderConfig
    from supervisor.profiles.pi import transcript as pi
    from supervisor.run.agentrecord import AgentRecord
    from supervisor.store.database import Store
    from supervisor.store.events import EventSink

    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="pi", argv=["pi"], cwd=str(tmp_path))["id"]
    sink = EventSink(store, sid)
    now = time.time()
    cfg = RecorderConfig(sid, str(tmp_path / "s.db"), "", "", {}, started_wall=now - 10, transcript_dir=str(tmp_path))
    record = AgentRecord(pi, cfg, sink, None, lambda: 10.0)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now - 1))
    compacted = {"type": "compaction", "timestamp": stamp, "summary": "## Goal\nsum the amounts", "tokensBefore": 634}
    said = [
        lambda: record.door_said("pi-session-1", "## Goal\nsum the amounts", 9.5),
        lambda: record.on_record(compacted, tmp_path / "s.jsonl"),
    ]
    for step in said if door_first else reversed(said):
        sink.call("test", step)
    sink.call("test", record.on_record, compacted, tmp_path / "s.jsonl")  # its file read again
    sink.close()
    events = store.events(sid)
    assert [e["detail"]["sources"] for e in events if e["kind"] == "agent_summary"] == [["hook" if door_first else "transcript"]]
    assert [e["kind"] for e in events if e["kind"].startswith("compaction_")] == ["compaction_started", "compaction_finished"]
    assert store.get_session(sid)["agent_session_id"] == "pi-session-1"
    store.close()
