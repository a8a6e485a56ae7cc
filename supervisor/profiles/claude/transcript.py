"""Claude Code's transcript, read: a second, stronger channel than the screen.

Claude Code appends one JSON record per line to
`<config>/projects/<cwd with every non-alphanumeric character replaced by ->/<session>.jsonl`
(`<config>` is $CLAUDE_CONFIG_DIR, else ~/.claude); the generic follower
(detection/transcript.py) hands each record here. A `compact_boundary` record is a compaction
that certainly happened (with its trigger and the token count before it); the records'
`sessionId` is what `claude --resume` needs. The format is internal to Claude Code; records
we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..recordfiles import JSON_LINES, error_line

Record = dict
SOURCE = JSON_LINES  # one folder per project


def config_dir(env: Mapping[str, str]) -> Path:
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".claude"


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """Where the transcripts of a session run in `cwd` are written."""
    return config_dir(env) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def file_name(agent_session_id: str) -> str:
    return f"{agent_session_id}.jsonl"


def locate(top: Path, agent_session_id: str) -> Path | None:
    """The transcript file of `agent_session_id`."""
    return top / file_name(agent_session_id)


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """Every file of the project's folder is taken as this session's."""
    return True


def session_id(record: Record) -> str | None:
    """The agent's own session id, which resuming it needs."""
    sid = record.get("sessionId")
    return sid if isinstance(sid, str) and sid else None


def timestamp(record: Record) -> float | None:
    try:
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, AttributeError):
        return None


def compaction(record: Record) -> dict | None:
    """The detail of a compact_boundary record, or None for any other record."""
    if record.get("type") != "system" or record.get("subtype") != "compact_boundary":
        return None
    meta = record.get("compactMetadata") or {}
    detail = {"trigger": meta.get("trigger")}
    if meta.get("preTokens") is not None:
        detail["pre_tokens"] = meta["preTokens"]
    return detail


def summary(record: Record) -> str | None:
    """The summary Claude Code made of what it compacted (the record after a compact_boundary
    that carries it, as the model is given it), else None."""
    if not record.get("isCompactSummary"):
        return None
    text = user_text({**record, "type": "user"})
    # the summary itself, without the lines Claude Code wraps it in for the model
    m = _SUMMARY.search(text)
    return (m.group(1) if m else text).strip() or None


_SUMMARY = re.compile(r"\nSummary:\n(.*?)(?:\n\n(?:If you need specific details|Continue the conversation from)|\Z)", re.S)


# 2.1.330 stores a pasted text inside these tags (also what the model is sent).
_PASTED = re.compile(r'\n*<pasted_content id="[^"]*">\n?(.*?)\n?</pasted_content id="[^"]*">\n*', re.DOTALL)


def user_text(record: Record) -> str:
    """The text of a `user` record (a typed prompt), or "" for any other record, tool results
    and the like; pasted parts as they were pasted."""
    if record.get("type") != "user":
        return ""
    content = (record.get("message") or {}).get("content")
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    if not isinstance(content, str):
        return ""
    return _PASTED.sub(lambda m: "\n" + m.group(1) + "\n", content).strip("\n") if "<pasted_content" in content else content


# What it records as a user turn but the user did not type as a request: a slash command and
# its output ("<command-name>/compact</command-name>", "<local-command-stdout>").
_COMMAND = re.compile(r"^\s*<(?:command-name|command-message|command-args|local-command-std\w+)>")


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order: not its meta records (hook output, reminders),
    compaction summaries, tool results or slash commands."""
    out = []
    for record in records:
        if record.get("isMeta") or record.get("isCompactSummary"):
            continue
        said = user_text(record).strip()
        if said and not _COMMAND.match(said) and not said.startswith("/"):
            out.append(said)
    return out


def as_lines(records: Iterable[Record]) -> list[str]:
    """The transcript as log lines: the messages, and each tool call in one line."""
    out: list[str] = []
    for r in records:
        message = r.get("message") or {}
        content = message.get("content")
        role = message.get("role") or r.get("type")
        if r.get("isCompactSummary") or r.get("isMeta") or r.get("type") not in ("user", "assistant"):
            continue
        blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and b.get("text", "").strip():
                prefix = "❯ " if role == "user" else "● "
                out.extend(prefix + line if i == 0 else "  " + line for i, line in enumerate(b["text"].strip().splitlines()))
            elif b.get("type") == "tool_use":
                args = b.get("input") or {}
                detail = args.get("command") or args.get("file_path") or args.get("path") or json.dumps(args)[:200]
                out.append(f"● {b.get('name')}({detail})")
            elif b.get("type") == "tool_result" and b.get("is_error"):
                inner = b.get("content")
                text = inner if isinstance(inner, str) else " ".join(x.get("text", "") for x in inner or [] if isinstance(x, dict))
                out.append(error_line(text))
    return out
