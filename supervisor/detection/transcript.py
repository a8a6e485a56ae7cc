"""An agent's own record of its conversation, followed.

Where it is kept is the agent's: JSON-lines files (most), a text file it appends to, a SQLite
database. A `Source` says which files of one folder (and its subfolders, for an agent that files
them by date) hold records and how to read those added since an offset; `TranscriptFollower`
reads what was added after `start()`, when a watch of the folder (fswatch.py) tells a change (and, until the folder exists, a look
once a second). What a record means is the agent's profile's to say (its `transcript` module). A
folder (or a database) every session of the agent writes to is shared with other sessions:
`claims` says, from a record, whether its file (or, in a database, its session) is this
session's; one refused is not read again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from .. import fswatch
from ..profiles.recordfiles import JSON_LINES, Record, Source

OnRecord = Callable[[Record, Path], None]
# A file's record -> True (the file is this session's), False (another's), None (not known yet).
Claims = Callable[[Record, Path], "bool | None"]


# The changes that can mean new data (fswatch tells no opens or closes: our own reads fed
# themselves on those, and burnt a whole core for as long as the agent sat idle).
NEW_DATA = frozenset({"modified", "created", "moved"})


class TranscriptFollower:
    """Follows the record files of one folder that grow after `start()`."""

    def __init__(self, directory: Path, on_record: OnRecord, poll: float = 1.0, source: Source = JSON_LINES, claims: Claims | None = None):
        self.directory = directory
        self.on_record = on_record
        self.poll = poll
        self.source = source
        self.claims = claims
        # (file, conversation) -> whether it is this session's; a file's whole, where it holds one
        self._owned: dict[tuple[Path, str | None], bool] = {}
        self._mine: dict[Path, str] = {}  # the conversation of a shared file claimed: only it is read
        self._offsets: dict[Path, int] = {}
        self._again: dict[Path, threading.Timer] = {}
        self._lock = threading.Lock()
        self._observer: fswatch.Watch | None = None
        self._stop = threading.Event()
        self._waiter: threading.Thread | None = None
        self.reads = 0  # file reads so far (a test counts them)

    def start(self) -> None:
        # What the files hold now is earlier sessions': follow only what is added to them.
        for path in self._files():
            self._offsets[path] = self.source.end(path)
        if self.directory.is_dir():
            self._watch()
        else:  # the agent may create the folder with its first prompt; until then, look once a second
            self._waiter = threading.Thread(target=self._wait_for_directory, name="supervise-transcript-wait", daemon=True)
            self._waiter.start()

    def _files(self, top: Path | None = None) -> list[Path]:
        top = top or self.directory
        if not top.is_dir():
            return []
        found = top.rglob("*") if self.source.recursive else top.glob("*")
        return sorted({p for p in map(self.source.followed, found) if p is not None and p.is_file()})

    def _wait_for_directory(self) -> None:
        while not self._stop.wait(self.poll):
            if self.directory.is_dir():
                self._watch()
                self.scan()
                return

    def _watch(self) -> None:
        def changed(name: str, is_dir: bool, kind: str) -> None:
            if kind not in NEW_DATA:
                return
            path = Path(name)
            if is_dir:
                # a new dated folder: what was written before it was watched is read now
                if self.source.recursive and kind != "modified":
                    for found in self._files(path):
                        self.read(found)
                return
            followed = self.source.followed(path)
            if followed is not None:
                self.read(followed)
                self._read_again(followed)

        if self._stop.is_set():
            return  # stopped while it started
        watch = fswatch.Watch(changed, "supervise-transcript")
        watch.add(self.directory, recursive=self.source.recursive)
        watch.start()
        self._observer = watch

    def _read_again(self, path: Path) -> None:
        """Once more, `source.again` seconds after a change (one pending read a file)."""
        if not self.source.again:
            return
        with self._lock:
            if path in self._again or self._stop.is_set():
                return
            timer = self._again[path] = threading.Timer(self.source.again, self._again_due, (path,))
        timer.daemon = True
        timer.start()

    def _again_due(self, path: Path) -> None:
        with self._lock:
            self._again.pop(path, None)
        self.read(path)

    def scan(self) -> None:
        for path in self._files():
            self.read(path)

    def read(self, path: Path) -> None:
        """Read what was added since last time; several events per write are normal. Several
        threads read (the watcher's, a read again, the first scan): the records are handed
        over under the read's lock, so they arrive in the order they were written, and
        `on_record` only hands them over (a queue's append)."""
        with self._lock:
            if self._owned.get((path, None)) is False:
                return  # another session's
            self.reads += 1
            records, self._offsets[path] = self.source.read(path, self._offsets.get(path, 0), self._mine.get(path))
            for record in self._claimed(path, records):
                self.on_record(record, path)

    def _claimed(self, path: Path, records: list[Record]) -> list[Record]:
        """The records of `path` that are this session's: all of a file (or a conversation of
        one) claimed, none of one refused."""
        if self.claims is None:
            return records
        out = []
        for record in records:
            key = (path, self.source.stream(record))
            owned = self._owned.get(key)
            if owned is None:
                owned = self.claims(record, path)
                if owned is None:
                    continue  # not known yet: a later record says
                self._owned[key] = owned
                if owned and key[1] is not None:
                    self._mine.setdefault(path, key[1])
            if owned:
                out.append(record)
        return out

    def stop(self) -> None:
        """Read what is left, then stop watching."""
        self._stop.set()
        with self._lock:
            pending, self._again = list(self._again.values()), {}
        for timer in pending:
            timer.cancel()
        self.scan()
        if self._observer is not None:
            self._observer.stop()
