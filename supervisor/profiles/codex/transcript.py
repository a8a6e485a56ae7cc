"""Codex CLI's rollout files, read: its own record of a session, beside the screen.

Codex appends one JSON record per line to
`<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, every
session of every folder in the same tree: a file is a session's own when its first record
(`session_meta`) names the folder it runs in, or when its name holds the id of the session
being carried on. The user's messages and the agent's are `item_completed` events
(`UserMessage`, `AgentMessage`); tool calls are `response_item`s; a compaction is a
`compacted` record holding the summary Codex made. The format is internal to Codex; records
we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from ..recordfiles import Lines

Record = dict
SOURCE = Lines(recursive=True)  # dated subfolders, made as the days go by
# What Codex puts before the summary it hands the model after compacting.
_SUMMARY_LEAD = "use the information in this summary to assist with your own analysis:\n"


def folder(env: Mapping[str, str], cwd: str) -> Path:
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or os.path.expanduser("~")) / ".codex")
    return Path(home).expanduser() / "sessions"


def locate(top: Path, agent_session_id: str) -> Path | None:
    """The rollout file of `agent_session_id` (the newest, if it was written more than once)."""
    found = sorted(top.rglob(f"rollout-*-{agent_session_id}.jsonl"), key=lambda p: p.stat().st_mtime) if top.is_dir() else []
    return found[-1] if found else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """Whether the file `record` was read from is this session's: None until a record says."""
    if agent_session_id and agent_session_id in path.name:
        return True
    if record.get("type") != "session_meta":
        return None
    said = (record.get("payload") or {}).get("cwd")
    return isinstance(said, str) and _same_folder(said, cwd)


def _same_folder(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def session_id(record: Record) -> str | None:
    """The thread id, which `codex resume` needs."""
    if record.get("type") != "session_meta":
        return None
    sid = (record.get("payload") or {}).get("id")
    return sid if isinstance(sid, str) and sid else None


def timestamp(record: Record) -> float | None:
    try:
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, AttributeError):
        return None


def compaction(record: Record) -> dict | None:
    """A `compacted` record's detail (none it says), or None for any other record."""
    return {} if record.get("type") == "compacted" else None


def summary(record: Record) -> str | None:
    """The summary Codex made of what it compacted (a `compacted` record), else None."""
    message = (record.get("payload") or {}).get("message") if record.get("type") == "compacted" else None
    return message.split(_SUMMARY_LEAD, 1)[-1].strip() or None if isinstance(message, str) else None


def _item(record: Record, kind: str) -> str:
    payload = record.get("payload") or {}
    if record.get("type") != "event_msg" or payload.get("type") != "item_completed":
        return ""
    item = payload.get("item") or {}
    if item.get("type") != kind:
        return ""
    return "\n".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict) and isinstance(c.get("text"), str))


def user_text(record: Record) -> str:
    """The text of a message the user sent, or "" for any other record."""
    return _item(record, "UserMessage")


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (its slash commands are not messages to the model)."""
    return [said for said in (user_text(r).strip() for r in records) if said and not said.startswith("/")]


def as_lines(records: Iterable[Record]) -> list[str]:
    """The rollout as log lines: the messages, and each tool call in one line."""
    out: list[str] = []
    for r in records:
        for prefix, kind in (("› ", "UserMessage"), ("• ", "AgentMessage")):
            text = _item(r, kind).strip()
            if text:
                out.extend(prefix + line if i == 0 else "  " + line for i, line in enumerate(text.splitlines()))
        payload = r.get("payload") or {}
        if r.get("type") == "response_item" and payload.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            out.append(f"• {payload.get('name') or 'shell'}({_call_detail(payload)})")
    return out


def _call_detail(payload: dict) -> str:
    raw = payload.get("arguments") or payload.get("input") or (payload.get("action") or {}).get("command") or ""
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except ValueError:
            return raw.strip().splitlines()[0][:200] if raw.strip() else ""
    else:
        args = raw
    if isinstance(args, dict):
        command = args.get("command") or args.get("cmd")
        detail = " ".join(command) if isinstance(command, list) else command or args.get("path") or json.dumps(args)
        return str(detail)[:200]
    return " ".join(map(str, args))[:200] if isinstance(args, list) else str(args)[:200]
