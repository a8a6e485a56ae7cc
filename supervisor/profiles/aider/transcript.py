"""Aider's chat history, read: its own record of a conversation, beside the screen.

Aider appends every chat to one Markdown file in the project, `.aider.chat.history.md` at the
root of its git repository (the folder it runs in, outside one): a chat begins with
`# aider chat started at YYYY-MM-DD HH:MM:SS`; the user's words are lines beginning `#### `
(a message of several lines, one each, written together); what it tells the user (tool output,
warnings, errors) are lines beginning `> `; its replies are the plain text between. Its own
summaries of the chat it compacts are not written there. A record here is one message (or one
run of `> ` lines); a chat is its start line's time (`claims`: the chat that starts after the
run began is the run's; one Aider at a time in a repository). `--chat-history-file` elsewhere
is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from ..recordfiles import Lines

Record = dict
FILE = ".aider.chat.history.md"
_START = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")


def _kind(line: str) -> tuple[str, str]:
    m = _START.match(line)
    if m:
        return "start", m.group(1)
    if line.startswith("####"):
        return "user", line[5:] if line.startswith("#### ") else line[4:]
    if line.startswith(">"):
        return "tool", line[2:] if line.startswith("> ") else line[1:]
    return ("blank" if not line.strip() else "assistant"), line


def parse(lines: list[str], chat: str | None = None) -> list[Record]:
    """Lines of the history to records, each of the chat `chat` until a start line begins
    another. A run of lines of one kind is one record; blank lines end the user's message and a
    run of `> ` lines (as Markdown, the lines right after a `> ` line are quoted too), and
    belong to a reply."""
    records: list[Record] = []
    for raw in lines:
        kind, text = _kind(raw.rstrip("\n"))
        text = text.removesuffix("  ")  # its Markdown line break
        if kind == "start":
            chat = text
            records.append({"kind": "start", "chat": chat, "text": text})
            continue
        last = records[-1] if records else None
        if kind == "assistant" and last is not None and last["kind"] == "tool" and not last.get("closed"):
            kind = "tool"  # a message of several lines it told the user: "> " begins only the first
        if kind == "blank":
            if last is not None and last["kind"] == "assistant":
                last["lines"].append("")
            elif last is not None:
                last["closed"] = True
            continue
        if last is not None and last["kind"] == kind and not last.get("closed"):
            last["lines"].append(text)
        else:
            records.append({"kind": kind, "chat": chat, "lines": [text]})
    for r in records:
        r.pop("closed", None)
        if "lines" in r:
            r["text"] = "\n".join(r.pop("lines")).strip()
    return records


class History(Lines):
    """The history file: lines, the chat of each record told by the start line before it (a
    read from the middle of the file carries on the chat asked for)."""

    def __init__(self) -> None:
        super().__init__(name=FILE)

    def records(self, lines: list[str], since: int, stream: str | None) -> list[Record]:
        records = parse(lines, stream if since else None)
        return [r for r in records if stream is None or r["chat"] == stream]

    def stream(self, record: Record) -> str | None:
        return record.get("chat")


SOURCE = History()


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """The root of the git repository `cwd` is in (where it keeps the file), else `cwd`."""
    here = Path(cwd)
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


def locate(top: Path, agent_session_id: str) -> Path | None:
    path = top / FILE
    return path if path.is_file() else None


def claims(record: Record, path: Path, cwd: str, agent_session_id: str | None) -> bool | None:
    """A chat that starts after the run began is the run's (None until its start line is read)."""
    return True if record.get("kind") == "start" else None


def session_id(record: Record) -> str | None:
    return record.get("chat") if record.get("kind") == "start" else None


def timestamp(record: Record) -> float | None:
    if record.get("kind") != "start":
        return None
    try:  # its local time
        return datetime.strptime(record["chat"], "%Y-%m-%d %H:%M:%S").timestamp()
    except (KeyError, ValueError):
        return None


def compaction(record: Record) -> dict | None:
    return None  # not written to the history (its screen tells)


def summary(record: Record) -> str | None:
    return None


def user_text(record: Record) -> str:
    return record.get("text", "") if record.get("kind") == "user" else ""


def user_messages(records: Iterable[Record]) -> list[str]:
    """What the user typed, in order (its own commands, `/...`, are recorded as typed)."""
    return [said for said in (user_text(r).strip() for r in records) if said and not said.startswith("/")]


# What it tells the user of the files and commands it works with, as the tool calls they are.
_ACTS = (
    (re.compile(r"^Applied edit to (\S.*)$"), "Edit"),
    (re.compile(r"^Added (\S.*?) to the chat\b"), "Read"),
    (re.compile(r"^Running (\S.*)$"), "Bash"),
)


def _told(line: str) -> str:
    for pattern, act in _ACTS:
        m = pattern.match(line)
        if m:
            return f"● {act}({m.group(1)})"
    return "  ⎿ " + line


def as_lines(records: Iterable[Record]) -> list[str]:
    """The session as log lines: the user's messages, its replies, what it told the user (an
    edit applied, a file added, a command run as the tool call each is)."""
    out: list[str] = []
    marks = {"user": ("> ", "  "), "assistant": ("● ", "  ")}
    for r in records:
        kind, text = r.get("kind"), r.get("text")
        if not text:
            continue
        if kind == "tool":
            out.extend(_told(line) for line in text.splitlines())
        elif kind in marks:
            first, rest = marks[kind]
            out.extend((first if i == 0 else rest) + line for i, line in enumerate(text.splitlines()))
    return out
