"""OpenCode's (and Kilo Code CLI's) own record of a session, read: the database every session
of the agent on the machine shares, its real files (recorded by scripts/agents/opencode.py and
kilo.py) and one written here row by row as it writes them, followed by the recorder's
follower while another session writes beside it."""

import json
import sqlite3

import pytest

from fixtureset import FIXTURES
from helpers import wait_for
from supervisor.detection import transcript
from supervisor.profiles.kilo import transcript as kilo
from supervisor.profiles.opencode import transcript as opencode

RECORDS = {
    "opencode": FIXTURES / "opencode" / "1.18.33" / "record",
    "kilo": FIXTURES / "kilo" / "7.7.7" / "record",
}
READERS = {"opencode": opencode, "kilo": kilo}


@pytest.mark.parametrize("agent", sorted(RECORDS))
def test_its_database_gives_the_users_words_its_replies_its_compaction_and_its_summary(agent):
    reader = READERS[agent]
    path = reader.locate(RECORDS[agent] / "compact-manual", "any")
    assert path is not None and path.name == f"{agent}.db"
    records, end = reader.SOURCE.read(path)
    assert end > records[-1]["time"]
    assert len({reader.session_id(r) for r in records}) == 1
    said = reader.user_messages(records)
    assert said[0] == "turn 1 hello" and said[-1].endswith("after compact"), said
    [compacted] = [r for r in records if reader.compaction(r) is not None]
    assert reader.compaction(compacted) == {"trigger": "manual"}
    assert reader.user_text(compacted) == ""  # its request to compact is not the user's
    [summary] = [reader.summary(r) for r in records if reader.summary(r)]
    assert summary.startswith("## "), summary  # its fake model's answer to its compaction request
    lines = reader.as_lines(records)
    assert "> turn 1 hello" in lines and "● Reply to: turn 1 hello" in lines
    assert summary.splitlines()[0] not in "\n".join(lines)  # its summary is its own, kept apart
    again, end_again = reader.SOURCE.read(path, end)
    assert (again, end_again) == ([], end)  # nothing new past the offset


def test_a_resumed_sessions_database_is_found_where_opencode_keeps_it(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert opencode.folder(env, "/p") == tmp_path / ".local" / "share" / "opencode"
    assert kilo.folder({**env, "XDG_DATA_HOME": str(tmp_path / "d")}, "/p") == tmp_path / "d" / "kilo"
    assert opencode.locate(tmp_path, "ses_x") is None  # none written yet


# ---- a database written as OpenCode writes it ----------------------------------------------


class Db:
    """OpenCode's three tables (the columns read), written a row at a time in WAL mode."""

    def __init__(self, path):
        self.path = path
        self.con = sqlite3.connect(path, isolation_level=None)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.executescript(
            "CREATE TABLE session (id text PRIMARY KEY, directory text NOT NULL, time_created integer NOT NULL);"
            "CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, "
            "time_updated integer NOT NULL, data text NOT NULL);"
            "CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, data text NOT NULL);"
        )
        self.n = 0

    def session(self, sid, directory):
        self.con.execute("INSERT INTO session VALUES (?, ?, ?)", (sid, str(directory), self._now()))

    def _now(self):
        self.n += 1
        return 1_795_000_000_000 + self.n

    def message(self, sid, role, **data):
        mid = f"msg_{self.n:04d}"
        t = self._now()
        self.con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, json.dumps({"role": role, **data})))
        return mid

    def part(self, mid, sid, **data):
        self.con.execute("INSERT INTO part VALUES (?, ?, ?, ?)", (f"prt_{self._now():016d}", mid, sid, json.dumps(data)))

    def complete(self, mid):
        self.con.execute(
            "UPDATE message SET data = json_set(data, '$.time.completed', ?), time_updated = ? WHERE id = ?", (self._now(), self.n, mid)
        )

    def said(self, sid, text):
        mid = self.message(sid, "user")
        self.part(mid, sid, type="text", text=text)
        return mid

    def reply(self, sid, text):
        mid = self.message(sid, "assistant", time={"created": 1})
        self.part(mid, sid, type="text", text=text)
        self.complete(mid)


def test_a_message_still_being_written_waits_and_nothing_is_read_twice(tmp_path):
    db = Db(tmp_path / "opencode.db")
    db.session("ses_a", tmp_path)
    db.said("ses_a", "first")
    streaming = db.message("ses_a", "assistant", time={"created": 1})
    db.part(streaming, "ses_a", type="text", text="half a rep")
    records, offset = opencode.SOURCE.read(db.path)
    assert opencode.user_messages(records) == ["first"]
    assert opencode.as_lines(records) == ["> first"]  # the reply it is still writing waits
    db.complete(streaming)
    asked = db.message("ses_a", "user")  # its words not written yet
    records, offset = opencode.SOURCE.read(db.path, offset)
    assert opencode.as_lines(records) == ["● half a rep"]
    db.part(asked, "ses_a", type="text", text="second")
    records, offset = opencode.SOURCE.read(db.path, offset)
    assert opencode.user_messages(records) == ["second"]
    assert opencode.SOURCE.read(db.path, offset) == ([], offset)


def test_a_message_left_unfinished_holds_nothing_up_once_a_later_one_is_written(tmp_path):
    """Stopped mid-reply (the user pressed Esc, it crashed): the next message means it is done."""
    db = Db(tmp_path / "opencode.db")
    db.session("ses_a", tmp_path)
    db.said("ses_a", "first")
    db.message("ses_a", "assistant", time={"created": 1})
    db.said("ses_a", "then this")
    records, _ = opencode.SOURCE.read(db.path)
    assert opencode.user_messages(records) == ["first", "then this"]


def test_the_follower_reads_this_runs_session_only_while_others_write_beside_it(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    db = Db(data / "opencode.db")
    db.session("ses_old", project)
    db.said("ses_old", "from an earlier run")
    db.reply("ses_old", "an earlier reply")
    got = []
    follower = transcript.TranscriptFollower(
        data,
        lambda record, path: got.append(record),
        source=opencode.SOURCE,
        claims=lambda record, path: opencode.claims(record, path, str(project), None),
    )
    follower.start()
    try:
        db.session("ses_other", elsewhere)
        db.said("ses_other", "another project's words")
        db.session("ses_new", project)
        db.said("ses_new", "hello")
        db.reply("ses_new", "hi")
        db.said("ses_other", "more of theirs")
        db.said("ses_new", "and again")
        wait_for(lambda: opencode.user_messages(got) == ["hello", "and again"])
        reads = follower.reads
        db.reply("ses_new", "done")
        wait_for(lambda: follower.reads > reads and "● done" in opencode.as_lines(got))
    finally:
        follower.stop()
    assert {opencode.session_id(r) for r in got} == {"ses_new"}
    assert opencode.as_lines(got) == ["> hello", "● hi", "> and again", "● done"]


def test_a_database_it_cannot_read_gives_nothing_and_keeps_its_offset(tmp_path):
    broken = tmp_path / "opencode.db"
    broken.write_bytes(b"not a database" * 100)
    assert opencode.SOURCE.read(broken, 42) == ([], 42)
    assert opencode.SOURCE.end(broken) == 0
    locked_out = tmp_path / "missing.db"
    assert opencode.SOURCE.read(locked_out, 7) == ([], 7)
    assert not locked_out.exists()
