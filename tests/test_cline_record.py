"""Cline CLI's own record of a session, read: its session folders (real ones, recorded by
scripts/agents/cline.py against the fake model), a folder per session whose files it rewrites
whole (the manifest, the whole conversation, and from a compaction on what the model is sent
instead, the summary first), and one written here as it writes them, followed by the
recorder's follower while another project's session is written beside it."""

import json

from fixtureset import FIXTURES
from helpers import wait_for
from kits import cline as kit
from supervisor.detection import transcript
from supervisor.profiles import get
from supervisor.profiles.cline import transcript as session

RECORDS = FIXTURES / "cline" / "3.0.65" / "record"


def real(name):
    """(the sessions folder, the session id, every record of its files)"""
    top = RECORDS / name
    [folder] = [d for d in top.iterdir() if d.is_dir()]
    files = sorted({f for f in map(session.SOURCE.followed, folder.iterdir()) if f is not None})
    return top, folder.name, [r for f in files for r in session.SOURCE.read(f)[0]]


def test_its_session_gives_the_users_words_its_replies_its_compaction_and_its_summary():
    top, sid, records = real("compact-manual")
    assert {session.session_id(r) for r in records} == {sid}
    assert session.user_messages(records) == ["turn 1 hello", "turn 2 what next", "turn 3 after compact"]
    lines = session.as_lines(records)
    assert lines == [
        "> turn 1 hello",
        "● Reply to: turn 1 hello",
        "> turn 2 what next",
        "● Reply to: turn 2 what next",
        "> turn 3 after compact",
        "● Reply to: turn 3 after compact",
    ]
    [compacted] = [r for r in records if session.compaction(r) is not None]
    detail = session.compaction(compacted)
    assert detail["trigger"] is None and detail["pre_tokens"] > 0  # /compact, with the model's summary: not told apart
    assert session.summary(compacted) == kit.SUMMARY
    assert session.user_text(compacted) == ""
    assert [session.summary(r) for r in records].count(None) == len(records) - 1
    assert all(session.timestamp(r) for r in records)
    path = session.locate(top, sid)
    assert path == top / sid / f"{sid}.messages.json"
    read, end = session.SOURCE.read(path)
    assert session.SOURCE.read(path, end) == ([], end)  # nothing new past the offset


def test_the_context_supervise_typed_is_a_users_message_in_it():
    _, _, records = real("chained")
    said = session.user_messages(records)
    assert said[0] == "turn 1: write src/totals.py that adds up the amount column of data.csv"
    assert [s.split(" (round")[1][:3] for s in said if s.startswith("[supervise]")] == [" 1)", " 2)", " 3)"]
    assert said[-1] == "turn 4: make the tests in tests/test_csv.py cover empty reports"
    # the compaction file holds the last of its three compactions
    assert len([r for r in records if session.compaction(r)]) == 1


def test_its_sessions_folder_is_where_cline_resolves_it(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert session.folder(env, "/p") == tmp_path / ".cline" / "data" / "sessions"
    assert session.folder({**env, "CLINE_DIR": str(tmp_path / "c")}, "/p") == tmp_path / "c" / "data" / "sessions"
    assert session.folder({**env, "CLINE_DATA_DIR": str(tmp_path / "d")}, "/p") == tmp_path / "d" / "sessions"
    assert session.folder({**env, "CLINE_SESSION_DATA_DIR": str(tmp_path / "s")}, "/p") == tmp_path / "s"
    sandboxed = {**env, "CLINE_SANDBOX": "1", "CLINE_SANDBOX_DATA_DIR": str(tmp_path / "x"), "CLINE_SESSION_DATA_DIR": "/no"}
    assert session.folder(sandboxed, "/p") == tmp_path / "x" / "sessions"
    assert session.locate(tmp_path, "1795678644044_zzzzz") is None


def test_cline_is_resumed_by_its_session_id_and_its_session_is_claimed_by_its_folder():
    profile = get("cline")
    assert profile.transcript is session
    _, sid, records = real("compact-manual")
    assert profile.resume(["cline"], {"agent_session_id": sid}, False).argv == ["cline", "--id", sid]
    first = records[0]
    assert session.claims(first, RECORDS, first["cwd"], None) is True
    assert session.claims(first, RECORDS, "/elsewhere", None) is False
    assert session.claims(first, RECORDS, "/elsewhere", sid) is True  # the session it carries on


# ---- a session folder written as Cline writes it ---------------------------------------------


class Session:
    """A session's folder: its manifest, its conversation, its compaction, each rewritten whole."""

    def __init__(self, top, sid, cwd):
        self.sid, self.cwd, self.folder = sid, cwd, top / sid
        self.folder.mkdir(parents=True)
        self.messages = []
        self.n = 0

    def manifest(self):
        (self.folder / f"{self.sid}.json").write_text(json.dumps({"session_id": self.sid, "cwd": str(self.cwd), "status": "running"}))

    def write(self):
        doc = {"version": 1, "sessionId": self.sid, "messages": self.messages}
        (self.folder / f"{self.sid}.messages.json").write_text(json.dumps(doc, indent=2))

    def message(self, role, *blocks):
        self.n += 1
        self.messages.append({"id": f"m{self.n}", "role": role, "content": list(blocks), "ts": 1795678644044 + self.n})

    def turn(self, said, answer):
        self.message("user", {"type": "text", "text": f'<user_input mode="act">{said}</user_input>'})
        self.message("assistant", {"type": "text", "text": answer})
        self.write()

    def compact(self, summary, at):
        first = {"role": "user", "content": [{"type": "text", "text": "Context summary:\n\n" + summary}]}
        first["metadata"] = {"kind": "compaction_summary", "summary": summary, "tokensBefore": 500, "generatedAt": at}
        doc = {"version": 1, "updated_at": str(at), "conversation_id": self.sid, "messages": [first, *self.messages[-1:]]}
        (self.folder / f"{self.sid}.compaction.json").write_text(json.dumps(doc))


def test_a_tool_call_and_its_error_are_one_line_each(tmp_path):
    s = Session(tmp_path, "1795678644044_aaaaa", tmp_path)
    s.manifest()
    s.message("user", {"type": "text", "text": '<user_input mode="act">run it</user_input>'})
    s.message("assistant", {"type": "tool_use", "id": "t1", "name": "run_commands", "input": {"commands": ["make", "make test"]}})
    result = {"type": "tool_result", "tool_use_id": "t1", "name": "run_commands", "is_error": True}
    s.message("user", {**result, "content": [{"query": "make", "result": "", "success": False, "error": "make: *** No rule"}]})
    s.message("assistant", {"type": "text", "text": "It failed."})
    s.write()
    records, _ = session.SOURCE.read(s.folder / f"{s.sid}.messages.json")
    assert session.user_messages(records) == ["run it"]  # a tool's result is no user's words
    assert session.as_lines(records) == ["> run it", "● run_commands(make; make test)", "  ⎿ Error: make: *** No rule", "● It failed."]


def test_the_follower_reads_this_runs_session_only_as_its_files_are_rewritten(tmp_path):
    project, elsewhere, top = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "sessions"
    project.mkdir()
    elsewhere.mkdir()
    got = []
    follower = transcript.TranscriptFollower(
        top,  # not there yet: Cline makes it with its first session
        lambda record, path: got.append(record),
        poll=0.05,
        source=session.SOURCE,
        claims=lambda record, path: session.claims(record, path, str(project), None),
    )
    follower.start()
    try:
        ours = Session(top, "1795678644044_ours0", project)
        ours.turn("hello", "hi")  # its manifest not written yet: read at its next write
        theirs = Session(top, "1795678644044_other", elsewhere)
        theirs.manifest()
        theirs.turn("another project's words", "theirs")
        ours.manifest()
        ours.turn("and again", "hi again")
        wait_for(lambda: session.user_messages(got) == ["hello", "and again"])
        ours.compact("the first summary", 1795678650000)
        wait_for(lambda: [session.summary(r) for r in got if session.summary(r)] == ["the first summary"])
        theirs.turn("more of theirs", "theirs again")
        ours.turn("after it", "ok")
        ours.compact("the second summary", 1795678660000)  # the same file, rewritten
        wait_for(lambda: len([r for r in got if session.summary(r)]) == 2)
    finally:
        follower.stop()
    assert {session.session_id(r) for r in got} == {ours.sid}
    assert session.user_messages(got) == ["hello", "and again", "after it"]
    assert [session.summary(r) for r in got if session.summary(r)] == ["the first summary", "the second summary"]
