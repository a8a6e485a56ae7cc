"""Continue CLI's session files, read: its own record of a conversation, beside the screen.

Continue keeps each session as one JSON file, `<continue dir>/sessions/<session id>.json`
(`<continue dir>` is $CONTINUE_GLOBAL_DIR, else ~/.continue; every project's sessions in one
folder, beside their index `sessions.json`), written from the first message on and rewritten
whole at every change: the session id (which `--fork` takes), the folder it runs in
(`workspaceDirectory`) and the conversation (`history`), an item per message: the user's, the
assistant's with its tool calls and their states (`generated`, `calling`, then `done`,
`errored` or `canceled`, with the tool's output), each changed in place as the call goes. A
compaction replaces the history with one assistant item holding the summary it made
(`conversationSummary`), and what comes after it. A record here is one item, with the
session's id and folder; no item is dated, and an error of the model's API is not recorded.
The format is Continue's own; items we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..recordfiles import JsonFile, carried_or_here, error_line, named_session

Record = dict
# A tool call's states while it has not finished (its item is changed in place until it has).
RUNNING = frozenset({"generating", "generated", "calling"})


def items(data: object) -> list[Record]:
    """The session's messages, each with its id and folder (`session`, `cwd`)."""
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        return []
    sid, cwd = data.get("sessionId"), data.get("workspaceDirectory")
    return [{**item, "session": sid, "cwd": cwd} for item in data["history"] if isinstance(item, dict)]


def key(record: Record) -> str:
    """What a message is, whatever the state of its tool calls (which change in place)."""
    return json.dumps(record.get("message"), sort_keys=True, default=str)


def complete(record: Record) -> bool:
    """An item whose tool calls have all finished."""
    return not any(isinstance(s, dict) and s.get("status") in RUNNING for s in record.get("toolCallStates") or [])


SOURCE = JsonFile("????????-????-????-????-????????????.json", items=items, key=key, complete=complete)


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """Where its session files are (every project's; a relative $CONTINUE_GLOBAL_DIR is the run's folder's)."""
    top = env.get("CONTINUE_GLOBAL_DIR")
    if top:
        return Path(cwd, Path(top).expanduser()) / "sessions"
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".continue" / "sessions"


def locate(top: Path, agent_session_id: str) -> Path | None:
    path = top / f"{agent_session_id}.json"
    return path if path.is_file() else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool:
    """The session it carries on, else one run in its folder (`--fork` writes a new session)."""
    return carried_or_here(record, cwd, agent_session_id)


session_id = named_session


def timestamp(record: Record) -> float | None:
    return None  # its items are not dated


def summary(record: Record) -> str | None:
    """The summary it made of what it compacted (the item that replaced the history), else None."""
    said = record.get("conversationSummary")
    return said.strip() if isinstance(said, str) and said.strip() else None


def compaction(record: Record) -> dict | None:
    """A compaction (its summary's item; whether /compact or a full window asked is not recorded), else None."""
    return {"trigger": None} if "conversationSummary" in record else None


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _message(record: Record) -> dict:
    return _dict(record.get("message"))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def user_text(record: Record) -> str:
    """The text of a user's message, or "" for any other record."""
    message = _message(record)
    return _text(message.get("content")) if message.get("role") == "user" else ""


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (a slash command is run by Continue and never recorded)."""
    return [said for said in (user_text(r).strip() for r in records) if said]


def _marked(text: str, first: str) -> list[str]:
    return [(first if i == 0 else "  ") + line for i, line in enumerate(text.strip().splitlines())]


def _tool(state: dict) -> list[str]:
    function, args = _dict(_dict(state.get("toolCall")).get("function")), _dict(state.get("parsedArgs"))
    detail = args.get("command") or args.get("filepath") or args.get("path") or json.dumps(args)[:200]
    out = [f"● {function.get('name')}({detail})"]
    if state.get("status") == "errored":
        said = " ".join(str(o.get("content") or "") for o in state.get("output") or [] if isinstance(o, dict))
        out.append(error_line(said))
    return out


def as_lines(records: Iterable[Record]) -> list[str]:
    """The session as log lines: the messages, each tool call in one line and a failed one's
    error. Its compaction's summary is its own (kept as such), not the session's."""
    out: list[str] = []
    for r in records:
        message = _message(r)
        if summary(r) is not None or compaction(r) is not None:
            continue
        if message.get("role") == "user":
            out.extend(_marked(_text(message.get("content")), "> "))
        elif message.get("role") == "assistant":
            out.extend(_marked(_text(message.get("content")), "● "))
            for state in r.get("toolCallStates") or []:
                if isinstance(state, dict):
                    out.extend(_tool(state))
    return out
