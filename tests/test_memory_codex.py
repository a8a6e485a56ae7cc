"""The real Codex CLI (pinned in tests/agents) looks up an earlier session's decision through
supervise's MCP server, with no approval dialog, against the fake Responses API.

It runs the model Codex runs by default, gpt-6.1-sol (the first of its bundled catalog, no
upgrade offered over it), on an API-key provider (a ChatGPT login's TUI needs more of the
backend than the fake has). That model is in code mode: MCP tools are not offered as functions
but only from its `exec` tool's JavaScript (`tools.mcp__supervise__search`), so the fake answers
with such a script, as a real model must; offered the `mcp__supervise` namespace instead (a
model not in code mode), it calls the function."""

import contextlib
import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from agentdriver import Screen
from kits import codex
from kits.codex import MODEL, idle, ready, say
from fake_responses import FakeResponses, completed, message_events
from helpers import latest, recorder_done, session, wait_for
from planted import DECISION, FRAME, LOOKUP, REQUEST, SECRET, context_of_session_1, leaked
from procs import left_running, live
from test_summary_backends_codex import codex_bin

DIALOG = r"Allow the supervise MCP server|Field 1/1|enter to submit \| esc to cancel|Would you like to run"
TRIES = 20  # calls of search in one turn while Codex has not listed it yet (its server starting)


def offered(body: dict) -> list[tuple[str | None, str, str]]:
    """(namespace, name, type) of every tool a request offers, in `tools` or in an
    `additional_tools` input item (code mode)."""
    found = []

    def walk(tools, namespace=None):
        for tool in tools or []:
            if tool.get("type") == "namespace":
                walk(tool.get("tools"), tool.get("name"))
            else:
                found.append((namespace, tool.get("name") or tool.get("type"), tool.get("type")))

    walk(body.get("tools"))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            walk(item.get("tools"))
    return found


def tool_outputs(req) -> list[str]:
    """The text of each tool output after the request's last user message (this turn's), a
    script's printed CallToolResult read back to its text."""
    items = req.items()
    last_user = max((i for i, item in enumerate(items) if item.get("role") == "user"), default=-1)
    out = []
    for item in items[last_user + 1 :]:
        if not item.get("type", "").endswith("_output"):
            continue
        raw = item.get("output")
        parts = [raw] if isinstance(raw, str) else [p.get("text", "") for p in raw or [] if isinstance(p, dict)]
        out.append("\n".join(map(call_tool_result_text, parts)))
    return out


def call_tool_result_text(part: str) -> str:
    try:
        result = json.loads(part)
    except ValueError:
        return part
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        return "\n".join(c.get("text", "") for c in result["content"] if isinstance(c, dict))
    return part


class Model(FakeResponses):
    """Session 1: REQUEST -> the decision. Session 2: LOOKUP -> a call of supervise's search
    (again while Codex has not listed it yet), then of `session` on its first hit, then the
    decision it found. The summary backend's requests (a json_schema answer) -> session 1's
    context, as a summary model would make it."""

    def events(self, req, reply=None):
        text = req.last_user_text()
        if reply is None and req.wanted_schema() is not None and "key_decisions" in (req.wanted_schema().get("properties") or {}):
            return self.answer(json.dumps(context_of_session_1()))
        if reply is not None or req.is_compaction or req.wanted_schema() is not None:
            return super().events(req, reply)
        outputs = tool_outputs(req)
        if text.endswith(REQUEST) and not outputs:
            return self.answer(f"Decided. {DECISION}.")
        if text.endswith(LOOKUP):
            framed = [t for t in outputs if FRAME in t]
            if not framed and len(outputs) < TRIES:
                if outputs:
                    time.sleep(1.0)  # its server is still starting: a moment before asking again
                return self.call(req, "search", {"query": "importer queue"})
            hits = [m.group(1) for t in framed for m in re.finditer(r"^(\w+)[@#]\d+ · ", t, re.M)]
            if len(framed) == 1 and hits:  # then the session of the first hit, as the server's instructions say
                return self.call(req, "session", {"id": hits[0]})
            found = [hit_text(line) for t in framed for line in t.splitlines() if "kestrel" in line]
            if found:
                return self.answer(f"From the record: {max(found, key=lambda line: 'redis' in line)}")
            return self.answer(f"Nothing recorded: {' | '.join(outputs)[-300:]}")
        return super().events(req, reply)

    def answer(self, text: str) -> list[dict]:
        rid = f"resp_fake{next(self._ids):04d}"
        return [created(rid), *message_events(rid, text), completed(rid, 4_000)]

    def call(self, req, tool: str, args: dict) -> list[dict]:
        """A call of supervise's `tool` in the shape the request offers it."""
        n = next(self._ids)
        rid, call_id = f"resp_fake{n:04d}", f"call_fake{n:04d}"
        tools = offered(req.body)
        if ("mcp__supervise", tool, "function") in tools:
            item = {"type": "function_call", "id": f"fc_{rid}", "call_id": call_id, "namespace": "mcp__supervise", "name": tool}
            item.update(arguments=json.dumps(args), status="completed")
            events = [
                {"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": "", "status": "in_progress"}},
                {"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]},
            ]
        elif (None, "exec", "custom") in tools or ("functions", "exec", "custom") in tools:
            script = f"const r = await tools.mcp__supervise__{tool}({json.dumps(args)});\ntext(r);\n"
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{rid}",
                "call_id": call_id,
                "name": "exec",
                "input": script,
                "status": "completed",
            }
            events = [
                {"type": "response.output_item.added", "output_index": 0, "item": {**item, "input": "", "status": "in_progress"}},
                {"type": "response.custom_tool_call_input.done", "item_id": item["id"], "output_index": 0, "input": script},
            ]
        else:
            return self.answer(f"No tool to look it up with: {tools}")
        return [created(rid), *events, {"type": "response.output_item.done", "output_index": 0, "item": item}, completed(rid, 4_000)]


def hit_text(line: str) -> str:
    """The recorded text of one of search's hits ("id · agent · when · where · text")."""
    return line.rsplit(" · ", 1)[-1].lstrip("•›-| ")


def created(rid: str) -> dict:
    return {"type": "response.created", "response": {"id": rid, "object": "response", "status": "in_progress", "model": MODEL}}


def quit_codex(screen) -> None:
    codex.quit(screen)
    screen.close()


def end_leftovers(home: str) -> None:
    """Codex's own processes that outlive it (not supervise's recorder): ended by the
    private HOME in their environment."""
    ours = lambda cmdline, environ: f"HOME={home}".encode() in environ and b"supervisor.run.recorder" not in cmdline  # noqa: E731
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in live(ours):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if not left_running(ours):
            return


def mcp_server_env(home: Path) -> dict[str, str]:
    """The environment of the supervise MCP server a Codex started (the one reading `home`)."""
    found = live(lambda cmdline, environ: b"supervisor\0mcp" in cmdline and f"SUPERVISE_HOME={home}".encode() in environ)
    if not found:
        return {}
    raw = Path(f"/proc/{found[0]}/environ").read_bytes().decode(errors="replace")
    return dict(kv.split("=", 1) for kv in raw.split("\0") if "=" in kv)


@pytest.fixture
def codex_sessions(tmp_path, home):
    """start() -> a Screen of the real Codex under supervise in one project; `api` is the fake."""
    exe = codex_bin()
    api = Model(compact_delay=0).start()
    env, project = codex.environment(tmp_path, api.url)
    env["SUPERVISE_HOME"] = str(home)
    screens = []

    def start() -> Screen:
        screen = Screen(["--", exe], env, project)
        screens.append(screen)
        ready(screen)
        return screen

    yield start, api, env, project
    for screen in screens:
        if screen.child.isalive():
            quit_codex(screen)
    end_leftovers(env["HOME"])
    api.stop()


def test_a_second_codex_session_looks_the_first_ones_decision_up_through_supervise_with_no_dialog(codex_sessions, home):
    start, api, env, project = codex_sessions
    first = start()
    say(first, REQUEST)
    first.wait("Decided. Use the kestrel", 90)
    idle(first)
    say(first, f"and my key is {SECRET}")
    first.wait(r"Fake reply #\d+", 90)
    idle(first)
    quit_codex(first)
    one = latest()["id"]
    recorder_done(one, 240)
    end_leftovers(env["HOME"])
    assert session(one)["project"] == str(project)

    before = len(api.requests)
    second = start()
    two = wait_for(lambda: (lambda s: s["id"] if s and s["id"] != one else None)(latest()), 30)
    say(second, LOOKUP)
    # the answer reaches the screen, and no approval dialog ever stood in its way
    second.wait(r"From the record: Decided\. Use the kestrel queue", 240)
    idle(second)
    # the server Codex started is supervise's, told which session asks
    server = mcp_server_env(home)
    assert server.get("SUPERVISE_SESSION_ID") == two, server
    asked = [r for r in api.requests[before:] if r.method == "POST"]
    answers = max(([t for t in tool_outputs(r) if FRAME in t] for r in asked), key=len)
    assert len(answers) == 2, f"supervise's tools did not answer: {[tool_outputs(r) for r in asked]}"
    found, told = answers
    assert "kestrel" in found and one in found
    # the session's requests, the one with the key in it masked
    assert f"Session {one}" in told and "and my key is [REDACTED" in told
    shown = second.text()
    assert "Called supervise.search" in shown
    assert not re.search(DIALOG, shown)
    assert not re.search(DIALOG, "".join(second.raw))
    quit_codex(second)
    recorder_done(two, 240)
    # nothing of the key in any request since session 1 ended (session 2's summary included)
    everything = json.dumps([r.body for r in api.requests[before:]])
    assert not leaked(everything) and "sk-ant-api03" not in everything
