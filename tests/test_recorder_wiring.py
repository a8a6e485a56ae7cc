"""How the recorder's parts talk (run/wiring.py): frames and events through named, guarded
subscribers; what a frame means recorded after the fan-out; the detector and the screen
changed and read under their locks while other threads hand things in."""

import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from supervisor import channel, config
from supervisor.channel import RecorderConfig
from supervisor.detection import saferegex
from supervisor.detection.detector import Detector
from supervisor.detection.patterns import Pattern, PatternSet
from supervisor.recording import emulator as emulators
from helpers import wait_for
from test_render import renderer
from supervisor.recording.textlog import TextLog
from supervisor.run.recorder import Recorder
from supervisor.store.database import Store


class Contended:
    """A lock that says (`waiters`) each time a thread finds it held and has to wait."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.waiters = threading.Semaphore(0)

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self.waiters.release()
            self._lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()


def test_a_frame_subscriber_that_raises_is_reported_each_time_and_the_others_still_hear_every_frame(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/")["id"]
    cfg = RecorderConfig(
        sid,
        str(tmp_path / "s.db"),
        str(tmp_path / "s.cast"),
        str(tmp_path / "s.log"),
        {"width": 40, "height": 10, "timestamp": 1, "command": "x"},
        agent="claude",
        contexts=False,
    )
    reports: list[str] = []
    recorder = Recorder(cfg, config.load(), report=reports.append)
    heard: list[float] = []

    def broken(t, screen, seen):
        raise RuntimeError("cannot take a frame")

    recorder.renderer.subscribe("a broken listener", broken)
    recorder.renderer.subscribe("the last listener", lambda t, screen, seen: heard.append(t))
    for n, t in enumerate((0.1, 0.2, 0.3), 1):  # a frame each (frames rendered in one batch are told as its last)
        recorder.handle([(channel.OUTPUT, t, f"line {n}\r\n".encode())])
        wait_for(lambda: len(heard) == n, 10, what=f"frame {n} heard")
    recorder.finish()
    assert heard == [0.1, 0.2, 0.3]
    assert [line for line in reports if "broken" in line] == [
        "supervise: a broken listener failed (cannot take a frame); the session goes on",
        f"supervise: a broken listener failed 3 times in this session; see {tmp_path / 'recorder.err'}",
    ]
    assert recorder.failures.counts["a broken listener"] == 3
    assert (tmp_path / "s.log").read_text().splitlines() == ["line 1", "line 2", "line 3"]


def test_the_events_a_frame_means_are_recorded_once_every_frame_subscriber_has_heard_it(tmp_path):
    said: list[tuple] = []
    log = open(tmp_path / "session.log", "w", encoding="utf-8")
    r = renderer(log, emit=lambda *e: said.append(("emitted", e[0], e[3])), fail=lambda where, exc: said.append(("FAILED", where, exc)))

    def first(t, screen, seen):
        said.append(("first heard", t))
        return [("limit_cleared", {"why": "working again"})]

    r.subscribe("first", first)
    r.subscribe("second", lambda t, screen, seen: said.append(("second heard", t)))
    r.output(0.1, "working\r\n")
    r.finish()
    assert said == [("first heard", 0.1), ("second heard", 0.1), ("emitted", "limit_cleared", "screen")]


def _pattern(event: str, regex: saferegex.Guarded) -> Pattern:
    return Pattern("test", event, event, regex, "", "spec")


def _set(*patterns: Pattern) -> PatternSet:
    return PatternSet("test", "test", [], list(patterns), Path("test.toml"))


class Paused(saferegex.Guarded):
    """A pattern whose first search waits until it is told to go on: a frame mid-detection."""

    def __init__(self, pattern: str):
        super().__init__(pattern, name="paused")
        self.inside, self.go = threading.Event(), threading.Event()

    def search(self, text: str, pos: int = 0):
        if not self.inside.is_set():
            self.inside.set()
            assert self.go.wait(10)
        return super().search(text, pos)


def test_a_context_and_new_patterns_handed_in_mid_frame_wait_for_the_frame_to_be_detected():
    paused = Paused(r"Conversation compacted")
    detector = Detector(_set(_pattern("compaction_finished", paused)))
    detector._lock = lock = Contended()
    given_before = detector.given
    found: list = []
    line = "✻ Conversation compacted"
    render = threading.Thread(target=lambda: found.extend(detector.feed(1.0, [(0, line)], [line])))
    render.start()
    assert paused.inside.wait(10)  # the render thread is matching, under the detector's lock
    newer = _set(_pattern("compaction_started", saferegex.compile(r"Compacting conversation")))
    others = [
        threading.Thread(target=detector.add_given, args=("the session so far: ...",)),
        threading.Thread(target=detector.set_patterns, args=(newer,)),
    ]
    for thread in others:
        thread.start()
    assert lock.waiters.acquire(timeout=10) and lock.waiters.acquire(timeout=10)  # both wait for the lock
    assert detector.given is given_before and detector.patterns is not newer
    paused.go.set()
    for thread in [render, *others]:
        thread.join(10)
    assert [d.kind for d in found] == ["compaction_finished"]  # the frame, detected whole with the old patterns
    assert detector.patterns is newer and detector.given is not given_before
    assert [d.kind for d in detector.feed(2.0, [(1, "✻ Compacting conversation…")], ["", "✻ Compacting conversation…"])] == [
        "compaction_started"
    ]


def test_the_screen_read_from_another_thread_waits_for_the_slice_being_rendered():
    log = TextLog(emulators.make("avt", 40, 5))
    log.lock = lock = Contended()
    feeding, go = threading.Event(), threading.Event()
    real_feed = log.emu.feed

    def slow_feed(text):
        changed = real_feed(text)
        feeding.set()
        assert go.wait(10)
        return changed

    log.emu.feed = slow_feed
    render = threading.Thread(target=log.feed, args=(0.1, "hello\r\nworld"))
    render.start()
    assert feeding.wait(10)  # the emulator has the text; the rows are not updated yet
    read: list[list[str]] = []
    reader = threading.Thread(target=lambda: read.append(log.row_texts()))
    reader.start()
    assert lock.waiters.acquire(timeout=10)  # the reader waits for the text log's lock
    assert not read
    go.set()
    render.join(10)
    reader.join(10)
    assert read[0][:2] == ["hello", "world"]


def _claude_session(tmp_path):
    """A recorder for a Claude Code session that follows a transcript folder of the test's."""
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="claude", argv=["claude"], cwd=str(tmp_path))["id"]
    records = tmp_path / "projects"
    records.mkdir()
    now = time.time()
    cfg = RecorderConfig(
        sid,
        str(tmp_path / "s.db"),
        str(tmp_path / "s.cast"),
        str(tmp_path / "s.log"),
        {"width": 80, "height": 12, "timestamp": int(now), "command": "claude"},
        agent="claude",
        contexts=False,
        start_monotonic=time.monotonic(),
        started_wall=now,
        transcript_dir=str(records),
        cwd=str(tmp_path),
    )
    return store, sid, records / "a1b2.jsonl", Recorder(cfg, config.load(), report=lambda line: None)


def _turn(path: Path, text: str, when: float, n: int) -> None:
    """A user record as Claude Code appends it, dated `when`."""
    stamp = datetime.fromtimestamp(when, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    record = {"type": "user", "sessionId": f"agent-{n}", "timestamp": stamp, "message": {"role": "user", "content": text}}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def _noted(path: Path) -> None:
    """A record of Claude Code's that is no turn (it names the session)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "system", "sessionId": "agent-0", "timestamp": "2026-11-29T00:00:00Z"}) + "\n")


IDLE_SCREEN = "\x1b[2J\x1b[H❯ \r\n  ? for shortcuts\r\n"
LIMIT_SCREEN = "\x1b[2J\x1b[H● Usage limit reached · set to continue automatically at 4:20pm\r\n❯ \r\n  ? for shortcuts\r\n"


def test_a_turn_of_the_users_dated_after_a_limit_clears_it_though_no_frame_showed_the_agent_busy(tmp_path):
    """A short turn on a loaded machine may render no busy frame: the agent's record, which
    dates the user's turn after the limit, says it works again. The turn the limit stopped,
    dated before it, does not."""
    store, sid, record, recorder = _claude_session(tmp_path)
    limits = lambda: [e["kind"] for e in store.events(sid) if e["kind"].startswith("limit_")]  # noqa: E731
    try:
        # the follower takes what a file holds as it starts as earlier sessions': a record is
        # appended until one is read, so the next is certainly followed
        wait_for(lambda: _noted(record) or store.get_session(sid)["agent_session_id"] == "agent-0", 10, what="the record followed")
        start = time.time()
        _turn(record, "turn 2: a long one", start, 1)  # the turn the limit stopped: written before it was seen
        recorder.handle([(channel.OUTPUT, recorder._now(), LIMIT_SCREEN.encode())])
        wait_for(lambda: store.get_session(sid)["state"] == "limited", 10, what="the limit shown")
        wait_for(lambda: store.get_session(sid)["agent_session_id"] == "agent-1", 10, what="the first turn read")
        recorder.handle([(channel.OUTPUT, recorder._now(), IDLE_SCREEN.encode())])
        _turn(record, "please go on", time.time(), 2)  # the user's own words, after the limit
        wait_for(lambda: store.get_session(sid)["agent_session_id"] == "agent-2", 10, what="the second turn read")
        wait_for(lambda: limits() == ["limit_reached", "limit_cleared"], 10, what="the limit cleared")
        recorder.handle([(channel.OUTPUT, recorder._now(), (IDLE_SCREEN + "done\r\n").encode())])
        wait_for(lambda: store.get_session(sid)["state"] == "waiting", 10, what="the agent at its prompt")
    finally:
        recorder.finish()
    assert limits() == ["limit_reached", "limit_cleared"]
