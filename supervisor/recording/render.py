"""The recorder's render thread: output in, the text log and the detector's events out.

The recorder's main thread hands every output chunk over (`output`); this thread feeds the
terminal emulator, appends finished lines to the text log, and runs the detector on what
appeared. Output waiting here is bounded (`BACKLOG_CAP`). Past it, under a flood, nothing
more is queued: this thread waits until the flood has passed, then reads what it missed
back from the recording, where it already is (`_catch_up`). The main thread, which writes
the recording, never waits for rendering, and while the flood lasts it has the CPU and the
GIL to itself (docs/benchmarks.md: passthrough under a flood).
Memory stays bounded and nothing is dropped; the text log and the detector are late by as
long as the flood lasts. Without a recording to read back (a full disk), `output` blocks
instead, and the PTY loop in turn stops reading the PTY. The pattern files are watched
and reloaded here too.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ..detection import limits, patterns
from ..detection.detector import Detector
from ..detection.patterns import PatternSet
from ..errors import SuperviseError
from ..plaintext import no_controls
from . import asciicast
from . import emulator as emulators
from .textlog import TextLog

_STOP = object()
_SPILL = object()  # what follows is read back from the recording, from this byte offset
_SCREEN = object()  # the screen as logical lines is wanted (payload: a Snapshot)
SNAPSHOT_WAIT = 2.0  # seconds a context round waits for it before taking the rows as they were
# Under a flood, rendering waits until nothing has been written for this long.
QUIET = 0.2
# Text waiting to be rendered. Past this, output is left in the recording and read back
# from there once the flood has passed: memory stays bounded under any flood.
BACKLOG_CAP = 8 << 20
# Output coming faster than this (characters a second, over RATE_WINDOW) is a flood that
# rendering cannot keep up with (plain lines render at ~21 MB/s): past FLOOD_CAP waiting,
# it is left in the recording at once, so that rendering does not take the CPU from the
# flood (peak memory under a 210 MB `cat` 92 MB, 113 MB with the 8 MB cap alone). Slower
# output keeps the whole backlog: 10 MB/s of it is detected within 4 ms.
FLOOD_RATE = 20e6
FLOOD_CAP = 1 << 20
RATE_WINDOW = 0.1
# Past this much queued output, rendering joins events to catch up (detail may be lost).
CATCH_UP = 256 << 10

# what a rendered frame means for the rest: (t, screen rows, detector)
OnFrame = Callable[[float, list[str], Detector], None]
Emit = Callable[[str, float, dict, str], object]


class Snapshot:
    """The screen, handed from the render thread to the one that asked."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.lines: list[str] = []


class Renderer:
    def __init__(
        self,
        log_file,
        emulator: str,
        width: int,
        height: int,
        *,
        agent: str | None,
        pattern_files: list[str],
        emit: Emit,
        fail: Callable[[str, BaseException], None],
        report: Callable[[str], None],
        now: Callable[[], float],
        cast_path: str | None = None,
    ):
        self._log = log_file
        self._cast_path = cast_path
        self._spilling = False
        self._written_to = 0  # the recording's end as far as output and resizes go
        self._log_broken = False
        self._told: set[str] = set()  # patterns turned off, said once each
        self.textlog = TextLog(emulators.make(emulator, width, height))
        self.agent = agent
        self.pattern_files = [Path(p) for p in pattern_files]
        self._emit = emit
        self._fail = fail
        self._report = report
        self._now = now
        self.on_frame: list[OnFrame] = []
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._backlog = 0
        self._flooding = False
        self._window = (time.monotonic(), 0)  # when the current rate window began, characters since
        self._room = threading.Condition()
        self._detect_lock = threading.Lock()
        self.detector = Detector(self._load_patterns())
        self._observer = self._watch_patterns() if agent else None
        self._thread = threading.Thread(target=self._work, name="supervise-render", daemon=True)
        self._thread.start()

    @property
    def pattern_set(self) -> PatternSet | None:
        return self.detector.patterns

    def screen(self) -> list[str]:
        """The screen as logical lines (soft-wrapped rows joined: a message typed past the
        window's width is one line), once everything queued before is rendered; from
        another thread. Far behind (a flood) it answers with the rows as they last were."""
        snapshot = Snapshot()
        self._queue.put((_SCREEN, 0.0, snapshot))
        if snapshot.ready.wait(SNAPSHOT_WAIT):
            return snapshot.lines
        return [row.text for row in list(self.textlog.rows)]

    # -- the main thread's side -----------------------------------------------------------------

    def output(self, t: float, text: str | bytes, span: tuple[int, int] | None = None) -> None:
        """Queue output for rendering (text, or ASCII bytes, decoded only if queued). `span`:
        where it lies in the recording; past the backlog it is read back from there later.
        Without one, blocks while the backlog is full."""
        self._measure(len(text))
        with self._room:
            if not self._spill(t, span):
                return
            while self._backlog > BACKLOG_CAP:
                self._room.wait()
            self._backlog += len(text)
        self._queue.put(("o", t, text.decode("ascii") if isinstance(text, bytes) else text))

    def resize(self, t: float, cols: int, rows: int, span: tuple[int, int] | None = None) -> None:
        with self._room:
            if not self._spill(t, span):
                return
        self._queue.put(("r", t, (cols, rows)))

    def _measure(self, chars: int) -> None:
        """The output's rate, over windows of RATE_WINDOW seconds: a flood or not."""
        began, count = self._window
        now = time.monotonic()
        count += chars
        if now - began >= RATE_WINDOW:
            self._flooding = count / (now - began) > FLOOD_RATE
            self._window = (now, 0)
        else:
            # A whole window's worth at the flood's rate before the window is out: a flood
            # now, not at the window's end (by then up to 8 MB waited: 113 MB peak at times).
            self._flooding = self._flooding or count > FLOOD_RATE * RATE_WINDOW
            self._window = (began, count)

    def _too_far(self, behind: int) -> bool:
        return behind > BACKLOG_CAP or (self._flooding and behind > FLOOD_CAP)

    def _spill(self, t: float, span: tuple[int, int] | None) -> bool:
        """Under `_room`: False if this event is left in the recording, to be read back."""
        if span is None or self._cast_path is None:
            return True
        self._written_to = span[1]
        if self._spilling:
            return False
        if self._too_far(self._backlog):
            self._spilling = True
            self._queue.put((_SPILL, t, span[0]))
            return False
        return True

    def finish(self) -> None:
        """Render what is queued, write the final screen, close the log; stop watching."""
        self._queue.put((_STOP, 0.0, None))
        self._thread.join()
        if self._observer is not None:
            self._observer.stop()

    # -- patterns --------------------------------------------------------------------------------

    def _load_patterns(self) -> PatternSet | None:
        if not self.agent:
            return None
        return patterns.select(patterns.load_all(self.pattern_files), self.agent)

    def reload_patterns(self) -> None:
        """A pattern file changed: use the new patterns, or keep the old ones if it is broken."""
        try:
            loaded = self._load_patterns()
        except SuperviseError as exc:
            self._report(f"{exc} (kept the previous patterns)")
            self._emit("patterns_error", self._now(), {"error": exc.message}, "patterns")
            return
        with self._detect_lock:
            self.detector.set_patterns(loaded)
        self._emit("patterns_reloaded", self._now(), {"patterns": len(loaded.patterns) if loaded else 0}, "patterns")

    def _watch_patterns(self):
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        renderer = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                path = os.fsdecode(getattr(event, "dest_path", "") or event.src_path)
                if path.endswith(".toml") and event.event_type in ("modified", "created", "moved", "deleted"):
                    renderer.reload_patterns()

        observer = Observer()
        watched = set()
        for path in patterns.watched_paths(self.pattern_files):
            folder = path if path.is_dir() else path.parent
            if folder.is_dir() and folder not in watched:
                observer.schedule(Handler(), str(folder), recursive=False)
                watched.add(folder)
        observer.daemon = True
        try:
            observer.start()
        except Exception as exc:
            self._fail("pattern watcher", exc)
            return None
        return observer

    # -- the render thread ---------------------------------------------------------------------

    def _work(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while True:  # when behind, take everything queued in one go
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                stop = self._render_batch(batch)
            except Exception as exc:
                self._fail("text log", exc)
                stop = any(code is _STOP for code, _, _ in batch)
        try:
            self._write_log(self.textlog.finish())
            self._log.close()
        except Exception as exc:
            self._fail("text log", exc)

    def _render_batch(self, batch: list, queued: bool = True) -> bool:
        """Feed output as it was recorded, one event at a time, so a line that was on screen
        for a moment (a spinner shown for 45 ms) is seen by the detector. Only when far
        behind are events joined, to catch up: queued ones past CATCH_UP, and always those
        read back from the recording (`queued` False: no backlog to count down)."""
        behind = not queued or sum(len(p) for code, _, p in batch if code == "o") > CATCH_UP
        pending: list[str] = []
        pending_t = 0.0
        stop = False
        for code, t, payload in batch:
            if code == "o":
                if not behind:
                    self._render(t, payload)
                    continue
                pending.append(payload)
                pending_t = t
                continue
            if pending:
                self._render(pending_t, "".join(pending), queued)
                pending = []
            if code == "r":
                self._write_log(self.textlog.resize(t, *payload).logged)
            elif code is _SPILL:
                self._catch_up(payload)
            elif code is _SCREEN:
                payload.lines = self.textlog.screen_lines()
                payload.ready.set()
            elif code is _STOP:
                stop = True
        if pending:
            self._render(pending_t, "".join(pending), queued)
        self._flush_log()
        return stop

    def _catch_up(self, at: int) -> None:
        """Render what a flood left in the recording from byte `at` on: first let the flood
        pass (the writer has the CPU meanwhile), then read it back, until everything written
        has been read; then output is queued again."""
        pos, rest, quiet_at = at, b"", None
        with open(self._cast_path, "rb") as fh:
            fh.seek(at)
            while True:
                with self._room:
                    written = self._written_to
                if self._too_far(written - pos) and written != quiet_at:  # the flood goes on
                    quiet_at = self._wait_for_quiet()
                chunk = fh.read(CATCH_UP)
                if chunk:
                    data = rest + chunk
                    cut = data.rfind(b"\n") + 1
                    rest = data[cut:]
                    pos += cut
                    self._replay(data[:cut])
                    continue
                with self._room:
                    if pos >= self._written_to:  # all of it read (the writer flushes each batch)
                        self._spilling = False
                        return
                time.sleep(0.02)  # written, not yet flushed

    def _wait_for_quiet(self) -> int:
        """Until nothing has been written for QUIET seconds; returns the end written then."""
        while True:
            with self._room:
                mark = self._written_to
            time.sleep(QUIET)
            with self._room:
                if self._written_to == mark:
                    return mark

    def _replay(self, lines: bytes) -> None:
        """Recorded events (lines of the `.cast`), rendered as a batch of queued ones is."""
        batch = []
        for line in lines.splitlines():
            event = asciicast.parse_event(line)
            if event is None:
                continue
            t, code, data = event
            if code == "o":
                batch.append(("o", t, data))
            elif code == "r" and (size := asciicast.resize_size(data)):
                batch.append(("r", t, size))
        self._render_batch(batch, queued=False)

    def _render(self, t: float, text: str, queued: bool = True) -> None:
        frame = self.textlog.feed(t, text)
        if queued:
            with self._room:
                self._backlog -= len(text)
                self._room.notify()
        self._write_log(frame.logged)
        try:
            self._detect(t, frame)
        except Exception as exc:
            self._fail("detector", exc)

    def _detect(self, t: float, frame) -> None:
        if self.detector.patterns is None:
            return
        screen = [row.text for row in self.textlog.rows]
        with self._detect_lock:
            found = self.detector.feed(t, frame.appeared, screen)
        for d in found:
            detail = d.detail()
            if d.kind == "limit_reached":
                detail.update(limits.reading(detail, datetime.now().astimezone()))
            self._emit(d.kind, d.t, detail, "regex")
        for why in self.detector.patterns.turned_off():
            if why not in self._told:
                self._told.add(why)
                self._report(f"supervise: {why}")
        for listener in self.on_frame:
            listener(t, screen, self.detector)

    def _write_log(self, lines: list[str]) -> None:
        if lines and not self._log_broken:
            # a log a person reads with `less` or `cat`: nothing in it may act on a terminal
            try:
                self._log.write(no_controls("\n".join(lines)) + "\n")
            except OSError as exc:  # a full disk: stop writing, or the unwritten text piles up in memory
                self._log_broken = True
                self._fail("text log", exc)

    def _flush_log(self) -> None:
        if not self._log_broken:
            try:
                self._log.flush()
            except OSError as exc:
                self._log_broken = True
                self._fail("text log", exc)
