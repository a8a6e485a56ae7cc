"""`supervise agent` end to end: the real supervise under a real PTY, the agent program it
spawns, a real Docker sandbox, and the fake Anthropic API scripted step by step."""

import json
import os

import pytest

import pexpect

from conftest import SANDBOX_IMAGE as IMAGE, SUPERVISE, run_cli
from fakeapi import FakeAnthropic
from helpers import latest, session
from supervisor.errors import SuperviseError
from supervisor.store.database import Store


def agent_requests(api):
    """The agent's model calls (not supervise's own summaries of the session)."""
    return [r for r in api.messages() if the_agents(r)]


def the_agents(req) -> bool:
    """A model call of the agent's (it offers its tools), not one of supervise's summaries,
    which the last session's recorder may still make as the next one starts."""
    return any(t.get("name") == "execute_command" for t in req.body.get("tools", []))


def tool(name, **args):
    return {"name": name, "input": args}


def supervise(args, env, timeout=60):
    """(exit status, everything printed) of `supervise ARGS` under a real PTY."""
    c = pexpect.spawn(SUPERVISE[0], args, env={**env, "TERM": "xterm-256color"}, dimensions=(30, 100), encoding="utf-8", timeout=timeout)
    out = c.read()
    c.close()
    return c.exitstatus, out


def run_agent(ws, api, *args, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return supervise(["agent", "--image", IMAGE, "--network", "none", "--workspace", str(ws), *args], env, timeout)


def test_a_task_writes_runs_and_reads_files_that_land_in_the_workspace(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add(
            {
                "text": "I will write the script and run it.",
                "tool_uses": [
                    tool("write_file", path="hello.py", content="print('hello from the sandbox')\n"),
                    tool("execute_command", command="python3 hello.py 2>/dev/null || sed -n 1p hello.py; echo built > out.txt; ls"),
                ],
            }
        )
        api.add({"tool_use": tool("read_file", path="out.txt")})
        api.add({"text": "Done: hello.py written and run; out.txt says built."})
        code, out = run_agent(ws, api, "-p", "write hello.py and run it")
        requests = agent_requests(api)
    assert code == 0, out
    assert (ws / "hello.py").read_text() == "print('hello from the sandbox')\n"
    assert (ws / "out.txt").read_text() == "built\n"
    assert all(p.stat().st_uid == os.getuid() for p in ws.iterdir())
    assert "● execute_command(" in out and "Done: hello.py written" in out
    assert "Context: " in out and "% left (" in out
    # the second request answers both tool calls of the first step in one user turn, in order
    second = requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    results = second[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]
    assert results[0]["content"] == "wrote 32 bytes to hello.py" and "out.txt" in results[1]["content"]
    assert [b["tool_use_id"] for b in results] == [b["id"] for b in second[1]["content"] if b["type"] == "tool_use"]
    # persisted in the order it happened: the assistant message before its tool results
    s = latest()
    rows = list(
        Store.open_default().db.query("select seq, role, content, usage from messages where session_id = ? order by seq", [s["id"]])
    )
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert json.loads(rows[1]["usage"])["input_tokens"] > 0 and rows[2]["usage"] is None
    assert s["agent"] == "supervise-agent" and session(s["id"])["status"] == "completed"
    # the container is gone with the session
    assert not [c for c in docker_client.containers.list(all=True) if c.name == f"supervise-{s['id']}"]


def test_path_escapes_reach_the_model_as_errors_and_touch_nothing(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to("/etc")
    with FakeAnthropic() as api:
        api.add(
            {
                "tool_uses": [
                    tool("write_file", path="../escaped.txt", content="x"),
                    tool("read_file", path="/etc/passwd"),
                    tool("read_file", path="link/passwd"),
                ]
            }
        )
        api.add({"text": "I cannot reach those."})
        code, out = run_agent(ws, api, "-p", "try to escape")
        results = agent_requests(api)[1].body["messages"][2]["content"]
    assert code == 0
    assert [r["is_error"] for r in results] == [True, True, True]
    assert all(r["content"].startswith("refused") for r in results)
    assert not (tmp_path / "escaped.txt").exists()


def test_no_key_is_one_line_before_anything_starts(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    code, out = supervise(["agent", "-p", "anything"], env)
    assert code == 2
    assert out.strip() == "supervise: no API key for the agent's model (hint: set ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY))"
    with pytest.raises(SuperviseError, match="no sessions yet"):
        latest()  # nothing was started


def start_interactive(ws, api, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url, TERM="xterm-256color")
    c = pexpect.spawn(
        SUPERVISE[0],
        ["agent", "--image", IMAGE, "--network", "none", "--workspace", str(ws), *args],
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=30,
    )
    c.expect("agent› ")
    return c


def messages_of(sid):
    return list(Store.open_default().db.query("select role, content, interrupted from messages where session_id = ? order by seq", [sid]))


def test_ctrl_c_while_the_answer_streams_keeps_the_partial_answer_and_returns_to_the_prompt(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"text": "Thinking about it: " + "word " * 200, "chunk": 10, "chunk_delay": 0.05})
        api.add({"text": "Second answer."})
        c = start_interactive(ws, api)
        c.sendline("explain the build")
        c.expect("Thinking about it")
        c.sendcontrol("c")
        c.expect(r"\(interrupted\)")
        c.expect("agent› ")
        c.sendline("go on")
        c.expect("Second answer.")
        c.expect("agent› ")
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
        second = agent_requests(api)[1].body["messages"]
    rows = messages_of(latest()["id"])
    assert [(r["role"], r["interrupted"]) for r in rows] == [("user", 0), ("assistant", 1), ("user", 0), ("assistant", 0)]
    partial = json.loads(rows[1]["content"])[0]["text"]
    assert partial.startswith("Thinking about it") and len(partial) < len("Thinking about it: " + "word " * 200)
    assert second[1] == {"role": "assistant", "content": [{"type": "text", "text": partial}]}  # the model sees what was shown


def test_ctrl_c_while_a_command_runs_lets_it_finish_and_stops_before_the_next_step(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add(
            {
                "tool_uses": [
                    tool("execute_command", command="sleep 2; echo finished > done.txt"),
                    tool("execute_command", command="echo second > second.txt"),
                ]
            }
        )
        api.add({"text": "should never be asked"})
        c = start_interactive(ws, api)
        c.sendline("do two things")
        c.expect(r"execute_command\(sleep 2")
        c.sendcontrol("c")
        c.expect("stopping after this command")
        c.expect("agent› ", timeout=20)
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
        asked = len(agent_requests(api))
    assert (ws / "done.txt").read_text() == "finished\n"  # the running command finished
    assert not (ws / "second.txt").exists() and asked == 1  # nothing after it
    rows = messages_of(latest()["id"])
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool"]
    results = [json.loads(r["content"])[0] for r in rows[2:]]
    assert results[0]["is_error"] is False and results[1]["content"] == "not run: the user stopped the agent"


def test_a_killed_supervisor_leaves_no_container_once_the_next_session_starts(docker_client, tmp_path):
    import signal
    import time

    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"text": "first"}, times=None)
        c = start_interactive(ws, api)
        sid = latest()["id"]
        assert [x.name for x in docker_client.containers.list() if x.name == f"supervise-{sid}"]
        os.kill(c.pid, signal.SIGKILL)  # the supervisor; the agent program may die with the PTY, or not
        c.close(force=True)
        time.sleep(1)
        code, out = run_agent(ws, api, "-p", "hello")  # the next session sweeps
    assert code == 0, out
    assert not [x for x in docker_client.containers.list(all=True) if x.name == f"supervise-{sid}"]


def test_a_line_typed_while_the_agent_works_is_queued_and_given_at_the_next_step(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"tool_use": tool("execute_command", command="sleep 2; echo built")})
        api.add({"text": "Built, and noted."})
        c = start_interactive(ws, api)
        c.sendline("build it")
        c.expect(r"execute_command\(sleep 2")
        c.sendline("also write the tests")  # typed while the command runs
        c.expect("queued: also write the tests")
        c.expect("Built, and noted.")
        c.expect("agent› ")
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
        second = agent_requests(api)[1].body["messages"]
    turn = second[-1]["content"]
    assert [b["type"] for b in turn] == ["tool_result", "text"]  # after the tool's result, in the same user turn
    assert turn[1]["text"] == "also write the tests" and "built" in turn[0]["content"]
    rows = messages_of(latest()["id"])
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "user", "assistant"]


def test_confirm_asks_before_each_command_and_a_no_is_told_to_the_model(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"tool_use": tool("execute_command", command="touch made.txt")})
        api.add({"text": "You declined; nothing was run."})
        c = start_interactive(ws, api, "--confirm")
        c.sendline("make a file")
        c.expect(r"Run this command\? \[y/N\] ")
        c.sendline("n")
        c.expect("You declined")
        c.expect("agent› ")
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
        result = agent_requests(api)[1].body["messages"][-1]["content"][0]
    assert result["is_error"] is True and result["content"] == "the user declined to run this command"
    assert not (ws / "made.txt").exists()


def resume(api, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_SUMMARY"))}
    env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url, TERM="xterm-256color")
    c = pexpect.spawn(SUPERVISE[0], ["resume", *args], env=env, dimensions=(30, 100), encoding="utf-8", timeout=30)
    return c


def test_resume_carries_on_the_stored_conversation_in_a_new_container(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"tool_use": tool("write_file", path="notes.txt", content="step one done\n")})
        api.add({"text": "Step one is done."})
        code, out = run_agent(ws, api, "-p", "do step one")
        assert code == 0, out
        first = latest()
        api.add({"text": "Carrying on with step two."}, match=the_agents)
        c = resume(api, first["id"])
        c.expect(r"resumed session \w+: 4 messages")
        c.expect("agent› ")
        c.sendline("now step two")
        c.expect("Carrying on with step two.")
        c.expect("agent› ")
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
        sent = agent_requests(api)[-1].body["messages"]
    second = latest()
    assert second["parent_id"] == first["id"] and second["agent"] == "supervise-agent"
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[0]["content"][0]["text"] == "do step one" and sent[-1]["content"][0]["text"] == "now step two"
    assert (ws / "notes.txt").read_text() == "step one done\n"  # the same workspace
    assert len(messages_of(first["id"])) == 4  # the old session's conversation is left as it was
    assert not [x for x in docker_client.containers.list(all=True) if x.name in (f"supervise-{first['id']}", f"supervise-{second['id']}")]


def test_resume_fresh_starts_a_new_conversation_that_is_given_the_session_context(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"text": "Parser plan noted."})
        code, out = run_agent(ws, api, "-p", "plan the config parser")
        first = latest()
        c = resume(api, first["id"], "--fresh")
        c.expect(r"Reply to: ", timeout=40)  # the context, typed at the prompt, is its first turn
        c.expect("agent› ")
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
        fresh = agent_requests(api)[-1].body["messages"]
    assert len(fresh) == 1 and fresh[0]["content"][0]["text"].startswith("[supervise] You are continuing earlier work")
    assert "plan the config parser" in fresh[0]["content"][0]["text"]


@pytest.mark.parametrize(
    "status, said",
    [
        (401, "supervise: the model API refused the key (401) (hint: check ANTHROPIC_API_KEY)"),
        (404, "supervise: the model API does not know the model 'claude-sonnet-5-5' (hint: pass --model with a model your key can use)"),
    ],
)
def test_a_refused_key_or_an_unknown_model_is_one_clear_line(docker_client, tmp_path, status, said):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"status": status, "message": "nope"}, times=None)
        code, out = run_agent(ws, api, "-p", "anything")
    assert code == 1
    assert said in out and "Traceback" not in out
    assert not [x for x in docker_client.containers.list(all=True) if x.name == f"supervise-{latest()['id']}"]


def test_sigterm_ends_the_agent_and_removes_its_container_and_scratch_workspace(docker_client, tmp_path):
    import signal
    import time

    with FakeAnthropic() as api:
        c = start_interactive(tmp_path, api, "--scratch")
        sid = latest()["id"]
        [box] = [x for x in docker_client.containers.list() if x.name == f"supervise-{sid}"]
        scratch = [m["Source"] for m in box.attrs["Mounts"]][0]
        assert "supervise-scratch-" in scratch and os.path.isdir(scratch)
        os.kill(c.pid, signal.SIGTERM)  # supervise passes it on to the agent
        c.expect(pexpect.EOF, timeout=20)
        c.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and [x for x in docker_client.containers.list(all=True) if x.name == f"supervise-{sid}"]:
        time.sleep(0.2)
    assert not [x for x in docker_client.containers.list(all=True) if x.name == f"supervise-{sid}"]
    assert not os.path.exists(scratch)


def test_ctrl_c_during_a_compaction_leaves_the_database_as_it_was(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeAnthropic() as api:
        api.add({"text": "First answer."})
        api.add({"text": "Second answer."})
        api.add({"text": "## Original request\nx", "delay": 5}, match=lambda r: not r.has_tools, times=None)  # a slow summary
        c = start_interactive(ws, api, "--keep-last", "1")
        for task in ("first task", "second task"):
            c.sendline(task)
            c.expect("agent› ")
        c.sendline("/compact")
        c.expect("Compacting context")
        sid = latest()["id"]
        before = messages_of(sid)
        c.sendcontrol("c")
        c.expect(r"\(compaction interrupted\)")
        c.expect("agent› ")
        c.sendline("/exit")
        c.expect(pexpect.EOF)
        c.close()
    after = messages_of(sid)
    assert after == before  # no summary row, no message flagged
    db = Store.open_default().db
    assert not db.execute("select count(*) from messages where session_id = ? and (compacted = 1 or role = 'summary')", [sid]).fetchone()[0]
    assert not db.execute("select count(*) from events where session_id = ? and kind = 'agent_compaction'", [sid]).fetchone()[0]


def test_the_agent_looks_up_an_earlier_session_of_its_project_with_supervises_memory_tools(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    run_cli("--", "sh", "-c", "echo 'we decided on the kestrel queue for the importer'", cwd=ws, check=True)
    earlier = latest()["id"]
    with FakeAnthropic() as api:
        api.add({"tool_use": tool("supervise_search", query="importer queue")})
        api.add({"text": "You decided on kestrel."})
        code, out = run_agent(ws, api, "-p", "what did we decide about the queue?")
        requests = agent_requests(api)
    assert code == 0, out
    assert {"supervise_search", "supervise_session", "supervise_excerpt", "supervise_brief"} <= {
        t["name"] for t in requests[0].body["tools"]
    }
    result = requests[1].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error")
    assert "Recorded by supervise" in result["content"] and "kestrel queue" in result["content"] and earlier in result["content"]
