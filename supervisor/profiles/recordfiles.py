"""How an agent keeps its own record of a conversation, as files to read: which files of
its folder hold records, and how to read those added since an offset (the follower in
detection/transcript.py reads them as they are written). JSON-lines files, appended to a line
at a time, are most agents'; a JSON file rewritten whole as the conversation goes is another
(`JsonFile`); an agent with another format says so in its `transcript` module's SOURCE."""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Callable, Iterable
from fnmatch import fnmatch
from pathlib import Path
from typing import Protocol

Record = dict


class Source(Protocol):
    """How an agent keeps its record: which files, and how to read what was added to one."""

    recursive: bool  # its files are in subfolders of the folder too
    # Seconds after a change to read once more: a write seen before it can be read (SQLite
    # makes a commit visible in its shared memory after the write that woke us; no event follows).
    again: float

    def followed(self, path: Path) -> Path | None:
        """The record file a change to `path` is a change of (None: not one)."""

    def end(self, path: Path) -> int:
        """The offset past what `path` holds now."""

    def read(self, path: Path, since: int = 0, stream: str | None = None) -> tuple[list[Record], int]:
        """The complete records of `path` after offset `since` (of one `stream` only, where a
        file holds several), and the offset reached; nothing, and `since`, if it cannot be read."""

    def stream(self, record: Record) -> str | None:
        """Which of a file's conversations `record` is of, where one file holds several (a
        database of every session); claims are then made per conversation."""


def parse(lines: Iterable[str | bytes]) -> list[Record]:
    """JSON lines to records; lines that are not JSON objects are skipped."""
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


class Lines:
    """Files appended to a line at a time, read by byte offset: a torn last line waits for
    its end. `parse` makes records of complete lines (JSON lines, by default)."""

    again = 0.0  # appended lines are there to read once the event comes

    def __init__(
        self, suffix: str = ".jsonl", recursive: bool = False, parse: Callable[[list[str]], list[Record]] = parse, name: str | None = None
    ):
        self.suffix, self.recursive, self.parse, self.name = suffix, recursive, parse, name

    def followed(self, path: Path) -> Path | None:
        return path if (path.name == self.name if self.name else path.name.endswith(self.suffix)) else None

    def end(self, path: Path) -> int:
        try:
            return path.stat().st_size
        except OSError:
            return 0

    def read(self, path: Path, since: int = 0, stream: str | None = None) -> tuple[list[Record], int]:
        try:
            with open(path, "rb") as fh:
                end = fh.seek(0, os.SEEK_END)
                fh.seek(min(since, end))
                data = fh.read()
        except OSError:
            return [], since
        complete = data[: data.rfind(b"\n") + 1]
        return self.records(complete.decode("utf-8", errors="replace").splitlines(), since, stream), min(since, end) + len(complete)

    def records(self, lines: list[str], since: int, stream: str | None) -> list[Record]:
        """The records of complete lines read from offset `since` (of `stream`, where that means one)."""
        return self.parse(lines)

    def stream(self, record: Record) -> str | None:
        return None


JSON_LINES = Lines()


COUNT = (1 << 32) - 1  # a JsonFile offset's low bits: how many messages were read


def _mark(key: str) -> int:
    """A message's fingerprint, in the bits of an offset above its count (it stays under 2**63: SQLite's integer)."""
    return (zlib.crc32(key.encode("utf-8", "replace")) & 0x7FFFFFFF) << 32


def _json_key(message: Record) -> str:
    return json.dumps(message, sort_keys=True, default=str)


def _always(message: Record) -> bool:
    return True


class JsonFile:
    """Files each holding one conversation as one JSON document, rewritten whole as it goes.
    `items` makes the parsed document a list of messages (each a dict record); the offset is
    how many were read, with a fingerprint of the last of them (its `key`) in the bits above
    the count. A rewrite is read from after the last message read, where that still is, and
    else from its start (a compaction that replaced the history with its summary): never
    past new messages because the count grew back. A file caught mid-write (not JSON) is read
    at its next change; a last message that is not `complete` yet (a tool call still running)
    waits."""

    again = 0.0  # each write is a change: the one that completes the file wakes us too

    def __init__(
        self,
        *names: str,
        recursive: bool = False,
        items: Callable[[object], list] = lambda data: data if isinstance(data, list) else [],
        key: Callable[[Record], str] = _json_key,
        complete: Callable[[Record], bool] = _always,
    ):
        """`names`: the globs a record file's name matches."""
        self.names, self.recursive, self.items, self.key, self.complete = names or ("*.json",), recursive, items, key, complete

    def followed(self, path: Path) -> Path | None:
        return path if any(fnmatch(path.name, name) for name in self.names) else None

    def messages(self, path: Path) -> list[Record] | None:
        """The complete messages `path` holds now; None if it cannot be read (or is mid-write)."""
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        found = [m for m in self.items(data) if isinstance(m, dict)]
        return found[:-1] if found and not self.complete(found[-1]) else found

    def offset(self, messages: list[Record]) -> int:
        return len(messages) | _mark(self.key(messages[-1])) if messages else 0

    def start(self, messages: list[Record], since: int) -> int:
        """Where the messages not read yet begin, for offset `since`: past those read, if the
        last of them is still where it was; else past where it is now; else (gone) the start."""
        count, mark = since & COUNT, since & ~COUNT
        if count == 0:
            return 0
        if count <= len(messages) and _mark(self.key(messages[count - 1])) == mark:
            return count
        for i in range(len(messages) - 1, -1, -1):
            if _mark(self.key(messages[i])) == mark:
                return i + 1
        return 0

    def end(self, path: Path) -> int:
        messages = self.messages(path)
        return self.offset(messages) if messages else 0

    def read(self, path: Path, since: int = 0, stream: str | None = None) -> tuple[list[Record], int]:
        messages = self.messages(path)
        if messages is None:
            return [], since
        return messages[self.start(messages, since) :], self.offset(messages)

    def stream(self, record: Record) -> str | None:
        return None


_ERROR = re.compile(r"error|exception|traceback|failed", re.I)


def error_line(text: object) -> str:
    """A failed tool's or call's output as one log line: the line of it that says what went
    wrong (else its first)."""
    lines = [line.strip() for line in str(text or "").strip().splitlines() if line.strip()]
    if not lines:
        return "  ⎿ Error"
    return "  ⎿ Error: " + next((line for line in lines if _ERROR.search(line)), lines[0])[:300]


def carried_or_here(record: Record, cwd: str, agent_session_id: str | None) -> bool:
    """Whether a record (one naming its `session` and the `cwd` it ran in) is a run's: the
    session it carries on, else one run in its folder."""
    if agent_session_id and record.get("session") == agent_session_id:
        return True
    said = record.get("cwd")
    return isinstance(said, str) and os.path.realpath(said) == os.path.realpath(cwd)


def named_session(record: Record) -> str | None:
    """The `session` a record names."""
    sid = record.get("session")
    return sid if isinstance(sid, str) and sid else None
