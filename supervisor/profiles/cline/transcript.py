"""Cline CLI's session files, read: its own record of a conversation, beside the screen.

Cline keeps each session in a folder of its own, `<sessions>/<session id>/` (`<sessions>`:
$CLINE_SESSION_DATA_DIR, else `<data>/sessions`; `<data>`: $CLINE_DATA_DIR, else
$CLINE_DIR/data, else ~/.cline/data; in its sandbox, $CLINE_SANDBOX_DATA_DIR), each file of it
rewritten whole as the session goes: `<id>.json` (the manifest: the folder it runs in, its
model, its status), `<id>.messages.json` (the whole conversation, each message with an id:
the user's words wrapped in `<user_input mode="act">`, the assistant's text and tool calls,
their results as the user's; a turn is written once it is answered) and, from its first
compaction on, `<id>.compaction.json`: what the model is sent instead, rewritten at each
compaction, its first message the summary the model made (`metadata.kind`
"compaction_summary") or, where it compacted without one, a note it wrote itself (`kind`
"compaction", `reason` manual, automatic or the model's refusal of a too-long prompt). A
record here is one message of the conversation, or one compaction (the compacted view's
first message), each with the session's id and folder; a file written before the manifest
beside it is read at its next write. The session id is the one `cline --id` takes. The
format is Cline's own; messages we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..recordfiles import JsonFile, carried_or_here, error_line, named_session

Record = dict
_USER_INPUT = re.compile(r"\s*<user_input[^>]*>(.*)</user_input>\s*", re.S)
# what its compaction note's `reason` says asked for it
_TRIGGERS = {"manual_compaction": "manual", "auto_compaction": "auto", "overflow_recovery_compaction": "auto"}


def data_dir(env: Mapping[str, str]) -> Path:
    """Its data folder, as it resolves it."""
    if env.get("CLINE_SANDBOX", "").strip() == "1" and env.get("CLINE_SANDBOX_DATA_DIR", "").strip():
        return Path(env["CLINE_SANDBOX_DATA_DIR"].strip()).expanduser()
    if env.get("CLINE_DATA_DIR", "").strip():
        return Path(env["CLINE_DATA_DIR"].strip()).expanduser()
    if env.get("CLINE_DIR", "").strip():
        return Path(env["CLINE_DIR"].strip()).expanduser() / "data"
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".cline" / "data"


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def items(data: object) -> list[Record]:
    """A conversation file's messages, or a compaction file's compaction (one record)."""
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return []
    messages = [m for m in data["messages"] if isinstance(m, dict)]
    if "conversation_id" in data:  # <id>.compaction.json
        detail = _dict(messages[0].get("metadata")) if messages else {}
        if detail.get("kind") not in ("compaction", "compaction_summary"):
            return []
        return [{"session": data["conversation_id"], "compaction": detail, "updated": data.get("updated_at")}]
    return [{"session": data.get("sessionId"), "message": m} for m in messages]


def key(record: Record) -> str:
    """A message by its id; a compaction by when it was written."""
    if "compaction" in record:
        return f"compaction {record.get('updated')}"
    message = record.get("message") or {}
    return str(message.get("id") or json.dumps(message, sort_keys=True, default=str))


class SessionFiles(JsonFile):
    """Its conversation and compaction files, each read with the folder its manifest names."""

    def messages(self, path: Path) -> list[Record] | None:
        found = super().messages(path)
        if not found:
            return found
        sid = path.name.split(".", 1)[0]
        try:
            manifest = json.loads((path.parent / f"{sid}.json").read_bytes())
        except (OSError, ValueError):
            return None  # not written yet: its records wait for the folder they are of
        cwd = manifest.get("cwd") if isinstance(manifest, dict) else None
        return [{**r, "cwd": cwd} for r in found]


SOURCE = SessionFiles("*.messages.json", "*.compaction.json", recursive=True, items=items, key=key)


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """Where its session folders are (every project's)."""
    sandboxed = env.get("CLINE_SANDBOX", "").strip() == "1" and env.get("CLINE_SANDBOX_DATA_DIR", "").strip()
    if not sandboxed and env.get("CLINE_SESSION_DATA_DIR", "").strip():
        return Path(env["CLINE_SESSION_DATA_DIR"].strip()).expanduser()
    return data_dir(env) / "sessions"


def locate(top: Path, agent_session_id: str) -> Path | None:
    """The conversation of `agent_session_id` (its compaction file is the follower's)."""
    path = top / agent_session_id / f"{agent_session_id}.messages.json"
    return path if path.is_file() else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool:
    """The session it carries on, else one run in its folder."""
    return carried_or_here(record, cwd, agent_session_id)


session_id = named_session


def timestamp(record: Record) -> float | None:
    when = (record.get("compaction") or {}).get("generatedAt") or (record.get("message") or {}).get("ts")
    return when / 1000 if isinstance(when, (int, float)) and when else None


def compaction(record: Record) -> dict | None:
    """The detail of a compaction record (what asked for it, where its note says), else None."""
    detail = record.get("compaction")
    if not isinstance(detail, dict):
        return None
    out: dict[str, Any] = {"trigger": _TRIGGERS.get(str(detail.get("reason")))}
    before = detail.get("tokensBefore") or (detail.get("usageBefore") or {}).get("inputTokens")
    if before:
        out["pre_tokens"] = before
    return out


def summary(record: Record) -> str | None:
    """The summary the model made of what it compacted, else None (its own note is no summary)."""
    detail = record.get("compaction")
    if not isinstance(detail, dict) or detail.get("kind") != "compaction_summary":
        return None
    said = detail.get("summary")
    return said.strip() if isinstance(said, str) and said.strip() else None


def _blocks(record: Record) -> list[dict]:
    content = (record.get("message") or {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _role(record: Record) -> str | None:
    return (record.get("message") or {}).get("role")


def user_text(record: Record) -> str:
    """What the user typed in a message (its `<user_input>` blocks), or "" for any other record."""
    if _role(record) != "user":
        return ""
    said = [m.group(1) for b in _blocks(record) if b.get("type") == "text" and (m := _USER_INPUT.fullmatch(b.get("text") or ""))]
    return "\n".join(said)


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (a slash command is run by Cline and never recorded)."""
    return [said for said in (user_text(r).strip() for r in records) if said]


def _marked(text: str, first: str) -> list[str]:
    return [(first if i == 0 else "  ") + line for i, line in enumerate(text.strip().splitlines())]


def _call(block: dict) -> str:
    args: Any = block.get("input") if isinstance(block.get("input"), dict) else {}
    detail = args.get("commands") or args.get("command") or args.get("path") or args.get("file_path") or json.dumps(args)[:200]
    if isinstance(detail, list):
        detail = "; ".join(map(str, detail))
    return f"● {block.get('name')}({detail})"


def _failed(block: dict) -> str | None:
    """A tool result's error, where it failed."""
    content = block.get("content")
    results = content if isinstance(content, list) else []
    errors = [r for r in results if isinstance(r, dict) and (r.get("success") is False or r.get("error"))]
    if not errors and not block.get("is_error"):
        return None
    said = " ".join(str(r.get("error") or r.get("result") or "") for r in errors).strip()
    if not said and isinstance(block.get("content"), str):
        said = block["content"].strip()
    return error_line(said)


def as_lines(records: Iterable[Record]) -> list[str]:
    """The session as log lines: the user's words, the replies, each tool call in one line and
    a failed one's error. Its compaction's summary is its own (kept as such)."""
    out: list[str] = []
    for r in records:
        if _role(r) == "user":
            out.extend(_marked(user_text(r), "> "))
            for block in _blocks(r):
                failed = _failed(block) if block.get("type") == "tool_result" else None
                if failed:
                    out.append(failed)
        elif _role(r) == "assistant":
            for block in _blocks(r):
                if block.get("type") == "text" and str(block.get("text") or "").strip():
                    out.extend(_marked(block["text"], "● "))
                elif block.get("type") == "tool_use":
                    out.append(_call(block))
    return out
