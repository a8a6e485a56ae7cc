"""OpenCode's database, read: its own record of a conversation, beside the screen.

OpenCode keeps every session of every project in one SQLite database,
`<data dir>/opencode.db` (`$XDG_DATA_HOME/opencode`, else ~/.local/share/opencode; WAL mode, so
a write changes `opencode.db-wal`): a `session` row (its id, which `--session` takes, and the
folder it runs in), `message` rows (`data`: the role, and for the assistant's when it
completed, its error, whether it is a compaction's summary) and `part` rows (`data`: text, a
tool call with its input, output or error, a `compaction` marker). A record here is one
message with its parts; the offset is the time (ms) a message was created: messages are read
in that order, a session's last one only once it is complete (one still streaming waits). The
database is opened read-only for each read and never written. The format is OpenCode's own;
rows we do not understand are skipped. Kilo Code CLI, built on OpenCode, keeps the same
database under its own name (its profile's `transcript` module).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from ..recordfiles import error_line, named_session

Record = dict
NAME = "opencode"
# A write it is making (a lock it holds) is waited for this long; past it, the read is tried again with its next write.
BUSY_MS = 200


def data_dir(env: Mapping[str, str], name: str = NAME) -> Path:
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return Path(base).expanduser() / name


class Database:
    """The `Source` of an OpenCode-style database (see detection/transcript.py)."""

    recursive = False
    again = 0.25

    def __init__(self, file_name: str):
        self.file_name = file_name

    def followed(self, path: Path) -> Path | None:
        # its writes go to the write-ahead log first
        name = path.name
        for suffix in ("", "-wal", "-journal"):
            if name == self.file_name + suffix:
                return path.with_name(self.file_name)
        return None

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)

    def end(self, path: Path) -> int:
        try:
            with closing(self._open(path)) as con:
                [(latest,)] = con.execute("SELECT max(time_created) FROM message").fetchall()
        except (sqlite3.Error, ValueError):
            return 0
        return (latest or 0) + 1

    def read(self, path: Path, since: int = 0, stream: str | None = None) -> tuple[list[Record], int]:
        where, args = ("m.time_created >= ? AND m.session_id = ?", (since, stream)) if stream else ("m.time_created >= ?", (since,))
        try:
            with closing(self._open(path)) as con:
                con.execute("BEGIN")  # the messages and their parts as of one moment
                rows = con.execute(
                    "SELECT m.id, m.session_id, m.time_created, m.data, s.directory FROM message m JOIN session s ON s.id = m.session_id "
                    f"WHERE {where} ORDER BY m.time_created, m.id",
                    args,
                ).fetchall()
                parts = self._parts(con, [row[0] for row in rows])
        except sqlite3.Error:
            return [], since
        records = [
            {"id": mid, "session": sid, "time": created, "directory": directory, "message": _json(data), "parts": parts.get(mid, [])}
            for mid, sid, created, data, directory in rows
        ]
        return ready(records, since)

    @staticmethod
    def _parts(con: sqlite3.Connection, ids: list[str]) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for i in range(0, len(ids), 500):  # SQLite's limit on a statement's variables
            chunk = ids[i : i + 500]
            sql = f"SELECT message_id, data FROM part WHERE message_id IN ({','.join('?' * len(chunk))}) ORDER BY id"
            for mid, data in con.execute(sql, tuple(chunk)):
                out.setdefault(mid, []).append(_json(data))
        return out

    def stream(self, record: Record) -> str | None:
        return record.get("session")


def _json(text: str) -> dict:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def complete(record: Record) -> bool:
    """A message it has finished writing: the assistant's once it completed or failed, the
    user's once its words are there (not only a part added before them, as supervise's plugin
    adds its context; a later message of the session ends the wait anyway)."""
    message = record["message"]
    if message.get("role") == "assistant":
        return bool((message.get("time") or {}).get("completed") or message.get("error"))
    return any(not p.get("synthetic") for p in record["parts"])


def ready(records: list[Record], since: int) -> tuple[list[Record], int]:
    """The records that can be read now, and the offset of the first that cannot: a session's
    last message while it is not complete (a later one of the session means it is done), and
    every message created in the same millisecond as that one (read with it next time)."""
    later: set[str] = set()
    blocked: int | None = None
    for record in reversed(records):
        if record["session"] not in later and not complete(record):
            blocked = record["time"] if blocked is None else min(blocked, record["time"])
        later.add(record["session"])
    if blocked is None:
        return records, (records[-1]["time"] + 1 if records else since)
    return [r for r in records if r["time"] < blocked], blocked


SOURCE = Database("opencode.db")


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """The folder of its database (every project's sessions are in it)."""
    return data_dir(env)


def locate(top: Path, agent_session_id: str, file_name: str = SOURCE.file_name) -> Path | None:
    """The database holding `agent_session_id`'s messages."""
    path = top / file_name
    return path if path.is_file() else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool:
    """Whether the session of `record` is this run's: the one it carries on, else one in its folder."""
    if agent_session_id:
        return record.get("session") == agent_session_id
    said = record.get("directory")
    return isinstance(said, str) and os.path.realpath(said) == os.path.realpath(cwd)


session_id = named_session


def timestamp(record: Record) -> float | None:
    created = record.get("time")
    return created / 1000 if isinstance(created, (int, float)) and created else None


def _texts(record: Record) -> list[str]:
    """Its text parts (not the ones OpenCode itself adds, marked synthetic)."""
    return [
        p["text"]
        for p in record.get("parts") or []
        if p.get("type") == "text" and isinstance(p.get("text"), str) and not p.get("synthetic")
    ]


def _role(record: Record) -> str | None:
    return (record.get("message") or {}).get("role")


def compaction(record: Record) -> dict | None:
    """The detail of the user-side message that asks for a compaction (`auto` when its
    context filled, else `/compact`), or None for any other."""
    if _role(record) != "user":
        return None
    for part in record.get("parts") or []:
        if part.get("type") == "compaction":
            return {"trigger": "auto" if part.get("auto") else "manual"}
    return None


def summary(record: Record) -> str | None:
    """The summary it made of what it compacted (the assistant's message marked `summary`), else None."""
    message = record.get("message") or {}
    if message.get("role") != "assistant" or message.get("summary") is not True:
        return None
    text = "\n".join(_texts(record)).strip()
    return text or None


def user_text(record: Record) -> str:
    """The text of a user's message, or "" for any other record (a compaction's request too)."""
    if _role(record) != "user" or compaction(record) is not None:
        return ""
    return "\n".join(_texts(record))


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (a slash command it runs itself is not a message)."""
    return [said for said in (user_text(r).strip() for r in records) if said]


def _tool(part: dict) -> list[str]:
    state: dict = part["state"] if isinstance(part.get("state"), dict) else {}
    args: dict = state["input"] if isinstance(state.get("input"), dict) else {}
    detail = args.get("command") or args.get("filePath") or args.get("path") or json.dumps(args)[:200]
    out = [f"● {part.get('tool')}({detail})"]
    if state.get("status") == "error":
        out.append(error_line(state.get("error")))
    return out


def as_lines(records: Iterable[Record]) -> list[str]:
    """The session as log lines: the messages, each tool call in one line, a failed tool's
    error and an API error (OpenCode records it on the assistant's message). Its compaction's
    summary is its own (kept as such), not the session's."""
    out: list[str] = []
    for r in records:
        role = _role(r) if summary(r) is None else None
        if role == "user":
            for text in _texts(r) if compaction(r) is None else []:
                out.extend(("> " if i == 0 else "  ") + line for i, line in enumerate(text.strip().splitlines()))
        elif role == "assistant":
            for part in r.get("parts") or []:
                if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"].strip():
                    out.extend(("● " if i == 0 else "  ") + line for i, line in enumerate(part["text"].strip().splitlines()))
                elif part.get("type") == "tool":
                    out.extend(_tool(part))
            error: Any = (r.get("message") or {}).get("error")
            if isinstance(error, dict):
                said = (error.get("data") or {}).get("message") if isinstance(error.get("data"), dict) else None
                out.append(error_line(said or error.get("name")))
    return out
