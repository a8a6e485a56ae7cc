"""Following Claude Code's transcript: real files, real watchdog."""

import json
import time

from helpers import wait_for
from supervisor.detection import transcript
from supervisor.profiles.claude import transcript as claude_transcript


def test_project_folder_follows_claude_codes_naming(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert claude_transcript.folder(env, "/tmp/explore/my_proj.v2") == tmp_path / ".claude" / "projects" / "-tmp-explore-my-proj-v2"
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "cfg")
    assert claude_transcript.folder(env, "/a/b") == tmp_path / "cfg" / "projects" / "-a-b"


def test_follows_new_records_by_offset_and_holds_back_partial_lines(tmp_path):
    folder = tmp_path / "projects" / "-work"
    folder.mkdir(parents=True)
    old = folder / "old-session.jsonl"
    old.write_text(json.dumps({"type": "user", "sessionId": "old"}) + "\n")
    records = []
    follower = transcript.TranscriptFollower(folder, lambda record, path: records.append((record, path.name)))
    follower.start()
    try:
        new = folder / "new-session.jsonl"
        boundary = {
            "type": "system",
            "subtype": "compact_boundary",
            "sessionId": "new",
            "compactMetadata": {"trigger": "manual", "preTokens": 1234},
            "timestamp": "2026-11-22T12:00:00.000Z",
        }
        line = json.dumps(boundary) + "\n"
        with open(new, "w") as fh:
            fh.write(json.dumps({"type": "user", "sessionId": "new"}) + "\n" + line[:30])
            fh.flush()
            time.sleep(0.3)
            assert [r["type"] for r, _ in records] == ["user"]  # the torn line waits
            fh.write(line[30:])
        wait_for(lambda: len(records) == 2)
        with open(old, "a") as fh:  # what an earlier session appends now counts, what it had does not
            fh.write(json.dumps({"type": "assistant", "sessionId": "old"}) + "\n")
        wait_for(lambda: len(records) == 3)
    finally:
        follower.stop()
    assert [(r["type"], name) for r, name in records] == [
        ("user", "new-session.jsonl"),
        ("system", "new-session.jsonl"),
        ("assistant", "old-session.jsonl"),
    ]
    assert claude_transcript.compaction(records[1][0]) == {"trigger": "manual", "pre_tokens": 1234}
    assert claude_transcript.compaction(records[0][0]) is None


def test_waits_for_the_folder_claude_code_creates_with_the_first_prompt(tmp_path):
    folder = tmp_path / "projects" / "-later"
    records = []
    follower = transcript.TranscriptFollower(folder, lambda record, path: records.append(record), poll=0.05)
    follower.start()
    try:
        folder.mkdir(parents=True)
        (folder / "s.jsonl").write_text(json.dumps({"type": "user", "sessionId": "s"}) + "\n")
        wait_for(lambda: records)
    finally:
        follower.stop()
    assert records[0]["sessionId"] == "s"


def test_opening_and_closing_the_transcript_is_no_reason_to_read_it(tmp_path):
    """inotify reports opens and closes too; reading on those fed the follower its own
    events and burnt a core for as long as Claude Code sat idle."""
    folder = tmp_path / "projects" / "-work"
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    records = []
    follower = transcript.TranscriptFollower(folder, lambda record, p: records.append(record))
    follower.start()
    try:
        with open(path, "a") as fh:
            fh.write(json.dumps({"type": "user", "sessionId": "s"}) + "\n")
        wait_for(lambda: records)
        time.sleep(0.5)
        settled = follower.reads
        time.sleep(1.0)
        assert follower.reads == settled  # no read feeds the next one
        for _ in range(20):  # someone else (Claude Code itself, a backup tool) opens it to read
            with open(path, "rb") as fh:
                fh.read()
        time.sleep(0.5)
        assert follower.reads == settled
        with open(path, "a") as fh:
            fh.write(json.dumps({"type": "assistant", "sessionId": "s"}) + "\n")
        wait_for(lambda: len(records) == 2)
    finally:
        follower.stop()


def test_records_read_by_two_threads_at_once_arrive_in_the_order_they_were_written(tmp_path):
    """The watcher's thread and a read again both read the file: the second waits for the
    first to hand over all it read, so its later records never come first."""
    import threading

    from test_recorder_wiring import Contended

    folder = tmp_path / "records"
    folder.mkdir()
    log = folder / "s.jsonl"
    log.write_text("")
    got, holding, release = [], threading.Event(), threading.Event()

    def on_record(record, path):
        if record["n"] == 1:  # the first thread is handing over its first record ...
            holding.set()
            release.wait(10)
        got.append(record["n"])

    follower = transcript.TranscriptFollower(folder, on_record)
    follower._lock = Contended()
    follower._offsets[log] = 0
    log.write_text("".join(json.dumps({"n": n}) + "\n" for n in (1, 2)))
    first = threading.Thread(target=follower.read, args=(log,))
    first.start()
    holding.wait(10)
    with open(log, "a") as fh:  # ... when more is written, and the second thread reads
        fh.write("".join(json.dumps({"n": n}) + "\n" for n in (3, 4)))
    second = threading.Thread(target=follower.read, args=(log,))
    second.start()
    # it waits for the lock (or, unordered, hands its records over first)
    wait_for(lambda: follower._lock.waiters.acquire(blocking=False) or 3 in got, 10, what="the second read reached the lock")
    release.set()
    first.join(10)
    second.join(10)
    assert got == [1, 2, 3, 4]
