"""The recorder process: everything the PTY loop hands off, on the other core.

The supervisor starts it with `python -P -m supervisor.run.recorder CONFIG_FILE IN OUT` and feeds
it frames over a pipe (channel.py). Its main thread decodes output, appends it to the .cast
file (flushed after every read, so at most a fraction of a second is ever in flight),
stores the loop's events and tracks terminal modes, and hands output to the render thread
(recording/render.py: text log, detector). The context keeper (contexts/keeper.py) and the
giving back of the context (giveback/delivery.py) run here too, each on threads of their
own; this module makes them, and run/wiring.py says who hears what on which thread.
If the pipe closes without an END frame, the supervisor died: what came is still written, the session marked interrupted.

A failure in a side channel (events, a subscriber, the text log, contexts) is said once as it
happens and counted each time (its detail in recorder.err); a part that failed again is said
once more, with its count, as the session ends. The rest goes on.
"""

from __future__ import annotations

import codecs
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from .. import channel, config, paths, profiles
from ..channel import Compacted, Done, Error, Injected, Message, Modes, Note, RecorderConfig
from ..contexts import lastround
from ..contexts.keeper import ContextKeeper, Session as KeeperSession
from ..contexts.schema import quoted
from ..giveback import hookserver
from ..giveback.delivery import GiveBack
from ..memory import brief, embedder
from ..recording import asciicast
from ..recording.logindex import Indexer
from ..recording.render import Renderer
from ..status.statewatch import StateWatch
from ..store.database import ACTIVE, INTERRUPTED, Store
from ..store.events import EventSink
from ..terminal.termmodes import ModeTracker
from . import recorderlife, telemetrywire, wiring
from .agentrecord import AgentRecord
from .failures import Failures


T = TypeVar("T")
GIVE_WAY = 0.05  # seconds the search index waits, before each write, for the events to be written


class Recorder:
    def __init__(
        self,
        cfg: RecorderConfig,
        settings: config.Settings,
        report: Callable[[str], None] | None = None,
        send: Callable[[Message], None] | None = None,
    ):
        self.config = cfg
        self._send = send or (lambda message: None)
        self._report = report or (lambda msg: print(msg, file=sys.stderr))
        self.failures = Failures(self._report, Path(cfg.db_path), Path(cfg.cast_path).parent / "recorder.err")
        self.modes = ModeTracker()
        self.output_chars = 0
        self._out_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._in_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        h = cfg.header
        header = asciicast.Header(h["width"], h["height"], h["timestamp"], h.get("command"), h.get("title"), h.get("env"))
        self._cast = asciicast.Writer(paths.open_private(Path(cfg.cast_path), "wb"), header)
        self._cast_lock = threading.Lock()  # the render thread writes markers too: never wait while holding it
        self._cast_lost: list | None = None  # [when the recording stopped, characters not recorded since]
        self._store = self._open_store()
        carries_on = bool(cfg.resume_from) and not cfg.handoff_from  # (its agent draws that session again)
        self.sink = EventSink(self._open_store(), cfg.session_id, self._marker, self.failures, cfg.start_monotonic, carries_on)
        row = self._read(lambda store: store.get_session(cfg.session_id), None) or {}
        names = {"id": cfg.session_id, "name": row.get("name"), "agent": cfg.agent}  # for notices
        project = (row.get("project"), row.get("project_key"))
        self.telemetry = telemetrywire.make(cfg, settings, project, self._now, self._report)
        self.renderer = Renderer(
            paths.open_private(Path(cfg.log_path), "w", encoding="utf-8"),
            cfg.emulator,
            h["width"],
            h["height"],
            agent=cfg.agent,
            pattern_files=cfg.pattern_files,
            emit=self.sink.emit,
            call=self.sink.call,
            fail=self.failures,
            report=self._report,
            now=self._now,
            cast_path=cfg.cast_path,
        )
        self.states: StateWatch | None = None
        if cfg.agent:
            self.states = StateWatch(self.sink, cfg.started_wall, names, settings.notify, self.failures, self._send)
        self.keeper: ContextKeeper | None = None
        self.giveback: GiveBack | None = None
        contexts_back = cfg.contexts and cfg.inject != "off"
        listener = hookserver.adopted(cfg.hook_fd, keep=bool(cfg.agent and contexts_back))
        if cfg.agent and (contexts_back or settings.limits.on_limit == "wait"):
            self.giveback = GiveBack(
                cfg.inject if contexts_back else "off",
                hook_socket=cfg.hook_socket if contexts_back else None,
                hook_listener=listener,
                door_file=cfg.door_file if contexts_back else None,
                door_at_prompt=contexts_back and bool(cfg.hook_socket) and profiles.get(cfg.agent).door_at_prompt,
                hook_wait=settings.hook_wait,
                send=self._send,
                record=lambda kind, t, detail: self.sink.emit(kind, t, detail, detail.get("channel") or "limits"),
                compaction_seen=lambda kind, t, detail: self.sink.emit(kind, t, detail, "hook"),
                door_said=self._door_said,
                now=self._now,
                paste_mode=lambda: self.modes.private.get("2004") == "h",
                fail=self.failures,
                limits=settings.limits,
                name=names["name"],
            )
        if cfg.agent and cfg.contexts:
            self.keeper = ContextKeeper(
                KeeperSession(
                    cfg.db_path,
                    cfg.session_id,
                    cfg.transcript_dir,
                    resume_from=cfg.resume_from,
                    handoff_from=cfg.handoff_from,
                ),
                settings,
                screen=self.renderer.screen,
                output_chars=lambda: self.output_chars,
                pattern_set=lambda: self.renderer.pattern_set,
                made=self._context_made,
                fail=self.failures,
            )
            if self.giveback is not None and contexts_back and cfg.resume_from:
                self.giveback.resume()
            elif self.giveback is not None and contexts_back and settings.memory.brief:
                self._brief()
            if cfg.resume_from:  # its context, brought up to date (also with injection off: `supervise context` shows it)
                self.keeper.want("resume")
        reader = profiles.get(cfg.agent).transcript if cfg.transcript_dir else None
        parent = cfg.resume_from if reader else None  # the summaries the agent made in the session this one carries on
        told: list[dict] = self._read(lambda store: store.events(parent, "agent_summary"), []) if parent else []
        gave, summarized = self.renderer.detector.gave, [e["detail"].get("text", "") for e in told]
        self.transcript = AgentRecord(reader, cfg, self.sink, self.giveback, self._now, summarized, gave) if reader else None
        wiring.connect(
            self.sink,
            self.renderer,
            exit_note=self._tell_loop,
            states=self.states,
            giveback=self.giveback,
            keeper=self.keeper,
            telemetry=self.telemetry,
            record=self.transcript,
        )
        give_way = partial(self.sink.quiet, GIVE_WAY)
        self.embedder = embedder.for_session(cfg.db_path, cfg.session_id, settings.memory, self.failures, give_way)
        wake, heavy = self.embedder.wake if self.embedder else None, self.renderer.flood.heavy
        self.indexer = Indexer(cfg.db_path, cfg.session_id, cfg.log_path, self.failures, self._report, give_way, heavy, wake)
        self.renderer.written = self.indexer.wake
        self.indexer.start()
        if self.keeper is not None:
            self.keeper.start()
        if self.transcript is not None:
            self.transcript.start()
        self.sink.start()  # every subscriber is wired: what was emitted so far (a brief) is told now
        if self.giveback is not None:  # what is due at the start is known: the agent's hook is answered from now
            self.giveback.answer_hooks()

    def _door_said(self, sid: str | None, summary: str | None, t: float) -> None:  # taken in turn with its record
        if self.transcript is not None:
            self.sink.call("the agent's door", self.transcript.door_said, sid, summary, t)

    def _read(self, read: Callable[[Store], T], default: T) -> T:
        """A read of the store as the run starts; one that fails is said, and the run goes on without it."""
        try:
            return read(self._store) if self._store is not None else default
        except Exception as exc:
            self.failures("event store", exc)
            return default

    def _brief(self) -> None:
        """A new session's brief of its project's last sessions, due from the start (a few reads of the store)."""
        try:
            made = brief.for_session(self._store, self.config.session_id) if self._store is not None else None
        except Exception as exc:
            return self.failures("brief", exc)
        if made is not None and self.giveback is not None:
            self.sink.emit(
                "brief", 0.0, {"text": made.text, "quoted": made.quoted, "sessions": list(made.sessions), "tokens": made.tokens}, None
            )
            self.renderer.detector.add_given(made.text, made.quoted)
            self.giveback.brief(self.config.session_id, made.text)

    def _open_store(self) -> Store | None:
        # the recording matters more than the events table: carry on without it
        try:
            return Store(Path(self.config.db_path))
        except Exception as exc:
            self.failures("event store", exc)
            return None

    def _now(self) -> float:
        return time.monotonic() - self.config.start_monotonic if self.config.start_monotonic else 0.0

    def _tell_loop(self, kind: str, t: float, detail: dict) -> None:
        """The two events the supervisor's exit note needs."""
        if kind == "injection":
            self._send(Injected(detail))
        elif kind == "compaction_finished":
            self._send(Compacted())

    def _context_made(self, row: dict, session_id: str) -> None:
        self.renderer.detector.add_given(row["prompt"], quoted(row["context"]))
        if self.telemetry is not None:
            self.telemetry.on_context(row)
        if self.giveback is not None:
            self.giveback.on_context(row, session_id)
        if self.embedder is not None:
            self.embedder.wake()

    def _marker(self, t: float, kind: str) -> None:
        self._write(t, "m", kind, flush=True)

    # -- main thread: recording ----------------------------------------------------------------

    def handle(self, frames: list[tuple[bytes, float, bytes]]) -> dict | None:
        """Record one batch of frames. Returns the END frame's detail when the loop says it is done."""
        end = None
        for kind, t, payload in channel.coalesce(frames):
            try:
                if kind == channel.OUTPUT:
                    self._output(t, payload)
                elif kind == channel.INPUT:
                    text = self._in_decoder.decode(payload)
                    if text:
                        self._write(t, "i", text)
                elif kind == channel.RESIZE:
                    cols, rows = (int(x) for x in payload.decode().split("x"))
                    span = self._write(t, "r", f"{cols}x{rows}")
                    self.renderer.resize(t, cols, rows, span)
                elif kind == channel.EVENT:
                    message = json.loads(payload)
                    self.sink.emit(message["kind"], t, message.get("detail") or {}, None, mark=message.get("marker", False))
                elif kind == channel.NOTE:
                    if self.giveback is not None:
                        self.giveback.on_note(Note(**json.loads(payload)))
                elif kind == channel.END:
                    self._output(t, self._out_decoder.decode(b"", final=True))
                    end = json.loads(payload)
            except Exception as exc:
                self.failures("recording", exc)
        self._write(0.0, "", "", flush=True)
        return end

    def _write(self, t: float, code: str, data: str | bytes, flush: bool = False) -> tuple[int, int] | None:
        """Into the recording; returns where the event lies in the file. After a write fails
        (a full disk) nothing more goes in: a torn line mid-file would spoil the rest for
        players. What it missed is counted for the user's exit note."""
        failed = span = None
        with self._cast_lock:
            if self._cast_lost is not None:
                self._cast_lost[1] += len(data)
                return None
            try:
                if code:
                    span = self._cast.write(t, code, data)
                if flush:
                    self._cast.flush()
            except OSError as exc:
                self._cast_lost = [t, len(data)]
                failed = exc
        if failed is not None:  # told outside the lock
            self.failures("recording", failed)
        return span

    def _output(self, t: float, data: str | bytes) -> None:
        # Output that is ASCII (nearly all of a flood) goes into the recording as it came and
        # is decoded only if it is rendered now: decoding and encoding it again cost a quarter
        # of the recorder's time under a flood.
        if isinstance(data, bytes) and not (data.isascii() and not self._out_decoder.getstate()[0]):
            data = self._out_decoder.decode(data)
        if data:
            self.output_chars += len(data)
            span = self._write(t, "o", data)
            if isinstance(data, str):
                self.modes.feed(data)
            elif b"\x1b" in data:  # (ASCII with no escape sequence turns no mode on or off)
                self.modes.feed(data.decode("ascii"))
            self.renderer.output(t, data, span)

    def mark_interrupted(self) -> None:
        """The loop went away without saying goodbye (kill -9, crash)."""
        if self._store is None:
            return
        try:
            session = self._store.get_session(self.config.session_id)
            if session["status"] == ACTIVE:
                self._store.finish_session(self.config.session_id, INTERRUPTED, None)
        except Exception as exc:
            self.failures("event store", exc)

    def finish(self) -> None:
        """Let rendering catch up, write the final screen, record and tell every event, index
        the rest of the text log, close everything; what failed more than once is said."""
        if self.giveback is not None:
            self.giveback.close()
        self.renderer.finish()
        if self.transcript is not None:
            self.transcript.stop()
        self.sink.close()  # after everything that emits: the events thread tells the last of them
        if self.telemetry is not None:  # its last records sent, what was lost said with the exit note
            self.telemetry.ended()
        self.indexer.finish()  # the text log is complete now: the rest of it into the search index
        try:
            self._cast.close()
        except OSError as exc:
            self.failures("recording", exc)
        if self._cast_lost is not None:
            t, lost = self._cast_lost
            self._report(
                f"supervise: the recording stopped at {t:.0f} s (a write failed); {lost / 1e6:.1f} MB of the "
                f"session after it are not in {self.config.cast_path} (hint: free some space in its folder)"
            )
        for line in self.failures.again():
            self._report(line)
        for store in (self._store, self.sink.store):
            if store is not None:
                store.close()


def serve(cfg: RecorderConfig, in_fd: int, back_fd: int, settings: config.Settings | None = None) -> Recorder:
    """The recorder process's main loop; returns the recorder, its telemetry still to close."""
    back_ok = True
    send_lock = threading.Lock()

    def send(message: Message) -> None:
        nonlocal back_ok
        with send_lock:  # several threads send; one line at a time
            if back_ok:
                try:
                    channel.send_message(back_fd, message)
                except OSError:
                    back_ok = False  # the loop is gone; keep recording anyway

    settings = settings or config.load()
    recorder = Recorder(cfg, settings, report=lambda text: send(Error(text)), send=send)
    end = None
    for batch in channel.read_batches(in_fd):
        end = recorder.handle(batch)
        if end is not None:
            break
    if end is None:
        recorder.mark_interrupted()
    # The loop restores the terminal as soon as it knows which modes the child left on.
    send(Modes(recorder.modes.reset_sequence()))
    recorder.finish()
    # The session is recorded whole: the user has their shell back now, whatever a context
    # round in flight is waiting for. The last round is made after, in the background (this
    # process is in a session of its own and outlives the supervisor).
    send(Done())
    keeper = recorder.keeper
    if keeper is not None:
        keeper.stop()
        if recorder.output_chars:
            keeper.make("session_end")
    if recorder.embedder is not None:  # what the session added, embedded within the recorder's grace
        recorder.embedder.finish(settings.recorder_grace)
    return recorder


def main(argv: list[str]) -> None:
    cfg = RecorderConfig.from_json(Path(argv[0]).read_text(encoding="utf-8"))
    # As the supervisor resolved them (its flags, its config file as it was at the start).
    settings = config.passed_down(os.environ) or config.load()
    os.environ.pop(config.SETTINGS_ENV, None)  # not for what the recorder runs (a summary's CLI)
    recorderlife.background_priority(settings.recorder_priority)
    recorderlife.exit_after_supervisor(settings.recorder_grace)
    # Terminal signals are the supervisor's business; we stop when the pipe closes.
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_IGN)
    in_fd, back_fd = int(argv[1]), int(argv[2])
    working = lastround.hold(Path(cfg.cast_path).parent)  # until the last round is made: `context`/`resume` wait for it
    try:
        recorder = serve(cfg, in_fd, back_fd, settings)
    finally:
        os.close(back_fd)
        if working is not None:
            os.close(working)
    if recorder.telemetry is not None:  # the last round is made: its record goes too (`resume` need not wait for it)
        recorder.telemetry.close()


if __name__ == "__main__":
    main(sys.argv[1:])
