"""The recorder's render thread: output in, the text log and what the screen means out.

The recorder's main thread hands every output chunk over (`output`); this thread feeds the
terminal emulator, appends finished lines to the text log, and has each frame detected
(detect.py). How much output may wait here, and what a flood leaves in the recording
instead, is flood.py's; reading that back, readback.py's; the pattern files, watched and
reloaded, patternwatch.py's. Memory stays bounded and nothing is dropped; during a flood
the text log and the detector are late by as long as it lasts.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path

from ..detection.detector import Detector
from ..detection.patterns import PatternSet
from ..plaintext import no_controls
from . import emulator as emulators
from . import patternwatch, readback
from .detect import Call, Detect, Emit, OnFrame
from .flood import CATCH_UP, LEFT, QUEUE, Flood
from .textlog import TextLog

_STOP = object()
_SPILL = object()  # what follows is read back from the recording, from this byte offset
_SCREEN = object()  # the screen as logical lines is wanted (payload: a Snapshot)
SNAPSHOT_WAIT = 2.0  # seconds a context round waits for it before taking the rows as they were


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
        call: Call,
        fail: Callable[[str, BaseException], None],
        report: Callable[[str], None],
        now: Callable[[], float],
        cast_path: str | None = None,
    ):
        self._log = log_file
        self.lines_to: Callable[[list[str]], None] | None = None  # told each batch of lines logged
        self.written: Callable[[], None] | None = None  # told once lines logged are flushed
        self._unflushed = False
        self._cast_path = cast_path
        self._log_broken = False
        self._fail = fail
        self.textlog = TextLog(emulators.make(emulator, width, height))
        self.flood = Flood(readable=cast_path is not None)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        files = [Path(p) for p in pattern_files]
        self.detector = Detector(patternwatch.load(agent, files))
        self.detect = Detect(self.detector, emit=emit, call=call, report=report, fail=fail)
        self.patterns = (
            patternwatch.PatternWatch(agent, files, self.detector, emit=emit, report=report, now=now, fail=fail) if agent else None
        )
        self._thread = threading.Thread(target=self._work, name="supervise-render", daemon=True)
        self._thread.start()

    @property
    def pattern_set(self) -> PatternSet | None:
        return self.detector.patterns

    def subscribe(self, name: str, on_frame: OnFrame) -> None:
        """Tell `on_frame` of each frame the detector has seen, on the events thread."""
        self.detect.subscribe(name, on_frame)

    def screen(self) -> list[str]:
        """The screen as logical lines (soft-wrapped rows joined: a message typed past the
        window's width is one line), once everything queued before is rendered; from
        another thread. Far behind (a flood) it answers with the rows as they last were."""
        snapshot = Snapshot()
        self._queue.put((_SCREEN, 0.0, snapshot))
        if snapshot.ready.wait(SNAPSHOT_WAIT):
            return snapshot.lines
        return self.textlog.row_texts()

    # -- the main thread's side -----------------------------------------------------------------

    def output(self, t: float, text: str | bytes, span: tuple[int, int] | None = None) -> None:
        """Queue output for rendering (text, or ASCII bytes, decoded only if queued). `span`:
        where it lies in the recording; past the backlog it is read back from there later.
        Without one, blocks while the backlog is full."""
        at = self.flood.admit(t, len(text), span)
        if at == QUEUE:
            self._queue.put(("o", t, text.decode("ascii") if isinstance(text, bytes) else text))
        elif at != LEFT:
            self._queue.put((_SPILL, t, at))

    def resize(self, t: float, cols: int, rows: int, span: tuple[int, int] | None = None) -> None:
        at = self.flood.admit(t, 0, span)
        if at == QUEUE:
            self._queue.put(("r", t, (cols, rows)))
        elif at != LEFT:
            self._queue.put((_SPILL, t, at))

    def finish(self) -> None:
        """Render what is queued, write the final screen, close the log; stop watching."""
        self._queue.put((_STOP, 0.0, None))
        self._thread.join()
        if self.patterns is not None:
            self.patterns.stop()

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
        read back from the recording (`queued` False: no backlog to count down). Each step
        is guarded on its own: one that fails is reported and the rest of the batch goes on."""
        behind = not queued or sum(len(p) for code, _, p in batch if code == "o") > CATCH_UP
        pending: list[str] = []
        pending_t = 0.0
        stop = False
        for code, t, payload in batch:
            if code == "o":
                if not behind:
                    self._step(self._render, t, payload)
                    continue
                pending.append(payload)
                pending_t = t
                continue
            if pending:
                self._step(self._render, pending_t, "".join(pending), queued)
                pending = []
            if code == "r":
                self._step(lambda t, size: self._write_log(self.textlog.resize(t, *size).logged), t, payload)
            elif code is _SPILL:
                assert self._cast_path is not None  # output spills only with a span in the recording
                self._step(readback.catch_up, self._cast_path, payload, self.flood, self._render_behind)
            elif code is _SCREEN:
                self._step(self._snapshot, payload)
            elif code is _STOP:
                stop = True
        if pending:
            self._step(self._render, pending_t, "".join(pending), queued)
        self._step(self.detect.flush)
        self._flush_log()
        return stop

    def _step(self, work: Callable, *args) -> None:
        try:
            work(*args)
        except Exception as exc:
            self._fail("text log", exc)

    def _snapshot(self, snapshot: Snapshot) -> None:
        try:
            snapshot.lines = self.textlog.screen_lines()
        finally:
            snapshot.ready.set()

    def _render_behind(self, batch: list) -> None:
        self._render_batch(batch, queued=False)

    def _render(self, t: float, text: str, queued: bool = True) -> None:
        frame = self.textlog.feed(t, text)
        if queued:
            self.flood.rendered(len(text))
        self._write_log(frame.logged)
        if self.detector.patterns is None:
            return
        try:
            self.detect.frame(t, frame.appeared, self.textlog.row_texts())
        except Exception as exc:
            self._fail("detector", exc)

    def _write_log(self, lines: list[str]) -> None:
        if lines and not self._log_broken:
            # a log a person reads with `less` or `cat`: nothing in it may act on a terminal
            if self.lines_to is not None:
                self.lines_to(lines)
            try:
                self._log.write(no_controls("\n".join(lines)) + "\n")
                self._unflushed = True
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
        if self._unflushed and self.written is not None:
            self.written()
        self._unflushed = False
