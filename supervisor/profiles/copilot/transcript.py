"""GitHub Copilot CLI's session files, read: its own record of a conversation, beside the screen.

It appends one JSON record per line to `<COPILOT_HOME or ~/.copilot>/session-state/<session
id>/events.jsonl`, one folder per session, every folder's sessions side by side: a file is a
session's own when its first record (`session.start`) names the folder it runs in, or when
its folder is the id of the session being carried on. Each record has `type`, `data`, `id`,
`parentId` and `timestamp`: `user.message` (what the user typed, and as the model got it),
`assistant.message` (its text and tool requests), `tool.execution_*`, `session.error`, and
around a compaction `session.compaction_start` (its trigger: "manual", "threshold") and
`session.compaction_complete`, which holds the summary it made and the tokens before. The
format is its own; records we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..recordfiles import Lines

Record = dict
SOURCE = Lines(recursive=True)  # a folder per session
FILE = "events.jsonl"


def folder(env: Mapping[str, str], cwd: str) -> Path:
    home = env.get("COPILOT_HOME") or str(Path(env.get("HOME") or os.path.expanduser("~")) / ".copilot")
    return Path(home).expanduser() / "session-state"


def locate(top: Path, agent_session_id: str) -> Path | None:
    """The session file of `agent_session_id`."""
    path = top / agent_session_id / FILE
    return path if path.is_file() else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """Whether the file `record` was read from is this session's: None until its start says."""
    if path.name != FILE:
        return False
    if agent_session_id and path.parent.name == agent_session_id:
        return True
    if record.get("type") != "session.start":
        return None
    said = (_data(record).get("context") or {}).get("cwd")
    return isinstance(said, str) and os.path.realpath(said) == os.path.realpath(cwd)


def _data(record: Record) -> dict:
    data = record.get("data")
    return data if isinstance(data, dict) else {}


def session_id(record: Record) -> str | None:
    """The session id of its start record, which `copilot --resume=ID` takes."""
    if record.get("type") != "session.start":
        return None
    sid = _data(record).get("sessionId")
    return sid if isinstance(sid, str) and sid else None


def timestamp(record: Record) -> float | None:
    try:
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, AttributeError):
        return None


def compaction(record: Record) -> dict | None:
    """The detail of a compaction that was applied, or None for any other record."""
    data = _data(record)
    if record.get("type") != "session.compaction_complete" or not data.get("success"):
        return None
    trigger = data.get("trigger")
    detail: dict[str, Any] = {"trigger": "auto" if trigger in ("threshold", "overflow") else trigger}
    if isinstance(data.get("preCompactionTokens"), int):
        detail["pre_tokens"] = data["preCompactionTokens"]
    if isinstance(data.get("summaryContent"), str) and data["summaryContent"].strip():
        detail["summary"] = data["summaryContent"].strip()
    return detail


def summary(record: Record) -> str | None:
    """The summary it made of what it compacted, else None."""
    detail = compaction(record)
    return detail.get("summary") if detail else None


def user_text(record: Record) -> str:
    """What the user typed, of a user's message record, or "" for any other record."""
    if record.get("type") != "user.message":
        return ""
    content = _data(record).get("content")
    return content if isinstance(content, str) else ""


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (a slash command is run by it, never recorded)."""
    return [said for said in (user_text(r).strip() for r in records) if said]


def _lines(prefix: str, text: str) -> list[str]:
    return [(prefix if i == 0 else "  ") + line for i, line in enumerate(text.strip().splitlines())]


def as_lines(records: Iterable[Record]) -> list[str]:
    """The session as log lines: the messages, each tool call in one line, and an error."""
    out: list[str] = []
    for r in records:
        data, kind = _data(r), r.get("type")
        if kind == "user.message":
            out.extend(_lines("❯ ", user_text(r)))
        elif kind == "assistant.message":
            if isinstance(data.get("content"), str) and data["content"].strip():
                out.extend(_lines("● ", data["content"]))
            for call in data.get("toolRequests") or []:
                if isinstance(call, dict):
                    args = call.get("arguments") or {}
                    detail = args.get("command") or args.get("path") if isinstance(args, dict) else None
                    out.append(f"● {call.get('name')}({str(detail or json.dumps(args))[:200]})")
        elif kind == "session.error" and isinstance(data.get("message"), str):
            out.append("✗ " + data["message"].strip().splitlines()[0][:300])
    return out
