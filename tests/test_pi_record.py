"""pi's own record of a session, read: a real session file (recorded against the fake
Anthropic API: a turn, a bash tool call, /compact, a turn after it), found by its session id
in the folder pi names after the project, with pi's own compaction summary."""

from fixtureset import FIXTURES
from supervisor.profiles import get
from supervisor.profiles.pi import transcript as session
from supervisor.profiles.recordfiles import JSON_LINES

RECORD = next((FIXTURES / "pi" / "0.73.1" / "record").glob("*.jsonl"))
SESSION = "01a21600-caba-76a7-96ee-2c6305d0edc3"


def records():
    return JSON_LINES.read(RECORD)[0]


def test_a_pi_session_file_gives_the_users_words_its_replies_tools_and_its_own_summary():
    rs = records()
    assert [session.session_id(r) for r in rs if session.session_id(r)] == [SESSION]
    assert session.user_messages(rs) == ["turn 1 hello", "bash please list files", "turn 3 after compact"]
    lines = session.as_lines(rs)
    assert lines == [
        "> turn 1 hello",
        "● Reply to: turn 1 hello",
        "> bash please list files",
        "● bash(echo hello from bash && ls -a)",
        "● The command finished.",
        "> turn 3 after compact",
        "● Reply to: turn 3 after compact",
    ]
    [compacted] = [r for r in rs if session.compaction(r) is not None]
    detail = session.compaction(compacted)
    assert detail["pre_tokens"] == 619 and detail["trigger"] is None
    assert detail["summary"].startswith("## Goal\nSummary of the conversation so far")
    assert session.summary(compacted) == detail["summary"]
    assert [session.summary(r) for r in rs].count(None) == len(rs) - 1
    assert session.timestamp(rs[0]) is not None


def test_a_session_file_is_found_by_its_id_in_the_projects_folder(tmp_path):
    env = {"HOME": str(tmp_path)}
    top = session.folder(env, "/tmp/pi-record/proj")
    assert top == tmp_path / ".pi" / "agent" / "sessions" / "--tmp-pi-record-proj--"
    assert session.folder({**env, "PI_CODING_AGENT_DIR": str(tmp_path / "a")}, "/x") == tmp_path / "a" / "sessions" / "--x--"
    assert session.folder({**env, "PI_CODING_AGENT_SESSION_DIR": str(tmp_path / "s")}, "/x") == tmp_path / "s"
    top.mkdir(parents=True)
    (top / RECORD.name).write_bytes(RECORD.read_bytes())
    assert session.locate(top, SESSION) == top / RECORD.name
    assert session.locate(top, "01a21600-0000-0000-0000-000000000000") is None
    header = records()[0]
    assert session.claims(header, top / "x.jsonl", "/tmp/pi-record/proj", None) is True
    assert session.claims(header, top / "x.jsonl", "/elsewhere", None) is False
    assert session.claims(records()[3], top / "x.jsonl", "/elsewhere", None) is None


def test_pi_is_resumed_by_its_session_id_or_else_the_folders_last():
    profile = get("pi")
    assert profile.resume(["pi", "--model", "m"], {"agent_session_id": SESSION}, False).argv == ["pi", "--session", SESSION, "--model", "m"]
    assert profile.resume(["pi", "-c", "--session", "old", "--model", "m"], {}, False).argv == ["pi", "--continue", "--model", "m"]
    assert profile.resume(["pi", "--continue"], {"agent_session_id": SESSION}, True).argv == ["pi"]
    assert profile.mcp_note and profile.with_mcp(["pi"], None, None, {}) is None  # type: ignore[arg-type]
