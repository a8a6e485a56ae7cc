"""The agents' own records of the fidelity benchmark's sessions (scripts/bench_fidelity.py):
what Claude Code's transcript, Codex's rollout and Gemini CLI's session file hold of the same
session its screen shows, written in each one's format as the real programs write them
(tests/fixtures/AGENT/VERSION/record/ has real ones), so that a round can read the session
through its record as well as its screen, and the gain is measured.

`Recorded(drawer, record)` draws as the drawer does and records as the agent would; each
record carries the part of the session (1 to 4) it belongs to."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

SESSION = "01a2bench-0000-7000-8000-000000000001"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Record:
    """Records of one agent's format, each with the part it belongs to."""

    def __init__(self, cwd: str):
        self.cwd = cwd
        self.part = 0
        self.records: list[tuple[int, dict]] = []

    def add(self, record: dict) -> None:
        self.records.append((self.part, record))

    def of(self, part: int) -> list[dict]:
        return [r for p, r in self.records if p == part]

    def write(self, top: Path, part: int) -> None:
        """Append the records of `part` to its file under `top` (the profile's folder)."""
        path = top / self.file
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in ([*self.header()] if part == 1 else []) + self.of(part))

    def header(self) -> list[dict]:
        return []


class ClaudeRecord(Record):
    file = f"{SESSION}.jsonl"

    def _msg(self, role: str, content) -> None:
        self.add({"type": role, "sessionId": SESSION, "timestamp": _now(), "message": {"role": role, "content": content}})

    def user(self, text: str) -> None:
        self._msg("user", text)

    def say(self, text: str) -> None:
        self._msg("assistant", [{"type": "text", "text": text}])

    def tool(self, name: str, args: dict, output: list[str] | None = None, error: bool = False) -> None:
        self._msg("assistant", [{"type": "tool_use", "id": "t", "name": name, "input": args}])
        if output is not None:
            self._msg("user", [{"type": "tool_result", "tool_use_id": "t", "content": "\n".join(output), "is_error": error}])


class CodexRecord(Record):
    file = f"2026/11/26/rollout-2026-11-26T00-00-00-{SESSION}.jsonl"

    def header(self) -> list[dict]:
        return [{"timestamp": _now(), "type": "session_meta", "payload": {"id": SESSION, "cwd": self.cwd}}]

    def _item(self, kind: str, text: str) -> None:
        item = {"type": kind, "content": [{"type": "text" if kind == "UserMessage" else "Text", "text": text}]}
        self.add({"timestamp": _now(), "type": "event_msg", "payload": {"type": "item_completed", "item": item}})

    def user(self, text: str) -> None:
        self._item("UserMessage", text)

    def say(self, text: str) -> None:
        self._item("AgentMessage", text)

    def tool(self, name: str, args: dict, output: list[str] | None = None, error: bool = False) -> None:
        call = {"type": "function_call", "name": "shell" if "command" in args else name, "arguments": json.dumps(args)}
        self.add({"timestamp": _now(), "type": "response_item", "payload": call})
        if output is not None:
            self.add(
                {"timestamp": _now(), "type": "response_item", "payload": {"type": "function_call_output", "output": "\n".join(output)}}
            )


class GeminiRecord(Record):
    file = f"bench/chats/session-2026-11-26T00-00-{SESSION[:8]}.jsonl"

    def header(self) -> list[dict]:
        import hashlib

        return [{"sessionId": SESSION, "projectHash": hashlib.sha256(self.cwd.encode()).hexdigest(), "startTime": _now(), "kind": "main"}]

    def user(self, text: str) -> None:
        self.add({"id": f"u{len(self.records)}", "timestamp": _now(), "type": "user", "content": [{"text": text}]})

    def say(self, text: str) -> None:
        self.add({"id": f"g{len(self.records)}", "timestamp": _now(), "type": "gemini", "content": text})

    def tool(self, name: str, args: dict, output: list[str] | None = None, error: bool = False) -> None:
        call = {"name": name, "args": args, "result": "\n".join(output or [])}
        self.add({"id": f"g{len(self.records)}", "timestamp": _now(), "type": "gemini", "content": "", "toolCalls": [call]})


RECORDS = {"claude": ClaudeRecord, "codex": CodexRecord, "gemini": GeminiRecord}


class Recorded:
    """Draws as `drawer` does; records as the agent would (a user turn begins the next part)."""

    def __init__(self, drawer, record: Record):
        self.a, self.r = drawer, record
        self.name = drawer.name

    def user(self, t):
        self.r.part += 1
        self.r.user(t)
        return self.a.user(t)

    def say(self, t):
        self.r.say(t)
        return self.a.say(t)

    def read(self, p, n):
        self.r.tool("Read", {"file_path": p})
        return self.a.read(p, n)

    def edit(self, p):
        self.r.tool("Edit", {"file_path": p})
        return self.a.edit(p)

    def write(self, p):
        self.r.tool("Write", {"file_path": p})
        return self.a.write(p)

    def run(self, cmd, out):
        self.r.tool("Bash", {"command": cmd}, out, error=any("Error" in line or "FAILED" in line for line in out))
        return self.a.run(cmd, out)

    def todo(self, done, pending):
        self.r.tool("TodoWrite", {"todos": [*(f"[x] {d}" for d in done), *(f"[ ] {p}" for p in pending)]})
        return self.a.todo(done, pending)

    def compaction(self):
        return self.a.compaction()

    def echo(self, prompt):
        return self.a.echo(prompt)
