"""pi's session files, read: its own record of a conversation, beside the screen.

pi appends one JSON record per line to
`<agent dir>/sessions/--<cwd without its leading / and with / and : as ->--/<time>_<session id>.jsonl`
(`<agent dir>` is $PI_CODING_AGENT_DIR, else ~/.pi/agent; $PI_CODING_AGENT_SESSION_DIR names
the folder itself, flat), one file per session, written from the first reply on. The first
record is the header (`type` "session": the session id that `pi --session` takes, and the
folder it runs in); then entries with `id`/`parentId` (a tree: a branch is a later entry
whose parent is an earlier one): `message` (the user's, the assistant's with its tool calls,
a tool's result), `model_change`, `thinking_level_change`, and `compaction`, which holds the
summary pi made and the token count before it. The format is pi's own; records we do not
understand are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..recordfiles import JSON_LINES, error_line

Record = dict
SOURCE = JSON_LINES  # one folder per project


def agent_dir(env: Mapping[str, str]) -> Path:
    if env.get("PI_CODING_AGENT_DIR"):
        return Path(env["PI_CODING_AGENT_DIR"]).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".pi" / "agent"


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """Where the session files of a session run in `cwd` are written (a `sessionDir` in its
    settings.json, or `--session-dir`, move them: not read here)."""
    if env.get("PI_CODING_AGENT_SESSION_DIR"):
        return Path(env["PI_CODING_AGENT_SESSION_DIR"]).expanduser()
    safe = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    safe = safe.replace("/", "-").replace("\\", "-").replace(":", "-")
    return agent_dir(env) / "sessions" / f"--{safe}--"


def file_name(agent_session_id: str) -> str:
    """The name of its file, as a glob: it begins with the time the session started."""
    return f"*_{agent_session_id}.jsonl"


def locate(top: Path, agent_session_id: str) -> Path | None:
    """The session file of `agent_session_id`."""
    found = sorted(top.glob(file_name(agent_session_id))) if top.is_dir() else []
    return found[-1] if found else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """Whether the file `record` was read from is this session's: None until its header says."""
    if agent_session_id and path.name.endswith(f"_{agent_session_id}.jsonl"):
        return True
    if record.get("type") != "session":
        return None
    said = record.get("cwd")
    return isinstance(said, str) and os.path.realpath(said) == os.path.realpath(cwd)


def session_id(record: Record) -> str | None:
    """The session id of the header record, which `pi --session` takes."""
    if record.get("type") != "session":
        return None
    sid = record.get("id")
    return sid if isinstance(sid, str) and sid else None


def timestamp(record: Record) -> float | None:
    try:
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, AttributeError):
        return None


def compaction(record: Record) -> dict | None:
    """The detail of a `compaction` record (its trigger is not recorded), or None for any other."""
    if record.get("type") != "compaction":
        return None
    detail: dict[str, Any] = {"trigger": None}
    if record.get("tokensBefore") is not None:
        detail["pre_tokens"] = record["tokensBefore"]
    if isinstance(record.get("summary"), str) and record["summary"].strip():
        detail["summary"] = record["summary"].strip()
    return detail


def summary(record: Record) -> str | None:
    """The summary pi made of what it compacted (a `compaction` record holds it), else None."""
    detail = compaction(record)
    return detail.get("summary") if detail else None


def _message(record: Record) -> dict:
    message = record.get("message") if record.get("type") == "message" else None
    return message if isinstance(message, dict) else {}


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def user_text(record: Record) -> str:
    """The text of a user's message record, or "" for any other record."""
    message = _message(record)
    if message.get("role") != "user":
        return ""
    return "\n".join(_texts(message.get("content")))


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (a slash command is run by pi and never recorded)."""
    return [said for said in (user_text(r).strip() for r in records) if said]


def as_lines(records: Iterable[Record]) -> list[str]:
    """The session as log lines: the messages, each tool call in one line, a failed tool's
    error and an API error (pi records it on the assistant's message)."""
    out: list[str] = []
    for r in records:
        message = _message(r)
        role = message.get("role")
        if role == "user":
            for text in _texts(message.get("content")):
                out.extend(("> " if i == 0 else "  ") + line for i, line in enumerate(text.strip().splitlines()))
        elif role == "assistant":
            for b in message.get("content") or []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "text" and b.get("text", "").strip():
                    out.extend(("● " if i == 0 else "  ") + line for i, line in enumerate(b["text"].strip().splitlines()))
                elif b.get("type") == "toolCall":
                    args = b.get("arguments") or {}
                    detail = args.get("command") or args.get("path") or json.dumps(args)[:200]
                    out.append(f"● {b.get('name')}({detail})")
            if message.get("stopReason") == "error" and message.get("errorMessage"):
                out.append(error_line(message["errorMessage"]))
        elif role == "toolResult" and message.get("isError"):
            text = " ".join(_texts(message.get("content"))).strip()
            out.append(error_line(text))
    return out
