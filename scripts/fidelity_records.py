"""The agents' own records of the fidelity benchmark's sessions (scripts/bench_fidelity.py):
what Claude Code's transcript, Codex's rollout, Gemini CLI's session file, OpenCode's
database and Aider's chat history hold of the same session its screen shows, written in
each one's format as the real programs write them (tests/fixtures/AGENT/VERSION/record/ has
real ones), so that a round can read the session through its record as well as its screen,
and the gain is measured.

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

    session_id = SESSION  # the agent's id of the session, as its record says it

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


class OpenCodeRecord(Record):
    """Rows of OpenCode's database (the tables and columns its reader reads), a message each."""

    file = "opencode.db"

    def _msg(self, role: str, parts: list[dict]) -> None:
        self.add({"role": role, "parts": parts})

    def user(self, text: str) -> None:
        self._msg("user", [{"type": "text", "text": text}])

    def say(self, text: str) -> None:
        self._msg("assistant", [{"type": "text", "text": text}])

    def tool(self, name: str, args: dict, output: list[str] | None = None, error: bool = False) -> None:
        out = "\n".join(output or [])
        state = {"status": "error", "input": args, "error": out} if error else {"status": "completed", "input": args, "output": out}
        self._msg("assistant", [{"type": "tool", "tool": name.lower(), "state": state}])

    def write(self, top: Path, part: int) -> None:
        import sqlite3

        top.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(top / self.file) as db:
            db.executescript(
                "CREATE TABLE IF NOT EXISTS session (id text PRIMARY KEY, directory text, time_created integer);"
                "CREATE TABLE IF NOT EXISTS message (id text PRIMARY KEY, session_id text, time_created integer, "
                "time_updated integer, data text);"
                "CREATE TABLE IF NOT EXISTS part (id text PRIMARY KEY, message_id text, session_id text, data text);"
            )
            db.execute("INSERT OR IGNORE INTO session VALUES (?, ?, 1)", (SESSION, self.cwd))
            for i, (p, r) in enumerate(self.records):
                if p != part:
                    continue
                mid, at = f"msg_{i:06d}", 1_795_000_000_000 + i
                data = {"role": r["role"], **({"time": {"created": at, "completed": at}} if r["role"] == "assistant" else {})}
                db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, SESSION, at, at, json.dumps(data)))
                for j, prt in enumerate(r["parts"]):
                    db.execute("INSERT INTO part VALUES (?, ?, ?, ?)", (f"prt_{i:06d}_{j}", mid, SESSION, json.dumps(prt)))


class AiderRecord(Record):
    """Aider's chat history: Markdown, the user's lines after `#### `, what it tells the user after `> `."""

    file = ".aider.chat.history.md"
    session_id = "2026-11-26 00:00:00"  # its chat: the time it started

    def header(self) -> list[dict]:
        return [{"md": f"\n# aider chat started at {self.session_id}\n\n"}]

    def user(self, text: str) -> None:
        self.add({"md": "\n" + "  \n".join(f"#### {line}" for line in text.splitlines()) + "  \n"})

    def say(self, text: str) -> None:
        self.add({"md": "\n" + text.strip() + "\n\n"})

    def tool(self, name: str, args: dict, output: list[str] | None = None, error: bool = False) -> None:
        if "command" in args:
            told = [f"Running {args['command']}", *(output or [])]
        elif "file_path" in args:
            told = [f"{'Added' if name == 'Read' else 'Applied edit to'} {args['file_path']}"]
        else:  # its plan, said in a reply
            self.say("\n".join(args.get("todos") or []))
            return
        self.add({"md": "".join(f"> {line}  \n" for line in told)})

    def write(self, top: Path, part: int) -> None:
        top.mkdir(parents=True, exist_ok=True)
        with open(top / self.file, "a", encoding="utf-8") as fh:
            fh.writelines(r["md"] for r in ([*self.header()] if part == 1 else []) + self.of(part))


RECORDS = {"claude": ClaudeRecord, "codex": CodexRecord, "gemini": GeminiRecord, "opencode": OpenCodeRecord, "aider": AiderRecord}


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
