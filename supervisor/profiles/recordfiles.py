"""How an agent keeps its own record of a conversation, as files to read: which files of
its folder hold records, and how to read those added since an offset (the follower in
detection/transcript.py reads them as they are written). JSON-lines files, appended to a line
at a time, are most agents'; an agent with another format says so in its `transcript`
module's SOURCE."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
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
