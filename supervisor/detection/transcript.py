"""An agent's transcript: the JSON-lines files it writes of its own conversation, followed.

Every `.jsonl` in one folder (and its subfolders, for an agent that files them by date) that
grows after `start()` is read by byte offset, holding back a partial last line, with watchdog
(and, until the folder exists, a look once a second). What a record means is the agent's
profile's to say (its `transcript` module); records that are not JSON objects are skipped. A
folder every session of the agent writes to is shared with other sessions: `claims` says, from
a file's records, whether it is this session's (a file it refuses is not read again).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

Record = dict
OnRecord = Callable[[Record, Path], None]
# A file's record -> True (the file is this session's), False (another's), None (not known yet).
Claims = Callable[[Record, Path], "bool | None"]


# The watchdog events that can mean new data. inotify also reports every open and close, and
# our own read opens and closes the file: reading on those fed itself, one event per read,
# and burnt a whole core for as long as the agent sat idle.
NEW_DATA = frozenset({"modified", "created", "moved"})


class TranscriptFollower:
    """Follows every .jsonl in one folder that grows after `start()`."""

    def __init__(self, directory: Path, on_record: OnRecord, poll: float = 1.0, recursive: bool = False, claims: Claims | None = None):
        self.directory = directory
        self.on_record = on_record
        self.poll = poll
        self.recursive = recursive
        self.claims = claims
        self._owned: dict[Path, bool] = {}
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self._lock = threading.Lock()
        self._observer: BaseObserver | None = None
        self._stop = threading.Event()
        self._waiter: threading.Thread | None = None
        self.reads = 0  # file reads so far (a test counts them)

    def start(self) -> None:
        # Files that exist now belong to earlier sessions: follow only what is added to them.
        for path in self._files():
            self._offsets[path] = path.stat().st_size
        if self.directory.is_dir():
            self._watch()
        else:  # the agent may create the folder with its first prompt; until then, look once a second
            self._waiter = threading.Thread(target=self._wait_for_directory, name="supervise-transcript-wait", daemon=True)
            self._waiter.start()

    def _files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.rglob("*.jsonl") if self.recursive else self.directory.glob("*.jsonl"))

    def _wait_for_directory(self) -> None:
        while not self._stop.wait(self.poll):
            if self.directory.is_dir():
                self._watch()
                self.scan()
                return

    def _watch(self) -> None:
        from watchdog.events import FileSystemEventHandler  # here: only the recorder follows a transcript
        from watchdog.observers import Observer

        follower = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                if event.event_type not in NEW_DATA:
                    return
                path = Path(os.fsdecode(getattr(event, "dest_path", "") or event.src_path))
                if event.is_directory:
                    # a new dated folder: what was written before it was watched is read now
                    if follower.recursive and event.event_type != "modified":
                        for found in sorted(path.rglob("*.jsonl")):
                            follower.read(found)
                    return
                if path.suffix == ".jsonl":
                    follower.read(path)

        observer = Observer()
        observer.schedule(Handler(), str(self.directory), recursive=self.recursive)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def scan(self) -> None:
        for path in self._files():
            self.read(path)

    def read(self, path: Path) -> None:
        """Read what was appended since last time; several events per write are normal."""
        with self._lock:
            if self._owned.get(path) is False:
                return  # another session's
            offset = self._offsets.get(path, 0)
            self.reads += 1
            try:
                with open(path, "rb") as fh:
                    fh.seek(offset)
                    data = fh.read()
            except OSError:
                return
            if not data:
                return
            self._offsets[path] = offset + len(data)
            data = self._partial.pop(path, b"") + data
            *lines, rest = data.split(b"\n")
            if rest:
                self._partial[path] = rest
            records = self._claimed(path, parse(lines))
        for record in records:
            self.on_record(record, path)

    def _claimed(self, path: Path, records: list[Record]) -> list[Record]:
        """The records of `path` that are this session's: all of a file claimed, none of one refused."""
        if self.claims is None:
            return records
        owned = self._owned.get(path)
        if owned is None:
            for i, record in enumerate(records):
                owned = self.claims(record, path)
                if owned is not None:
                    self._owned[path] = owned
                    return records[i:] if owned else []
            return []
        return records if owned else []

    def stop(self) -> None:
        """Read what is left, then stop watching."""
        self._stop.set()
        self.scan()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(2)


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


def read_since(path: Path, since: int = 0) -> tuple[list[Record], int]:
    """The complete records of one transcript file from byte `since` on, and the offset
    reached (a torn last line is read next time); nothing, and `since`, if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            fh.seek(min(since, end))
            data = fh.read()
    except OSError:
        return [], since
    complete = data[: data.rfind(b"\n") + 1]
    return parse(complete.decode("utf-8", errors="replace").splitlines()), min(since, end) + len(complete)
