"""Gemini CLI's session files, read: its own record of a session, beside the screen.

Gemini CLI appends one JSON record per line to
`~/.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl`: a header (its
`sessionId` and the `projectHash`, the SHA-256 of the folder it runs in), then each message
(`type` user, gemini, info ...), and `{"$set": {...}}` records that replace fields; a
compression sets `messages` anew, the state snapshot it made first among them as a user
message. The format is internal to Gemini CLI; records we do not understand are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from ..recordfiles import Lines

Record = dict
SOURCE = Lines(recursive=True)  # a folder per project, made when it first runs there
_SNAPSHOT = "<state_snapshot>"
_OURS = ("<session_context>", _SNAPSHOT)  # what it sends as the user's but the user did not type
_HOOKS = "<hook_context>"  # a part of the user's message that a hook added (supervise's context among them)


def own_folder(env: Mapping[str, str]) -> Path:
    """Its folder of settings, extensions and sessions (~/.gemini; GEMINI_CLI_HOME moves it)."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or os.path.expanduser("~")
    return Path(home).expanduser() / ".gemini"


def folder(env: Mapping[str, str], cwd: str) -> Path:
    return own_folder(env) / "tmp"


def locate(top: Path, agent_session_id: str) -> Path | None:
    found = sorted(top.glob(f"*/chats/session-*-{agent_session_id[:8]}.jsonl"), key=lambda p: p.stat().st_mtime) if top.is_dir() else []
    return found[-1] if found else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """A file is this session's when its header names this folder (or the session carried on)."""
    if "projectHash" not in record:
        return None
    if agent_session_id and record.get("sessionId") == agent_session_id:
        return True
    import hashlib  # (it loads OpenSSL; every start-up imports every profile)

    hashes = {hashlib.sha256(c.encode()).hexdigest() for c in (cwd, os.path.realpath(cwd))}
    return record["projectHash"] in hashes


def session_id(record: Record) -> str | None:
    sid = record.get("sessionId") or (record.get("$set") or {}).get("sessionId")
    return sid if isinstance(sid, str) and sid else None


def timestamp(record: Record) -> float | None:
    """When it was written; for a history set anew, when its snapshot was made (a resumed
    session's history, set again as it starts, keeps its old times)."""
    snapshot = _snapshot_message(record)
    when = (snapshot or record).get("timestamp") or record.get("startTime") or (record.get("$set") or {}).get("lastUpdated")
    try:
        return datetime.fromisoformat(str(when).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _text(message: Mapping, hooks: bool = True) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    texts = [p["text"] for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(t for t in texts if hooks or not t.lstrip().startswith(_HOOKS))


def _snapshot_message(record: Record) -> dict | None:
    messages = (record.get("$set") or {}).get("messages")
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict) and m.get("type") == "user" and _text(m).lstrip().startswith(_SNAPSHOT):
            return m
    return None


def _snapshot(record: Record) -> str | None:
    m = _snapshot_message(record)
    return _text(m).strip() if m is not None else None


def compaction(record: Record) -> dict | None:
    """The history set anew with a state snapshot in it: a compression done."""
    return {} if _snapshot(record) is not None else None


def summary(record: Record) -> str | None:
    """The state snapshot it compressed its history into."""
    return _snapshot(record)


def user_text(record: Record) -> str:
    if record.get("type") != "user" or "id" not in record:
        return ""
    text = _text(record, hooks=False)
    return "" if text.lstrip().startswith(_OURS) else text


def user_messages(records: Iterable[Record]) -> list[str]:
    return [said for said in (user_text(r).strip() for r in records) if said and not said.startswith("/")]


def as_lines(records: Iterable[Record]) -> list[str]:
    """Its messages as log lines, and each tool call in one line."""
    out: list[str] = []
    for r in records:
        said = user_text(r).strip()
        if said:
            out.extend(("> " if i == 0 else "  ") + line for i, line in enumerate(said.splitlines()))
        elif r.get("type") == "gemini" and "id" in r:
            text = _text(r).strip()
            if text:
                out.extend(("✦ " if i == 0 else "  ") + line for i, line in enumerate(text.splitlines()))
            for call in r.get("toolCalls") or []:
                if isinstance(call, dict):
                    args = call.get("args") or {}
                    detail = args.get("command") or args.get("file_path") or args.get("path") or ""
                    out.append(f"✓  {call.get('name')} {str(detail)[:200]}".rstrip())
    return out
