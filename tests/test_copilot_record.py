"""GitHub Copilot CLI's own record of a session, read: real session files (recorded against the
fake Anthropic API), one folder per session under ~/.copilot/session-state, found by the session
id, with its own compaction summary (/compact, and automatic)."""

from fixtureset import FIXTURES
from supervisor.profiles import McpServer, get
from supervisor.profiles.copilot import transcript as session
from supervisor.profiles.recordfiles import JSON_LINES

RECORDS = FIXTURES / "copilot" / "1.0.102" / "record"
MANUAL = "f5f1de83-a7db-483b-ae1c-a3e099222ce7"  # compact-manual: two turns, /compact, a third
TOOL = "f2fb6428-4cbc-4253-b098-f578d78088c3"  # permission: its shell tool, approved
AUTO = "ff8867e2-3084-41f8-94d0-f9abc97b30ef"  # compact-auto: compacted past its threshold


def records(scenario: str, sid: str) -> list[dict]:
    return JSON_LINES.read(RECORDS / scenario / sid / "events.jsonl")[0]


def test_a_session_file_gives_the_users_words_its_replies_and_its_own_summary():
    rs = records("compact-manual", MANUAL)
    assert [session.session_id(r) for r in rs if session.session_id(r)] == [MANUAL]
    assert session.user_messages(rs) == ["turn 1 hello", "turn 2 what next", "turn 3 after compact"]
    assert session.as_lines(rs)[:2] == ["❯ turn 1 hello", "● Reply to: turn 1 hello"]
    [compacted] = [r for r in rs if session.compaction(r) is not None]
    detail = session.compaction(compacted)
    assert detail["trigger"] == "manual" and detail["pre_tokens"] > 0
    assert detail["summary"].startswith("<overview>\nSummary of the conversation so far")
    assert session.summary(compacted) == detail["summary"]
    assert session.timestamp(rs[0]) is not None
    [auto] = [session.compaction(r) for r in records("compact-auto", AUTO) if session.compaction(r)]
    assert auto["trigger"] == "auto"


def test_a_tool_call_is_one_line():
    lines = session.as_lines(records("permission", TOOL))
    assert lines[2:5] == ["❯ run make the build folder", "● bash(mkdir -p build && touch build/approved.txt)", "● The command finished."]


def test_a_session_file_is_found_by_its_id_and_claimed_by_its_folder(tmp_path):
    top = session.folder({"HOME": str(tmp_path)}, "/x")
    assert top == tmp_path / ".copilot" / "session-state"
    assert session.folder({"HOME": str(tmp_path), "COPILOT_HOME": str(tmp_path / "c")}, "/x") == tmp_path / "c" / "session-state"
    (top / MANUAL).mkdir(parents=True)
    path = top / MANUAL / "events.jsonl"
    path.write_bytes((RECORDS / "compact-manual" / MANUAL / "events.jsonl").read_bytes())
    assert session.locate(top, MANUAL) == path
    assert session.locate(top, TOOL) is None
    start = records("compact-manual", MANUAL)[0]
    cwd = start["data"]["context"]["cwd"]
    assert session.claims(start, path, cwd, None) is True
    assert session.claims(start, path, "/elsewhere", None) is False
    assert session.claims(records("compact-manual", MANUAL)[2], path, "/elsewhere", None) is None
    assert session.claims(start, path, "/elsewhere", MANUAL) is True


def test_it_is_resumed_by_its_session_id_or_else_its_last_and_given_mcp_for_one_run(tmp_path):
    profile = get("copilot")
    resumed = profile.resume(["copilot", "--resume", "old", "--model", "m"], {"agent_session_id": MANUAL}, False)
    assert resumed.argv == ["copilot", f"--resume={MANUAL}", "--model", "m"]
    assert profile.resume(["copilot", "--continue"], {}, False).argv == ["copilot", "--continue"]
    assert profile.resume(["copilot", "-r", "old"], {"agent_session_id": MANUAL}, True).argv == ["copilot"]
    server = McpServer("supervise", "/bin/supervise", ("mcp", "serve"), {"SUPERVISE_HOME": "/h"}, ("search",))
    hooked = profile.with_mcp(["copilot", "--model", "m"], tmp_path, server, {})
    path = tmp_path / "copilot-mcp.json"
    assert hooked.argv == ["copilot", f"--additional-mcp-config=@{path}", "--allow-tool=supervise", "--model", "m"]
    assert '"command": "/bin/supervise"' in hooked.files[path]
