"""The recorder process: everything the PTY loop hands off, on the other core.

The supervisor starts it with `python -m supervisor.recorder CONFIG` and feeds it frames
over a pipe (see channel.py). Its main thread decodes output, appends it to the .cast file
(flushed after every read, so at most a fraction of a second is ever in flight), stores
events in SQLite and tracks terminal modes; a render thread feeds the terminal emulator,
appends finished lines to the text log and tells the detector what appeared on screen. If the pipe closes without an END frame, the supervisor died: everything
received is still written, and the session is marked interrupted.

A failure in a side channel (events, text log) is reported once and the rest goes on.
"""

from __future__ import annotations

import codecs
import json
import os
import queue
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import asciicast, channel, emulator as emulators, paths, patterns as patternfiles, transcript
from .detector import Detector
from .injection import HOOK_WAIT, Context, Injector
from .errors import SuperviseError
from .events import EventSink
from .store import ACTIVE, INTERRUPTED, Event, Store, utcnow
from .termmodes import ModeTracker
from .textlog import TextLog

_STOP = object()
# Output chunks closer together than this become one .cast event: the same replay to the
# eye, far fewer events under heavy output.
COALESCE = 0.010
# Text waiting to be rendered. Past this the recorder stops reading from the loop, which in
# turn stops reading the PTY: memory stays bounded under any flood.
RENDER_BACKLOG_CAP = 8 << 20
# Past this much queued output, rendering joins events to catch up (detail may be lost).
CATCH_UP = 256 << 10


@dataclass
class RecorderConfig:
    session_id: str
    db_path: str
    cast_path: str
    log_path: str
    header: dict
    emulator: str = emulators.DEFAULT_EMULATOR
    agent: str | None = None  # pattern set to detect with
    pattern_files: list[str] = field(default_factory=list)
    start_monotonic: float | None = None  # the loop's time zero, to measure detection latency
    started_wall: float | None = None  # the same moment by the wall clock (transcript timestamps)
    transcript_dir: str | None = None  # Claude Code's project folder to follow
    contexts: bool = True  # make session contexts (on compaction, periodically, at the end)
    inject: str = "off"  # give the agent its context back: auto | type | off
    hook_socket: str | None = None  # where Claude Code's SessionStart hook asks for it
    resume_from: str | None = None  # the session this one resumes: its context is due at start

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "RecorderConfig":
        return cls(**json.loads(text))


class Recorder:
    def __init__(self, config: RecorderConfig, report: Callable[[str], None] | None = None, tell: Callable[[dict], None] | None = None):
        self.config = config
        self._tell = tell or (lambda message: None)
        self.modes = ModeTracker()
        self._agent_session_id: str | None = None
        self._report = report or (lambda msg: print(msg, file=sys.stderr))
        self._errors: set[str] = set()
        self._render_q: queue.SimpleQueue = queue.SimpleQueue()
        self._render_backlog = 0
        self.output_chars = 0
        self._render_room = threading.Condition()
        self._out_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._in_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        h = config.header
        header = asciicast.Header(h["width"], h["height"], h["timestamp"], h.get("command"), h.get("title"), h.get("env"))
        self._cast = asciicast.Writer(paths.open_private(Path(config.cast_path), "w", encoding="utf-8"), header)
        self._log = paths.open_private(Path(config.log_path), "w", encoding="utf-8")
        self.textlog = TextLog(emulators.make(config.emulator, h["width"], h["height"]))
        self._cast_lock = threading.Lock()
        self._store = self._open_store()
        self.sink = EventSink(self._open_store(), config.session_id, self._marker, self._tell, config.start_monotonic)
        self.keeper: ContextKeeper | None = None
        self.injector: Injector | None = None
        self._stopping = threading.Event()
        self._hooks = None
        if config.agent and config.contexts:
            self.keeper = ContextKeeper(self)
            self.sink.listeners.append(self.keeper.on_event)
            if config.inject != "off":
                self._start_injector()
            if config.resume_from:  # its context, brought up to date (also with injection off: `supervise context` shows it)
                self.keeper.want("resume")
            self.keeper.start()
        self._detect_lock = threading.Lock()
        self.detector = Detector(self._load_patterns())
        self._pattern_observer = self._watch_patterns() if config.agent else None
        self.transcript: transcript.TranscriptFollower | None = None
        if config.transcript_dir:
            self.transcript = transcript.TranscriptFollower(Path(config.transcript_dir), self._on_transcript)
            self.transcript.start()
        self._render_thread = threading.Thread(target=self._render_worker, name="supervise-render", daemon=True)
        self._render_thread.start()

    # -- giving the context back (see injection.py) ----------------------------------------------

    def _start_injector(self) -> None:
        config = self.config
        self.injector = inj = Injector(
            config.inject,
            send=self._tell,
            record=lambda t, detail: self.sink.emit("injection", t, detail, detail["channel"]),
        )

        def on_event(kind: str, t: float, detail: dict) -> None:
            if kind == "idle_prompt":
                inj.on_idle_event(t)
            else:
                inj.on_event(kind, t)

        self.sink.listeners.append(on_event)
        if config.resume_from:
            inj.resume()
        if config.hook_socket:
            from .hookserver import HookServer

            try:
                self._hooks = HookServer(config.hook_socket, self._hook_answer, self._fail)
                self._hooks.start()
            except OSError as exc:
                self._fail("context hook", exc)
        threading.Thread(target=self._tick_injector, name="supervise-inject", daemon=True).start()

    def _tick_injector(self) -> None:
        inj = self.injector
        # Ten ticks a second only while a delivery is due or under way; otherwise asleep.
        while inj.wait_for_work() and not self._stopping.wait(0.1):
            try:
                inj.tick(self._now())
            except Exception as exc:
                self._fail("context injection", exc)

    def _hook_answer(self, request: dict) -> str | None:
        source = str(request.get("source", ""))
        if source == "compact":  # the hook is one more witness that a compaction finished
            self.sink.emit("compaction_finished", self._now(), {}, "hook")
        return self.injector.hook(source, self._now, float(os.environ.get("SUPERVISE_HOOK_WAIT", HOOK_WAIT)))

    def context_made(self, row: dict, session_id: str) -> None:
        if self.injector is not None:
            self.injector.on_context(Context(session_id, row["round"], row["prompt"], self._now()))

    def _open_store(self) -> Store | None:
        # the recording matters more than the events table: carry on without it
        try:
            return Store(Path(self.config.db_path))
        except Exception as exc:
            self._fail("event store", exc)
            return None

    # -- detection (render thread, pattern watcher, transcript watcher) --------------------------

    def _load_patterns(self):
        if not self.config.agent:
            return None
        sets = patternfiles.load_all([Path(p) for p in self.config.pattern_files])
        return patternfiles.select(sets, self.config.agent)

    def _detect(self, t: float, frame) -> None:
        if self.detector.patterns is None:
            return
        screen = [row.text for row in self.textlog.rows]
        with self._detect_lock:
            found = self.detector.feed(t, frame.appeared, screen)
        for d in found:
            self.sink.emit(d.kind, d.t, d.detail(), "regex")
        inj = self.injector
        if inj is not None:
            d = self.detector
            inj.on_frame(t, screen, d.idle, d.busy, d.dialog_up(screen), self.modes.private.get("2004") == "h")

    def reload_patterns(self) -> None:
        """A pattern file changed: use the new patterns, or keep the old ones if it is broken."""
        try:
            loaded = self._load_patterns()
        except SuperviseError as exc:
            self._report(f"{exc} (kept the previous patterns)")
            self.sink.emit("patterns_error", self._now(), {"error": exc.message}, "patterns")
            return
        with self._detect_lock:
            self.detector.set_patterns(loaded)
        self.sink.emit("patterns_reloaded", self._now(), {"patterns": len(loaded.patterns) if loaded else 0}, "patterns")

    def _watch_patterns(self):
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        recorder = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                path = os.fsdecode(getattr(event, "dest_path", "") or event.src_path)
                if path.endswith(".toml") and event.event_type in ("modified", "created", "moved", "deleted"):
                    recorder.reload_patterns()

        observer = Observer()
        watched = set()
        for path in patternfiles.watched_paths([Path(p) for p in self.config.pattern_files]):
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

    def _now(self) -> float:
        return time.monotonic() - self.config.start_monotonic if self.config.start_monotonic else 0.0

    def _on_transcript(self, record: dict, path: Path) -> None:
        sid = record.get("sessionId")
        if sid and sid != self._agent_session_id:
            self._agent_session_id = sid
            self.sink.set_agent_session_id(sid)
        if self.injector is not None and record.get("type") == "user":
            self.injector.on_user_turn(transcript.user_text(record))
        detail = transcript.compaction(record)
        if detail is None:
            return
        wall = transcript.timestamp(record)
        t = wall - self.config.started_wall if wall and self.config.started_wall else self._now()
        detail["transcript"] = path.name
        self.sink.emit("compaction_finished", max(0.0, t), detail, "transcript")

    def _marker(self, t: float, kind: str) -> None:
        with self._cast_lock:
            self._cast.write(t, "m", kind)
            self._cast.flush()

    def _fail(self, where: str, exc: BaseException) -> None:
        if where not in self._errors:
            self._errors.add(where)
            self._report(f"supervise: {where} failed ({exc}); the session goes on")

    # -- main thread: recording ----------------------------------------------------------------

    def handle(self, frames: list[tuple[bytes, float, bytes]]) -> dict | None:
        """Record one batch of frames. Returns the END frame's detail when the loop says it is done."""
        events: list[Event] = []
        end = None
        for kind, t, payload in _coalesce(frames):
            try:
                if kind == channel.OUTPUT:
                    self._output(t, self._out_decoder.decode(payload))
                elif kind == channel.INPUT:
                    text = self._in_decoder.decode(payload)
                    if text:
                        self._write(t, "i", text)
                elif kind == channel.RESIZE:
                    cols, rows = (int(x) for x in payload.decode().split("x"))
                    self._write(t, "r", f"{cols}x{rows}")
                    self._render_q.put(("r", t, (cols, rows)))
                elif kind == channel.EVENT:
                    events.append(self._event(t, json.loads(payload)))
                elif kind == channel.NOTE:
                    if self.injector is not None:
                        self.injector.on_note(json.loads(payload), self._now())
                elif kind == channel.END:
                    self._output(t, self._out_decoder.decode(b"", final=True))
                    end = json.loads(payload)
            except Exception as exc:
                self._fail("recording", exc)
        try:
            with self._cast_lock:
                self._cast.flush()
        except OSError as exc:
            self._fail("recording", exc)
        self.add_events(events)
        return end

    def _write(self, t: float, code: str, data: str) -> None:
        # The render thread writes markers too; never hold this lock while waiting for anything.
        with self._cast_lock:
            self._cast.write(t, code, data)

    def _output(self, t: float, text: str) -> None:
        if text:
            self.output_chars += len(text)
            self._write(t, "o", text)
            self.modes.feed(text)
            with self._render_room:
                while self._render_backlog > RENDER_BACKLOG_CAP:
                    self._render_room.wait()
                self._render_backlog += len(text)
            self._render_q.put(("o", t, text))

    def _event(self, t: float, message: dict) -> Event:
        if message.get("marker"):
            self._write(t, "m", message["kind"])
        return Event(message["kind"], message.get("detail") or {}, t, utcnow())

    def add_events(self, events: list[Event]) -> None:
        if events and self._store is not None:
            try:
                self._store.add_events(self.config.session_id, events)
            except Exception as exc:
                self._fail("event store", exc)

    def mark_interrupted(self) -> None:
        """The loop went away without saying goodbye (kill -9, crash)."""
        if self._store is None:
            return
        try:
            session = self._store.get_session(self.config.session_id)
            if session["status"] == ACTIVE:
                self._store.finish_session(self.config.session_id, INTERRUPTED, None)
        except Exception as exc:
            self._fail("event store", exc)

    def finish(self) -> None:
        """Let rendering catch up, write the final screen, close everything."""
        self._stopping.set()
        if self.injector is not None:
            self.injector.close()
        if self._hooks is not None:
            self._hooks.close()
        self._render_q.put((_STOP, 0.0, None))
        self._render_thread.join()
        if self.transcript is not None:
            self.transcript.stop()
        if self._pattern_observer is not None:
            self._pattern_observer.stop()
        try:
            self._cast.close()
        except OSError as exc:
            self._fail("recording", exc)
        if self._store is not None:
            self._store.close()
        if self.sink.store is not None:
            self.sink.store.close()

    # -- render thread ----------------------------------------------------------------------------

    def _render_worker(self) -> None:
        stop = False
        while not stop:
            batch = [self._render_q.get()]
            while True:  # when behind, take everything queued in one go
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
        """Feed output as it was recorded, one event at a time, so a line that was on screen
        for a moment (a spinner shown for 45 ms) is seen by the detector. Only when far
        behind are queued events joined, to catch up."""
        behind = sum(len(p) for code, _, p in batch if code == "o") > CATCH_UP
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
                self._render(pending_t, "".join(pending))
                pending = []
            if code == "r":
                self._write_log(self.textlog.resize(t, *payload).logged)
            elif code is _STOP:
                stop = True
        if pending:
            self._render(pending_t, "".join(pending))
        self._log.flush()
        return stop

    def _render(self, t: float, text: str) -> None:
        frame = self.textlog.feed(t, text)
        with self._render_room:
            self._render_backlog -= len(text)
            self._render_room.notify()
        self._write_log(frame.logged)
        try:
            self._detect(t, frame)
        except Exception as exc:
            self._fail("detector", exc)

    def _write_log(self, lines: list[str]) -> None:
        if lines:
            self._log.write("\n".join(lines) + "\n")


class ContextKeeper(threading.Thread):
    """Makes session contexts in the recorder process, off every other thread: when a
    compaction starts (the state before it is gone), when one finishes with no fresh context,
    every few minutes or so much new output, and at the end of the session. One at a time;
    triggers that arrive meanwhile are folded into the next run."""

    FRESH = 120.0  # seconds: a context this recent makes a compaction_finished one needless

    def __init__(self, recorder: "Recorder"):
        super().__init__(name="supervise-contexts", daemon=True)
        from . import summarizer

        self.recorder = recorder
        self.cfg = summarizer.load_config()
        env = os.environ
        self.every_seconds = float(env.get("SUPERVISE_SUMMARY_EVERY_MINUTES", "10")) * 60
        self.every_chars = int(float(env.get("SUPERVISE_SUMMARY_EVERY_KB", "256")) * 1024)
        # Each context digests the whole log so far, on the GIL the renderer and the detector
        # share: under heavy output the KB trigger alone fired at every check (5 s) and
        # detection lagged by up to a second (scripts/bench_detect.py). Not more often than this.
        self.min_seconds = float(env.get("SUPERVISE_SUMMARY_MIN_SECONDS", "60"))
        self._wanted: queue.SimpleQueue = queue.SimpleQueue()
        self._last_made: float | None = None
        self._asked: float | None = None  # when a context was last asked for (made or not yet)
        self._chars_at_last = 0
        self._store: Store | None = None

    def want(self, trigger: str) -> None:
        self._asked = time.monotonic()
        self._wanted.put(trigger)

    def on_event(self, kind: str, t: float, detail: dict) -> None:
        if kind == "compaction_started":
            self.want(kind)
        elif kind == "compaction_finished" and not self._fresh():
            self.want(kind)

    def _fresh(self) -> bool:
        """A context made lately, or one asked for or being made (in flight): it covers a
        compaction that just finished. (Without the second, a compaction that finished while
        its start's context was being made cost a second model call 55 ms later.)"""
        now = time.monotonic()
        return any(t is not None and now - t <= self.FRESH for t in (self._last_made, self._asked))

    def run(self) -> None:
        # Imported now, in the background: the first round is often a compaction's, which
        # Claude Code's hook waits for (the SDK's import took ~1 s of a 2.9 s first round).
        from . import contexts  # noqa: F401

        if self.cfg.api_key or self.cfg.auth_token:
            import anthropic  # noqa: F401
        started = time.monotonic()
        while True:
            try:
                trigger = self._wanted.get(timeout=5.0)
            except queue.Empty:
                trigger = self._periodic(started)
                if trigger is None:
                    continue
            if trigger is _STOP:
                return
            if trigger == "resume":
                self.resume()
                continue
            while True:  # fold what piled up meanwhile into this run
                try:
                    extra = self._wanted.get_nowait()
                except queue.Empty:
                    break
                if extra is _STOP or extra == "resume":
                    self._wanted.put(extra)
                    break
            self.make(trigger)

    def _periodic(self, started: float) -> str | None:
        since = self._last_made or started
        if time.monotonic() - since < self.min_seconds:
            return None
        new_chars = self.recorder.output_chars - self._chars_at_last
        if self.every_seconds and time.monotonic() - since >= self.every_seconds and new_chars:
            return "periodic"
        if self.every_chars and new_chars >= self.every_chars:
            return "periodic"
        return None

    def make(self, trigger: str) -> dict | None:
        from . import contexts

        rec = self.recorder
        self._asked = time.monotonic()
        try:
            session = self._db().get_session(rec.config.session_id)
            # the final screen is in the log by the session's end
            screen = None if trigger == "session_end" else [r.text for r in list(rec.textlog.rows)]
            self._chars_at_last = rec.output_chars
            row = contexts.make(
                self._db(), session, trigger, self.cfg, screen=screen, live=True,
                template=contexts.load_template(os.environ),
                transcript_dir=Path(rec.config.transcript_dir) if rec.config.transcript_dir else None,
                patterns=rec.detector.patterns,
            )
        except Exception as exc:
            rec._fail("session context", exc)
            return None
        self._last_made = time.monotonic()
        rec._tell({"context": {"round": row["round"], "trigger": trigger, "source": row["source"], "prompt": row["prompt"]}})
        rec.context_made(row, session["id"])
        return row

    def resume(self) -> dict | None:
        """The resumed session's latest context, made anew first if the session went on
        after it (its last output is newer): that is what the new session is given."""
        from . import contexts

        rec = self.recorder
        parent_id = rec.config.resume_from
        try:
            store = self._db()
            row = contexts.latest_or_new(store, store.get_session(parent_id), self.cfg, os.environ)
        except Exception as exc:
            rec._fail("session context", exc)
            return None
        rec._tell({"context": {"round": row["round"], "trigger": row["trigger"], "source": row["source"], "prompt": row["prompt"], "session": parent_id}})
        rec.context_made(row, parent_id)
        return row

    def _db(self) -> Store:
        """This thread's own connection, opened on first use."""
        if self._store is None:
            self._store = Store(Path(self.recorder.config.db_path))
        return self._store

    def stop(self) -> None:
        self._wanted.put(_STOP)
        self.join()


def _coalesce(frames: list[tuple[bytes, float, bytes]]) -> list[tuple[bytes, float, bytes]]:
    """Join runs of output frames that arrived within COALESCE seconds of the run's first."""
    out: list[tuple[bytes, float, bytes]] = []
    run: list[bytes] = []
    run_t = 0.0
    for kind, t, payload in frames:
        if kind == channel.OUTPUT and run and t - run_t <= COALESCE:
            run.append(payload)
            continue
        if run:
            out.append((channel.OUTPUT, run_t, b"".join(run)))
            run = []
        if kind == channel.OUTPUT:
            run, run_t = [payload], t
        else:
            out.append((kind, t, payload))
    if run:
        out.append((channel.OUTPUT, run_t, b"".join(run)))
    return out


def serve(config: RecorderConfig, in_fd: int, back_fd: int) -> None:
    """The recorder process's main loop."""
    back_ok = True
    tell_lock = threading.Lock()

    def tell(message: dict) -> None:
        nonlocal back_ok
        with tell_lock:  # several threads report; one line at a time
            if back_ok:
                try:
                    channel.send_message(back_fd, message)
                except OSError:
                    back_ok = False  # the loop is gone; keep recording anyway

    recorder = Recorder(config, report=lambda msg: tell({"error": msg}), tell=tell)
    end = None
    for batch in channel.read_batches(in_fd):
        end = recorder.handle(batch)
        if end is not None:
            break
    if end is None:
        recorder.mark_interrupted()
    # The loop restores the terminal as soon as it knows which modes the child left on.
    tell({"modes": recorder.modes.reset_sequence()})
    recorder.finish()
    keeper = recorder.keeper
    if keeper is not None:
        keeper.stop()
    tell({"done": True})
    # The supervisor has let the user go; the last context is made in the background (this
    # process is in a session of its own and outlives it).
    if keeper is not None and recorder.output_chars:
        keeper.make("session_end")


def _background_priority(policy: str) -> None:
    """SUPERVISE_RECORDER_PRIORITY: a nice value, or "idle" for SCHED_IDLE. The default is
    normal priority. Measured here under 10 MB/s of output: SCHED_IDLE made detection lag
    (p50 284 ms against 4 ms) and did not help passthrough of a flood either (0.37x
    against 0.42x of the bare loop): the recorder's work has to be done anyway."""
    try:
        if policy == "idle" and hasattr(os, "SCHED_IDLE"):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        elif policy.lstrip("-").isdigit() and int(policy):
            os.nice(int(policy))
    except OSError:
        pass


# Once the supervisor is gone (the user has their shell back, or it was killed), this process
# has this long to finish the text log and the session-end context; then it exits whatever
# its threads are doing (a stuck model call, a wedged render): no recorder lingers for good.
EXIT_GRACE = 300.0


def _exit_after_supervisor(grace: float) -> None:
    ppid = os.getppid()

    def watch() -> None:
        try:  # sleeps until the parent exits: no polling
            fd = os.pidfd_open(ppid)
            select.select([fd], [], [])
        except (AttributeError, OSError):
            while os.getppid() == ppid:
                time.sleep(2.0)
        time.sleep(grace)
        print(f"supervise: recorder exited {grace:g} s after the supervisor was gone (unfinished work was dropped)", file=sys.stderr, flush=True)
        os._exit(3)

    threading.Thread(target=watch, name="supervise-watchdog", daemon=True).start()


def main(argv: list[str]) -> None:
    _background_priority(os.environ.get("SUPERVISE_RECORDER_PRIORITY", "0"))
    _exit_after_supervisor(float(os.environ.get("SUPERVISE_RECORDER_GRACE", EXIT_GRACE)))
    # Terminal signals are the supervisor's business; we stop when the pipe closes.
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_IGN)
    config = RecorderConfig.from_json(argv[0])
    in_fd, back_fd = int(argv[1]), int(argv[2])
    if os.environ.get("SUPERVISE_BENCH_DISCARD"):  # benchmark floor: the loop with a recorder that does nothing
        import time as _t
        while os.read(in_fd, 1 << 20):
            if os.environ["SUPERVISE_BENCH_DISCARD"] == "slow":
                _t.sleep(0.05)
        channel.send_message(back_fd, {"modes": ""})
        channel.send_message(back_fd, {"done": True})
        return
    try:
        serve(config, in_fd, back_fd)
    finally:
        os.close(back_fd)


if __name__ == "__main__":
    main(sys.argv[1:])
