"""Qwen Code's own record of a session, read.

Qwen Code appends one JSON record per line to
`~/.qwen/projects/<cwd with every non-alphanumeric character replaced by ->/chats/<session>.jsonl`
(one file per session; `$QWEN_HOME` moves `~/.qwen`). Every record has `uuid`, `parentUuid`,
`sessionId`, `timestamp`, `type` (`user`, `assistant`, `tool_result`, `system`) and `cwd`;
messages are in the Gemini API's shape (`message.parts`: `text`, `functionCall`,
`functionResponse`). A compaction is a `system` record of subtype `chat_compression`, with its
counts and trigger (`systemPayload.info`) and the history that replaced the old one
(`systemPayload.compressedHistory`, whose first part is the summary it made). The format is
internal to Qwen Code; records we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from ..recordfiles import JSON_LINES, error_line

Record = dict
SOURCE = JSON_LINES  # one folder per project
# its triggers (`triggerReason`) as supervise names them
_TRIGGERS = {"manual": "manual", "token_limit": "auto", "payload_overflow": "auto"}
# the line it adds under the summary for the model
_RESUME_NOTE = re.compile(r"\n+Resume the prior task using the summary above\..*\Z", re.S)


def config_dir(env: Mapping[str, str]) -> Path:
    if env.get("QWEN_HOME"):
        return Path(env["QWEN_HOME"]).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".qwen"


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """Where the records of a session run in `cwd` are written."""
    return config_dir(env) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd) / "chats"


def file_name(agent_session_id: str) -> str:
    return f"{agent_session_id}.jsonl"


def locate(top: Path, agent_session_id: str) -> Path | None:
    """The record file of `agent_session_id`."""
    return top / file_name(agent_session_id)


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """Every record file of the project's folder is taken as this session's."""
    return True


def session_id(record: Record) -> str | None:
    """Its own session id, which `qwen --resume` needs."""
    sid = record.get("sessionId")
    return sid if isinstance(sid, str) and sid else None


def timestamp(record: Record) -> float | None:
    try:
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, AttributeError):
        return None


def _parts(record: Record) -> list[dict]:
    parts = (record.get("message") or {}).get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def compaction(record: Record) -> dict | None:
    """The detail of a chat_compression record (trigger, tokens before and after, the summary
    it made), or None for any other record."""
    if record.get("type") != "system" or record.get("subtype") != "chat_compression":
        return None
    payload = record.get("systemPayload") or {}
    info = payload.get("info") or {}
    reason = info.get("triggerReason")
    detail: dict = {"trigger": _TRIGGERS.get(reason, reason) if isinstance(reason, str) else None}
    if info.get("originalTokenCount") is not None:
        detail["pre_tokens"] = info["originalTokenCount"]
    if info.get("newTokenCount") is not None:
        detail["post_tokens"] = info["newTokenCount"]
    history = payload.get("compressedHistory") or []
    first = history[0] if history and isinstance(history[0], dict) else {}
    text = "\n".join(p.get("text", "") for p in first.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str))
    summary = _RESUME_NOTE.sub("", text).strip()
    if summary:
        detail["summary"] = summary
    return detail


def summary(record: Record) -> str | None:
    """The summary Qwen Code made of what it compacted (in a chat_compression record), else None."""
    detail = compaction(record)
    return detail.get("summary") if detail else None


def user_text(record: Record) -> str:
    """The text of a `user` record (what the user sent), or "" for any other record."""
    if record.get("type") != "user":
        return ""
    return "\n".join(p["text"] for p in _parts(record) if isinstance(p.get("text"), str))


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order: not tool results or slash commands (kept as `system`
    records of their own), nor a message it did not take from the user."""
    out = []
    for record in records:
        if record.get("provenance", "real_user") != "real_user":
            continue
        said = user_text(record).strip()
        if said and not said.startswith("/"):
            out.append(said)
    return out


def as_lines(records: Iterable[Record]) -> list[str]:
    """The record as log lines: the messages, and each tool call in one line."""
    out: list[str] = []
    for r in records:
        kind = r.get("type")
        if kind not in ("user", "assistant", "tool_result"):
            continue
        for part in _parts(r):
            text = part.get("text")
            if isinstance(text, str) and text.strip() and kind != "tool_result" and not part.get("thought"):
                prefix = "> " if kind == "user" else "◆ "
                out.extend(prefix + line if i == 0 else "  " + line for i, line in enumerate(text.strip().splitlines()))
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                args = call.get("args") or {}
                detail = args.get("command") or args.get("file_path") or args.get("path") or json.dumps(args)[:200]
                out.append(f"◆ {call.get('name')}({detail})")
            elif isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response") or {}
                if isinstance(response, dict) and response.get("error"):
                    out.append(error_line(response["error"]))
    return out
