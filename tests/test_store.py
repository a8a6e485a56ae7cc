import os
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.errors import SuperviseError
from supervisor.store import migrations
from supervisor.store.database import ACTIVE, INTERRUPTED, Event, Store, utcnow
from supervisor.store.events import EventSink


def test_migrating_an_empty_database_creates_the_tables_with_their_columns(tmp_path):
    store = Store(tmp_path / "s.db")
    cols = {t: set(store.db[t].columns_dict) for t in ("sessions", "events")}
    assert {
        "id",
        "name",
        "command",
        "argv",
        "agent",
        "cwd",
        "started",
        "ended",
        "exit_code",
        "status",
        "pid",
        "child_pid",
        "cast_path",
        "log_path",
        "parent_id",
        "agent_session_id",
        "options",
    } <= cols["sessions"]
    assert {"id", "session_id", "time", "offset", "kind", "detail"} <= cols["events"]
    assert migrations.applied(store.conn) == [
        "m001_sessions_and_events",
        "m002_agent_session_id",
        "m003_contexts",
        "m004_session_options",
        "m005_context_offsets",
        "m006_agent_messages",
        "m007_search",
        "m008_context_backend",
        "m009_session_state",
        "m010_projects_and_stemmed_search",
        "m011_paths_relative_to_the_database",
        "m012_project_keys",
        "m013_log_indexed",
        "m014_secrets_masked",
        "m015_every_script_searched",
        "m016_search_by_meaning",
    ]
    assert {"source", "backend", "model", "error"} <= set(store.db["contexts"].columns_dict)
    assert {"embedder", "source", "row", "session_id", "spans", "vectors"} <= set(store.db["passage_vectors"].columns_dict)
    assert store.db.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert oct(os.stat(tmp_path / "s.db").st_mode & 0o777) == "0o600"
    # opening again applies nothing twice
    store.close()
    Store(tmp_path / "s.db").close()


def test_sessions_resolve_by_unique_prefix_and_report_ambiguity(tmp_path):
    store = Store(tmp_path / "s.db")
    a = store.create_session(id="abc234", command="a", argv=["a"], cwd="/")
    b = store.create_session(id="abd234", command="b", argv=["b"], cwd="/")
    assert store.resolve("abc")["command"] == "a"
    assert store.resolve("ABD2")["id"] == b["id"]
    with pytest.raises(SuperviseError, match="'ab' is ambiguous: it matches 2 sessions") as err:
        store.resolve("ab")
    assert "type more characters" in str(err.value)
    with pytest.raises(SuperviseError, match="no session matches"):
        store.resolve("zzzzzz9")
    with pytest.raises(SuperviseError, match="no session matches"):
        store.resolve("a%")  # LIKE wildcards are taken literally
    assert [s["id"] for s in store.sessions()] == [b["id"], a["id"]]
    assert store.get_session(a["id"])["argv"] == ["a"]


def test_generated_ids_are_short_and_unambiguous_to_type(tmp_path):
    store = Store(tmp_path / "s.db")
    ids = [store.create_session(command="x", argv=["x"], cwd="/")["id"] for _ in range(50)]
    assert len(set(ids)) == 50
    assert all(len(i) == 6 and not set(i) & set("01ilo") for i in ids)


def test_session_whose_supervisor_died_reads_as_interrupted(tmp_path):
    store = Store(tmp_path / "s.db")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = store.create_session(command="x", argv=["x"], cwd="/", pid=dead.pid)
    other = subprocess.Popen(["sleep", "30"])  # alive, and no supervise
    try:
        alive_but_not_us = store.create_session(command="y", argv=["y"], cwd="/", pid=other.pid)
        ours = store.create_session(command="z", argv=["z"], cwd="/", pid=os.getpid())
        by_id = {s["id"]: s["status"] for s in store.sessions()}
    finally:
        other.kill()
        other.wait()
    assert by_id[gone["id"]] == INTERRUPTED
    assert by_id[alive_but_not_us["id"]] == INTERRUPTED
    # this test process runs pytest, not supervise: a reused pid must not keep a session active
    assert by_id[ours["id"]] in (ACTIVE, INTERRUPTED)


def test_events_round_trip_with_json_detail(tmp_path):
    store = Store(tmp_path / "s.db")
    s = store.create_session(command="x", argv=["x"], cwd="/")
    store.add_event(s["id"], Event("start", {"argv": ["x"], "ü": "✻"}, 0.0, utcnow()))
    store.add_event(s["id"], Event("exit", {"exit_code": 0}, 1.5, utcnow()))
    events = store.events(s["id"])
    assert [(e["kind"], e["offset"]) for e in events] == [("start", 0.0), ("exit", 1.5)]
    assert events[0]["detail"] == {"argv": ["x"], "ü": "✻"}


def test_corrupt_database_is_refused_with_a_hint_and_left_untouched(tmp_path):
    path = tmp_path / "s.db"
    garbage = b"this is not a database\x00" * 100
    path.write_bytes(garbage)
    with pytest.raises(SuperviseError) as err:
        Store(path)
    assert "supervise doctor --repair" in str(err.value)
    assert path.read_bytes() == garbage


def test_unwritable_data_dir_is_refused_with_a_hint(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SuperviseError, match="SUPERVISE_HOME"):
        Store(blocker / "sub" / "s.db")


def test_a_database_from_an_older_supervise_is_upgraded_in_place(tmp_path):
    import sqlite_utils

    from supervisor.store.migrations import SET, STEPS

    path = tmp_path / "s.db"
    db = sqlite_utils.Database(path)
    first = sqlite_utils.Migrations(SET)  # what the first release of the schema had
    first()(STEPS[0])
    first.apply(db)
    db["sessions"].insert(
        {"id": "abc234", "command": "claude", "argv": '["claude"]', "cwd": "/", "started": "2026-01-01", "status": "completed"}
    )
    db.conn.close()
    store = Store(path)
    assert "agent_session_id" in store.db["sessions"].columns_dict
    assert store.get_session("abc234")["command"] == "claude"


OPEN_WHEN_TOLD = """
import os, sys, time
from supervisor.store.database import Store
while not os.path.exists(sys.argv[2]):
    time.sleep(0.001)
Store(sys.argv[1]).close()
"""


@pytest.mark.parametrize("schema", ["new", "first release"])
def test_supervisors_opening_one_database_at_once_all_get_it_migrated_once(tmp_path, schema):
    """`supervise -- claude` and a `supervise ps` in the next pane start together on a new
    database, or on one an older supervise wrote: each opens it, none fails on the other's
    migration half done, and every migration ran once."""
    import sqlite_utils

    for attempt in range(5):  # the race is narrow: give it several chances to show
        path, go = tmp_path / f"s{attempt}.db", tmp_path / f"go{attempt}"
        if schema == "first release":
            db = sqlite_utils.Database(path)
            first = sqlite_utils.Migrations(migrations.SET)
            first()(migrations.STEPS[0])
            first.apply(db)
            db.conn.close()
        procs = [
            subprocess.Popen([sys.executable, "-c", OPEN_WHEN_TOLD, str(path), str(go)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for _ in range(6)
        ]
        go.touch()
        outputs = [p.communicate(timeout=60)[0].decode() for p in procs]
        assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
        store = Store(path)
        assert migrations.applied(store.conn) == [fn.__name__ for fn in migrations.STEPS]
        store.close()


def test_a_context_round_is_decided_once_even_with_two_writers(tmp_path):
    """Two processes may make a round of one session at once (a `resume` during its
    session-end context): each gets its own round, and each prompt names that round."""
    import threading

    path = tmp_path / "s.db"
    first = Store(path)
    s = first.create_session(command="x", argv=["x"], cwd="/")
    barrier = threading.Barrier(2)
    rows = []

    def write():
        store = Store(path)
        barrier.wait()
        rows.append(store.add_context(s["id"], lambda n: f"round {n}", trigger="t", source="heuristic", context={}))
        store.close()

    threads = [threading.Thread(target=write) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    stored = first.contexts(s["id"])
    assert [(c["round"], c["prompt"]) for c in stored] == [(1, "round 1"), (2, "round 2")]


def test_a_subscriber_that_raises_is_reported_and_the_others_still_hear_every_event(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/")["id"]
    failures, heard = [], []
    sink = EventSink(store, sid, fail=lambda where, exc: failures.append((where, str(exc))))

    def broken(kind, t, detail):
        raise RuntimeError(f"cannot take {kind}")

    sink.subscribe("first", lambda kind, t, detail: heard.append(("first", kind)))
    sink.subscribe("broken", broken)
    sink.subscribe("last", lambda kind, t, detail: heard.append(("last", kind)))
    sink.start()
    sink.emit("compaction_started", 1.0, {}, "regex")
    sink.emit("compaction_finished", 2.0, {}, "regex")
    sink.close()
    assert heard == [
        ("first", "compaction_started"),
        ("last", "compaction_started"),
        ("first", "compaction_finished"),
        ("last", "compaction_finished"),
    ]
    assert failures == [("broken", "cannot take compaction_started"), ("broken", "cannot take compaction_finished")]
    assert [e["kind"] for e in store.events(sid)] == ["compaction_started", "compaction_finished"]


def test_an_event_a_subscriber_emits_is_told_once_every_subscriber_has_heard_the_first(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/")["id"]
    heard, failures = [], []
    sink = EventSink(store, sid, fail=lambda where, exc: failures.append((where, exc)))

    def waits(kind, t, detail):
        heard.append(("waits", kind))
        if kind == "limit_reached":
            sink.emit("limit_wait", t, {"wait": 1}, "limits")

    sink.subscribe("waits", waits)
    sink.subscribe("last", lambda kind, t, detail: heard.append(("last", kind)))
    sink.start()
    sink.emit("limit_reached", 1.0, {}, "regex")
    sink.drain()
    assert heard == [("waits", "limit_reached"), ("last", "limit_reached"), ("waits", "limit_wait"), ("last", "limit_wait")]
    assert [e["kind"] for e in store.events(sid)] == ["limit_reached", "limit_wait"]
    sink.emit("compaction_finished", 2.0, {}, "regex")
    sink.emit("compaction_finished", 2.5, {}, "transcript")  # the same compaction: merged, and no failure
    sink.close()
    assert [e["detail"]["sources"] for e in store.events(sid) if e["kind"] == "compaction_finished"] == [["regex", "transcript"]]
    assert failures == []


def test_the_data_and_config_folders_are_where_platformdirs_puts_them_with_no_variable_set(tmp_path, monkeypatch):
    import platformdirs

    from supervisor import config, paths

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert paths.data_dir({}) == Path(platformdirs.user_data_dir("supervise", appauthor=False)) == tmp_path / ".local/share/supervise"
    assert config.config_dir({}) == Path(platformdirs.user_config_dir("supervise", appauthor=False)) == tmp_path / ".config/supervise"
