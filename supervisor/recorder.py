"""Everything the PTY loop hands off: recording, events, rendering. Runs on two threads.

The loop calls the `Sink` methods, which only put items on a queue. The record thread
decodes output, appends it to the .cast file (flushed after every batch, so a `kill -9`
loses at most the last fraction of a second), stores events in SQLite, and forwards text
to the render thread. The render thread feeds the terminal emulator, appends finished
lines to the text log and tells listeners (the detector) what appeared on screen. If
rendering falls behind, it takes everything queued in one go; the loop never waits for it.
A failure in either thread is reported once and the session goes on recording what it can.
"""

from __future__ import annotations

import codecs
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import asciicast, emulator as emulators, paths
from .store import Event, Store, utcnow
from .termmodes import ModeTracker
from .textlog import Frame, TextLog

FrameListener = Callable[[float, Frame], None]
_STOP = object()


@dataclass
class RecorderConfig:
    session_id: str
    db_path: Path
    cast_path: Path
    log_path: Path
    header: asciicast.Header
    emulator: str = emulators.DEFAULT_EMULATOR


class Recorder:
    def __init__(self, config: RecorderConfig, on_error: Callable[[str], None] | None = None):
        self.config = config
        self.modes = ModeTracker()
        self.listeners: list[FrameListener] = []
        self._on_error = on_error or (lambda msg: print(msg, file=sys.stderr))
        self._errors: set[str] = set()
        self._record_q: queue.SimpleQueue = queue.SimpleQueue()
        self._render_q: queue.SimpleQueue = queue.SimpleQueue()
        self._out_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._in_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._cast = asciicast.Writer(paths.open_private(config.cast_path, "w", encoding="utf-8"), config.header)
        self._log = paths.open_private(config.log_path, "w", encoding="utf-8")
        self.textlog = TextLog(emulators.make(config.emulator, config.header.width, config.header.height))
        self.bytes_rendered = 0
        self._threads = [
            threading.Thread(target=self._record_worker, name="supervise-record", daemon=True),
            threading.Thread(target=self._render_worker, name="supervise-render", daemon=True),
        ]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    # -- Sink: called on the PTY loop; must not block ------------------------------------------

    def output(self, t: float, data: bytes) -> None:
        self._record_q.put(("o", t, data))

    def input(self, t: float, data: bytes) -> None:
        self._record_q.put(("i", t, data))

    def resize(self, t: float, cols: int, rows: int) -> None:
        self._record_q.put(("r", t, (cols, rows)))

    def signal(self, t: float, signum: int) -> None:
        import signal as _signal

        self.event(t, "signal", {"signal": _signal.Signals(signum).name})

    # -- from any thread --------------------------------------------------------------------------

    def event(self, t: float, kind: str, detail: dict[str, Any] | None = None, marker: bool = False) -> None:
        """Store an event; with `marker`, also put an `m` marker into the .cast file."""
        self._record_q.put(("e", t, (kind, detail or {}, marker)))

    def close(self, timeout: float | None = None) -> None:
        """Flush everything, write the final screen to the text log, stop the threads."""
        self._record_q.put((_STOP, 0.0, None))
        deadline = None if timeout is None else time.monotonic() + timeout
        for t in self._threads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    # -- threads ----------------------------------------------------------------------------------

    def _fail(self, where: str, exc: BaseException) -> None:
        if where not in self._errors:
            self._errors.add(where)
            self._on_error(f"supervise: {where} failed ({exc}); the session goes on")

    def _record_worker(self) -> None:
        store = None
        try:
            store = Store(self.config.db_path)
        except Exception as exc:  # the recording matters more than the events table
            self._fail("event store", exc)
        try:
            while True:
                batch = [self._record_q.get()]
                while True:
                    try:
                        batch.append(self._record_q.get_nowait())
                    except queue.Empty:
                        break
                events, stop = self._record_batch(batch)
                if events and store is not None:
                    try:
                        store.add_events(self.config.session_id, events)
                    except Exception as exc:
                        self._fail("event store", exc)
                if stop:
                    break
        finally:
            self._render_q.put((_STOP, 0.0, None))
            try:
                self._cast.close()
            except OSError as exc:
                self._fail("recording", exc)
            if store is not None:
                store.close()

    def _record_batch(self, batch: list) -> tuple[list[Event], bool]:
        events: list[Event] = []
        stop = False
        for code, t, payload in batch:
            try:
                if code is _STOP:
                    text = self._out_decoder.decode(b"", final=True)
                    if text:
                        self._cast.write(t, "o", text)
                        self._render_q.put(("o", t, text))
                    stop = True
                elif code == "o":
                    text = self._out_decoder.decode(payload)
                    if text:
                        self._cast.write(t, "o", text)
                        self.modes.feed(text)
                        self._render_q.put(("o", t, text))
                elif code == "i":
                    text = self._in_decoder.decode(payload)
                    if text:
                        self._cast.write(t, "i", text)
                elif code == "r":
                    cols, rows = payload
                    self._cast.write(t, "r", f"{cols}x{rows}")
                    self._render_q.put(("r", t, payload))
                elif code == "e":
                    kind, detail, marker = payload
                    if marker:
                        self._cast.write(t, "m", kind)
                    events.append(Event(kind, detail, t, utcnow()))
            except Exception as exc:
                self._fail("recording", exc)
        try:
            self._cast.flush()
        except OSError as exc:
            self._fail("recording", exc)
        return events, stop

    def _render_worker(self) -> None:
        stop = False
        while not stop:
            batch = [self._render_q.get()]
            while True:
                try:
                    batch.append(self._render_q.get_nowait())
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

    def _render_batch(self, batch: list) -> bool:
        pending: list[str] = []
        pending_t = 0.0
        stop = False
        for code, t, payload in batch:
            if code == "o":
                pending.append(payload)
                pending_t = t
                continue
            if pending:
                self._render(pending_t, "".join(pending))
                pending = []
            if code == "r":
                frame = self.textlog.resize(t, *payload)
                self._write_log(frame.logged)
            elif code is _STOP:
                stop = True
        if pending:
            self._render(pending_t, "".join(pending))
        self._log.flush()
        return stop

    def _render(self, t: float, text: str) -> None:
        frame = self.textlog.feed(t, text)
        self.bytes_rendered += len(text)
        self._write_log(frame.logged)
        for listener in self.listeners:
            try:
                listener(t, frame)
            except Exception as exc:
                self._fail("detector", exc)

    def _write_log(self, lines: list[str]) -> None:
        if lines:
            self._log.write("\n".join(lines) + "\n")
