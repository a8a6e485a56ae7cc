"""Claude Code's transcript: a second, stronger channel than the screen.

Claude Code appends one JSON record per line to
`<config>/projects/<cwd with every non-alphanumeric character replaced by ->/<session>.jsonl`
(`<config>` is $CLAUDE_CONFIG_DIR, else ~/.claude). We follow the files written during our
session with watchdog, by byte offset, holding back a partial last line. A
`compact_boundary` record is a compaction that certainly happened (with its trigger and the
token count before it); the records' `sessionId` is what `claude --resume` needs.

The format is internal to Claude Code; records we do not understand are skipped.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

Record = dict
OnRecord = Callable[[Record, Path], None]


def config_dir(env: Mapping[str, str]) -> Path:
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".claude"


def project_dir(env: Mapping[str, str], cwd: str) -> Path:
    return config_dir(env) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)


def timestamp(record: Record) -> float | None:
    try:
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError, AttributeError):
        return None


# The watchdog events that can mean new data. inotify also reports every open and close, and
# our own read opens and closes the file: reading on those fed itself, one event per read,
# and burnt a whole core for as long as Claude Code sat idle.
NEW_DATA = frozenset({"modified", "created", "moved"})


class TranscriptFollower:
    """Follows every .jsonl in one project directory that grows after `start()`."""

    def __init__(self, directory: Path, on_record: OnRecord, poll: float = 1.0):
        self.directory = directory
        self.on_record = on_record
        self.poll = poll
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self._lock = threading.Lock()
        self._observer = None
        self._stop = threading.Event()
        self._waiter: threading.Thread | None = None
        self.reads = 0  # file reads so far (a test counts them)

    def start(self) -> None:
        # Files that exist now belong to earlier sessions: follow only what is added to them.
        for path in self._files():
            self._offsets[path] = path.stat().st_size
        if self.directory.is_dir():
            self._watch()
        else:  # Claude Code creates the folder with the first prompt; until then, look once a second
            self._waiter = threading.Thread(target=self._wait_for_directory, name="supervise-transcript-wait", daemon=True)
            self._waiter.start()

    def _files(self) -> list[Path]:
        return sorted(self.directory.glob("*.jsonl")) if self.directory.is_dir() else []

    def _wait_for_directory(self) -> None:
        while not self._stop.wait(self.poll):
            if self.directory.is_dir():
                self._watch()
                self.scan()
                return

    def _watch(self) -> None:
        from watchdog.events import FileSystemEventHandler  # here: the supervisor needs only project_dir
        from watchdog.observers import Observer

        follower = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                if event.event_type not in NEW_DATA or event.is_directory:
                    return
                path = Path(os.fsdecode(getattr(event, "dest_path", "") or event.src_path))
                if path.suffix == ".jsonl":
                    follower.read(path)

        observer = Observer()
        observer.schedule(Handler(), str(self.directory), recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def scan(self) -> None:
        for path in self._files():
            self.read(path)

    def read(self, path: Path) -> None:
        """Read what was appended since last time; several events per write are normal."""
        with self._lock:
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
            records = []
            for line in lines:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
        for record in records:
            if isinstance(record, dict):
                self.on_record(record, path)

    def stop(self) -> None:
        """Read what is left, then stop watching."""
        self._stop.set()
        self.scan()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(2)


def compaction(record: Record) -> dict | None:
    """The detail of a compact_boundary record, or None for any other record."""
    if record.get("type") != "system" or record.get("subtype") != "compact_boundary":
        return None
    meta = record.get("compactMetadata") or {}
    detail = {"trigger": meta.get("trigger")}
    if meta.get("preTokens") is not None:
        detail["pre_tokens"] = meta["preTokens"]
    return detail


# Claude Code 2.1.330 stores a pasted text inside these tags (also what the model is sent).
_PASTED = re.compile(r'\n*<pasted_content id="[^"]*">\n?(.*?)\n?</pasted_content id="[^"]*">\n*', re.DOTALL)


def user_text(record: Record) -> str:
    """The text of a `user` record (a typed prompt), or "" for tool results and the like;
    pasted parts as they were pasted."""
    content = (record.get("message") or {}).get("content")
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    if not isinstance(content, str):
        return ""
    return _PASTED.sub(lambda m: "\n" + m.group(1) + "\n", content).strip("\n") if "<pasted_content" in content else content
