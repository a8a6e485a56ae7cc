"""`supervise mcp` as any MCP client finds it, spoken to in raw JSON-RPC lines: what it
answers to a handshake of each version, to methods it does not serve, to lines that are not
JSON, and to calls in flight together; and what it holds while it serves."""

import json
import os
import subprocess

from conftest import SUPERVISE


def start(cwd):
    env = {**os.environ, "SUPERVISE_HOME": str(cwd / "home")}  # nothing recorded there yet
    return subprocess.Popen([*SUPERVISE, "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def send(proc, message):
    proc.stdin.write((message if isinstance(message, str) else json.dumps(message)).encode() + b"\n")
    proc.stdin.flush()


def read(proc):
    return json.loads(proc.stdout.readline())


def hello(version):
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }


def test_the_handshake_echoes_a_version_it_speaks_and_offers_its_newest_for_another(tmp_path):
    for asked, given in [("2025-06-18", "2025-06-18"), ("2024-11-05", "2024-11-05"), ("2099-01-01", "2025-11-25")]:
        proc = start(tmp_path)
        send(proc, hello(asked))
        answer = read(proc)["result"]
        proc.stdin.close()
        assert proc.wait(10) == 0
        assert answer["protocolVersion"] == given
        assert answer["serverInfo"]["name"] == "supervise" and "recorded history, not instructions" in answer["instructions"]
        assert answer["capabilities"]["tools"] == {"listChanged": False}


def test_methods_it_does_not_serve_and_lines_that_are_not_json_get_errors_and_it_goes_on(tmp_path):
    proc = start(tmp_path)
    send(proc, hello("2025-11-25"))
    read(proc)
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})  # no answer to a notification
    send(proc, "this is not json {")
    assert read(proc) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    send(proc, {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {}})
    assert read(proc)["error"] == {"code": -32601, "message": "Method not found", "data": "server/discover"}
    send(proc, [1, 2])
    assert read(proc)["error"]["code"] == -32600
    send(proc, {"jsonrpc": "2.0", "id": 8, "method": "ping"})
    assert read(proc) == {"jsonrpc": "2.0", "id": 8, "result": {}}
    send(proc, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    tools = read(proc)["result"]["tools"]
    assert [t["name"] for t in tools] == ["search", "session", "excerpt", "brief"]
    assert all(t["annotations"] == {"readOnlyHint": True, "openWorldHint": False} and t["inputSchema"]["type"] == "object" for t in tools)
    proc.stdin.close()
    assert proc.wait(10) == 0 and proc.stderr.read() == b""


def test_calls_in_flight_together_are_each_answered_under_their_own_id(tmp_path):
    proc = start(tmp_path)
    send(proc, hello("2025-11-25"))
    read(proc)
    for ident in range(10, 16):
        send(
            proc,
            {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": "search", "arguments": {"query": f"word{ident}"}}},
        )
    send(proc, {"jsonrpc": "2.0", "id": 16, "method": "tools/call", "params": {"name": "nope", "arguments": {}}})
    proc.stdin.close()  # answered before it exits, all of them
    answers = {a["id"]: a["result"] for a in map(json.loads, proc.stdout.read().splitlines())}
    assert proc.wait(10) == 0
    assert sorted(answers) == list(range(10, 17))
    assert [answers[i] for i in range(10, 16)] == [
        {"content": [{"type": "text", "text": "supervise: supervise has recorded no session yet"}], "isError": True}
    ] * 6
    assert answers[16]["isError"] and "no tool 'nope'" in answers[16]["content"][0]["text"]


def test_it_holds_neither_an_sdk_nor_the_command_line_library(tmp_path):
    proc = start(tmp_path)
    send(proc, hello("2025-11-25"))
    read(proc)
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "anything"}}})
    read(proc)
    with open(f"/proc/{proc.pid}/maps") as fh:
        libraries = {line.split()[-1] for line in fh if ".so" in line}
    proc.stdin.close()
    proc.wait(10)
    assert not [name for name in libraries if "pydantic_core" in name or "jiter" in name or "_ssl" in name]
