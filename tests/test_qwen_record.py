"""Qwen Code's own record of a session, read: a real session file (recorded against the fake
Anthropic API: a turn, a shell tool call, /compress, a turn after it; trimmed to the records
that carry the conversation), found by its session id in the folder it names after the
project, with its own compaction summary."""

import json

from fixtureset import FIXTURES
from supervisor.profiles import get
from supervisor.profiles.qwen import transcript as session
from supervisor.profiles.recordfiles import JSON_LINES

SESSION = "a20834fe-0edd-40ed-ad41-d2975323489d"
RECORD = FIXTURES / "qwen" / "0.24.4" / "record" / f"{SESSION}.jsonl"


def records():
    return JSON_LINES.read(RECORD)[0]


def test_a_qwen_session_file_gives_the_users_words_its_replies_tools_and_its_own_summary():
    rs = records()
    assert {session.session_id(r) for r in rs} == {SESSION}
    assert session.user_messages(rs) == ["hello one", "run the hello command", "after it"]
    assert session.as_lines(rs) == [
        "> hello one",
        "◆ Reply to: hello one",
        "> run the hello command",
        "◆ run_shell_command(mkdir -p build && touch build/approved.txt)",
        "◆ The command finished.",
        "> after it",
        "◆ Reply to: after it",
    ]
    [compacted] = [r for r in rs if session.compaction(r) is not None]
    detail = session.compaction(compacted)
    assert detail["trigger"] == "manual" and detail["pre_tokens"] == 8315 and detail["post_tokens"] == 5999
    assert detail["summary"].startswith("<state_snapshot>\n  <overall_goal>Summary of the conversation so far")
    assert detail["summary"].endswith("</state_snapshot>")
    assert session.summary(compacted) == detail["summary"]
    assert [session.summary(r) for r in rs].count(None) == len(rs) - 1
    assert session.timestamp(rs[0]) is not None


def test_a_session_file_is_found_by_its_id_in_the_projects_folder(tmp_path):
    env = {"HOME": str(tmp_path)}
    top = session.folder(env, "/tmp/qprobe/run2/proj")
    assert top == tmp_path / ".qwen" / "projects" / "-tmp-qprobe-run2-proj" / "chats"
    assert session.folder({**env, "QWEN_HOME": str(tmp_path / "q")}, "/x") == tmp_path / "q" / "projects" / "-x" / "chats"
    top.mkdir(parents=True)
    (top / RECORD.name).write_bytes(RECORD.read_bytes())
    assert session.locate(top, SESSION) == top / RECORD.name


def test_qwen_is_resumed_by_its_session_id_or_else_the_folders_last():
    profile = get("qwen")
    resumed = profile.resume(["qwen", "--model", "m"], {"agent_session_id": SESSION}, False)
    assert resumed.argv == ["qwen", "--resume", SESSION, "--model", "m"]
    assert profile.resume(["qwen", "-c", "--resume", "old", "-m", "m"], {}, False).argv == ["qwen", "--continue", "-m", "m"]
    assert profile.resume(["qwen", "--resume", "--yolo"], {}, True).argv == ["qwen", "--yolo"]


def test_supervises_mcp_server_is_given_for_one_run_in_a_file_of_its_own_and_trusted(tmp_path):
    """As the real 0.24.4 took it (a fake model called tool_search, then tool_call with
    mcp__supervise__search): the server started and its answer came back with no dialog."""
    from supervisor.profiles.base import McpServer

    server = McpServer("supervise", "/usr/bin/python3", ("-m", "supervisor", "mcp"), {"SUPERVISE_HOME": "/h"}, ("search",))
    profile = get("qwen")
    hooked = profile.with_mcp(["qwen", "--yolo"], tmp_path, server, {})
    path = tmp_path / "qwen-mcp.json"
    assert hooked.argv == ["qwen", f"--mcp-config={path}", "--yolo"]
    entry = json.loads(hooked.files[path])["mcpServers"]["supervise"]
    assert entry == {"command": "/usr/bin/python3", "args": ["-m", "supervisor", "mcp"], "env": {"SUPERVISE_HOME": "/h"}, "trust": True}
    assert profile.with_mcp(["qwen", "--mcp-config", "mine.json"], tmp_path, server, {}) is None
    assert profile.mcp_add(server)[:6] == ["qwen", "mcp", "add", "--scope", "user", "--trust"]
