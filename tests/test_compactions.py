"""One compaction, one pair of events, whoever saw it and in whatever order the sightings
arrive: the screen (its banner, its result line, each perhaps twice), the agent's own record
(stamped by the agent's clock, read a moment later) and its hook. Recorded through the
event sink into a real database, as the recorder does."""

import itertools

import pytest

from supervisor.store.database import Store
from supervisor.store.events import EventSink

S, F = "compaction_started", "compaction_finished"


def record(tmp_path, sightings):
    """Emit each (kind, t, source) in turn; returns the events stored and those heard."""
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/")["id"]
    heard = []
    sink = EventSink(store, sid)
    sink.subscribe("listener", lambda kind, t, detail: heard.append(kind))
    sink.start()
    for kind, t, source in sightings:
        sink.emit(kind, t, {}, source)
    sink.close()
    events = [(e["kind"], e["detail"]) for e in store.events(sid)]
    store.close()
    return events, heard


def orders(sightings):
    """Every order the sightings may arrive in: any witness before any other, each witness's
    own in the order it saw them (the screen is read in order)."""
    for order in itertools.permutations(range(len(sightings))):
        seen = [sightings[i] for i in order]
        if all([x for x in seen if x[2] == source] == [x for x in sightings if x[2] == source] for _, _, source in sightings):
            yield order


# OpenCode 1.18.33: its database says the compaction finished 30 ms before its screen says it
# started; the screen's own result line comes 2.7 s later.
OPENCODE = [(F, 9.97, "transcript"), (S, 10.0, "regex"), (F, 12.7, "regex")]
# Claude Code: its PreCompact hook, the screen's banner and result line, its transcript, its SessionStart hook.
CLAUDE = [(S, 9.8, "hook"), (S, 10.0, "regex"), (F, 31.0, "regex"), (F, 31.4, "transcript"), (F, 31.9, "hook")]


@pytest.mark.parametrize("order", list(orders(OPENCODE)), ids=str)
def test_a_compaction_seen_finished_by_the_record_before_the_screen_saw_it_start_is_one_pair(tmp_path, order):
    events, heard = record(tmp_path, [OPENCODE[i] for i in order])
    assert [kind for kind, _ in events] == [S, F]
    assert heard == [S, F]
    started, finished = (detail for _, detail in events)
    assert set(finished["sources"]) == {"transcript", "regex"}


@pytest.mark.parametrize("order", list(orders(CLAUDE)), ids=str)
def test_a_compaction_seen_by_the_screen_the_record_and_the_hook_is_one_pair_in_any_order(tmp_path, order):
    events, _ = record(tmp_path, [CLAUDE[i] for i in order])
    assert [kind for kind, _ in events] == [S, F]
    assert set(events[0][1]["sources"]) >= {"regex", "hook"}
    assert set(events[1][1]["sources"]) == {"regex", "transcript", "hook"}


def test_three_compactions_with_the_user_typing_between_are_three_pairs_whoever_saw_each(tmp_path):
    sightings = [
        *CLAUDE,  # the first, seen by all three
        (S, 80.0, "regex"),  # the second: the screen's banner twice, its result line twice
        (S, 80.5, "regex"),
        (F, 95.0, "regex"),
        (F, 96.0, "regex"),
        (F, 95.5, "transcript"),
        (F, 150.0, "transcript"),  # the third: only its record saw it
    ]
    events, heard = record(tmp_path, sightings)
    assert [kind for kind, _ in events] == [S, F, S, F, S, F]
    assert heard == [S, F, S, F, S, F]
    assert events[4][1] == {"sources": ["transcript"], "inferred_from": F}  # its start, said with its end


def test_the_same_witness_saying_it_again_later_is_a_new_compaction(tmp_path):
    """A record's compaction 40 s after the last one it reported is another one, though no
    screen saw either start."""
    events, _ = record(tmp_path, [(F, 10.0, "transcript"), (F, 50.0, "transcript")])
    assert [kind for kind, _ in events] == [S, F, S, F]


def test_a_failed_compaction_is_one_start_and_one_failure(tmp_path):
    events, _ = record(tmp_path, [(S, 5.0, "regex"), ("compaction_failed", 9.0, "regex"), ("compaction_failed", 9.5, "regex")])
    assert [kind for kind, _ in events] == [S, "compaction_failed"]


def test_a_resumed_agent_drawing_an_old_compaction_again_is_no_compaction_until_it_is_given_its_context(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/")["id"]
    sink = EventSink(store, sid, history=True)
    sink.start()
    sink.emit(F, 1.0, {}, "regex")  # Claude Code's history, drawn as it resumes
    sink.emit("injection", 4.0, {"reason": "resume"}, "typed")
    sink.emit(S, 30.0, {}, "regex")  # a compaction of this session
    sink.emit(F, 41.0, {}, "regex")
    sink.close()
    assert [e["kind"] for e in store.events(sid)] == ["injection", S, F]


def test_history_drawn_again_before_any_compaction_of_the_session_records_nothing(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/")["id"]
    failures = []
    sink = EventSink(store, sid, fail=lambda where, exc: failures.append(exc), history=True)
    sink.start()
    sink.emit(S, 0.5, {}, "regex")
    sink.emit(F, 0.6, {}, "regex")
    sink.close()
    assert store.events(sid) == [] and failures == []


def test_the_screen_seeing_a_new_compaction_begin_seconds_after_the_last_ended_is_a_new_one(tmp_path):
    """The demo agent compacts again three seconds after its last compaction ended."""
    events, heard = record(tmp_path, [(S, 1.0, "regex"), (F, 2.0, "regex"), (S, 5.0, "regex"), (F, 6.0, "regex")])
    assert heard == [S, F, S, F]
