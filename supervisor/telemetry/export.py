"""Sending a session's telemetry, in the recorder process, off everyone's way.

The recorder's threads hand over what happened (an append to a bounded queue, nothing more);
one thread of ours, woken only when something was handed over, makes the metrics and log
records of it (signals.py) and sends the records in one request. The metrics go out once
per export interval, on the SDK's reader thread, and once more at the end. An endpoint that
is down, slow or refusing holds our thread alone: what could not be sent, or did not fit the
queue, is counted (and exported as a metric once the endpoint is back), said once to the
user, and nothing recorded locally depends on it. Whatever raises on our thread (the SDK,
an event that cannot be made into a record) costs what it held, counted, never the thread.
At the agent's exit what was handed over goes at once, and the exit waits a moment
(END_WAIT) for the answer, so a short session's loss reaches the user's terminal too; what
is lost after that (the export timeout, at the end) goes into recorder.err and the session's
events. The SDK is loaded on our thread, so a session starts as fast with telemetry on.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..config import Telemetry
from ..errors import SuperviseError
from ..plaintext import plain
from ..status.states import STATES
from . import signals

MAX_QUEUE = 4096  # items waiting to be made into records; more are dropped, and counted
MAX_QUEUED_CHARS = 4_000_000  # ... and of the text they hold (content: a flood's lines)
GATHER = 0.2  # seconds a wake waits for the rest of a burst, so it goes in one request
END_WAIT = 1.0  # seconds the agent's exit waits for the endpoint's answer: the user's shell waits on it
INSTALL_HINT = (
    "install the extra into supervise's environment: pip install 'supervise-agents[otlp]' "
    "(pipx: pipx inject supervise-agents opentelemetry-sdk opentelemetry-exporter-otlp-proto-http)"
)
GRPC_HINT = (
    "install the extra supervise-agents[otlp-grpc] (pipx: pipx inject supervise-agents opentelemetry-exporter-otlp-proto-grpc), "
    "or use OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"
)


def where(settings: Telemetry) -> str:
    """The endpoint as the user's message names it (never its credentials)."""
    url = settings.endpoint or settings.logs_endpoint or settings.metrics_endpoint or ""
    try:
        parts = urlsplit(url)
        return plain(f"{parts.scheme}://{parts.hostname}{':' + str(parts.port) if parts.port else ''}", newlines=False)
    except ValueError:
        return "the OTLP endpoint"


class SessionTelemetry:
    def __init__(
        self,
        settings: Telemetry,
        session: signals.Session,
        started_wall: float | None,
        now: Callable[[], float],
        report: Callable[[str], None],
        release: Callable[[list[str]], str | None] | None = None,
        record: Callable[[dict], None] | None = None,
    ):
        """`now`: session seconds; `release(argv)`: the agent's release, asked once the run's
        command is known; `report`: a line for the user (said at the agent's exit); `record`:
        what was lost, told once at the end (after the user has their shell back), for the
        session's events."""
        self.settings, self.session, self.now, self.report = settings, session, now, report
        self.started_wall = started_wall or time.time() - now()
        self.release, self.record = release, record
        self.clock = signals.StateClock()
        self.dropped = 0  # log records not sent
        self.reason: str | None = None  # why, as the latest failure said it
        self._items: deque = deque()
        self._chars = 0  # of text in the items queued
        self._handed = self._done = 0  # items handed over; items sent, or counted as lost
        self._in_flight = 0  # records of the export under way
        self._lock = threading.Lock()
        self._sent = threading.Condition(self._lock)  # `_done` moved on
        self._wake = threading.Event()
        self._hurry = threading.Event()  # the agent exited: what is handed over goes at once
        self._closing = threading.Event()
        self._loaded = threading.Event()  # the SDK is set up, or could not be
        self._given_up = False  # at the end, what was still under way was counted as lost
        self._told = False
        self._pipeline: Any = None  # sdk.Pipeline, once the SDK is loaded
        self._thread = threading.Thread(target=self._work, name="supervise-telemetry", daemon=True)

    def start(self) -> None:
        self._thread.start()

    # -- what the recorder's threads call: a lock for an append ------------------------------

    def on_event(self, kind: str, t: float, detail: dict) -> None:
        if kind == "exit":
            with self._lock:
                self.clock.end(t)
        if kind in signals.EVENTS:
            self._put(("event", kind, t, detail))

    def on_state(self, name: str, since: float) -> None:
        with self._lock:
            self.clock.change(name, since)

    def on_context(self, row: dict) -> None:
        self._put(("context", row, self.now()))

    # content: the two below are wired only with the opt-in (run/wiring.py, run/telemetrywire.py)

    def on_user_turn(self, text: str) -> None:
        self._put(("user", text, self.now()), len(text))

    def on_lines(self, lines: list[str]) -> None:
        self._put(("lines", list(lines), self.now()), sum(map(len, lines)))

    def _put(self, item: tuple, chars: int = 0) -> None:
        with self._lock:
            full = len(self._items) >= MAX_QUEUE or self._chars + chars > MAX_QUEUED_CHARS
            if not full:
                self._items.append(item)
                self._chars += chars
                self._handed += 1
        if full:
            self._lost(1, "the queue was full")
        self._wake.set()

    def ended(self, wait: float | None = None) -> None:
        """The agent exited: send what was handed over at once, and wait for the endpoint's
        answer at most `wait` seconds (END_WAIT) in all, the SDK's set-up included (a session
        of a moment may end before it is), the user's shell waiting on it; what went wrong is
        said now, once, so it reaches the user's terminal with the exit note."""
        wait = min(END_WAIT, self.settings.timeout) if wait is None else wait
        deadline = time.monotonic() + wait
        self._hurry.set()
        self._wake.set()
        if not self._loaded.wait(wait):
            return  # (a session of a moment on a busy machine) the end tells what is lost: recorder.err, the session's events
        with self._lock:
            handed = self._handed
            answered = self._sent.wait_for(lambda: self._done >= handed or self._given_up, max(0.0, deadline - time.monotonic()))
        if not answered:
            reason = self.reason or (self._pipeline.reasons.latest if self._pipeline is not None else None)
            why = f" ({reason})" if reason else ""
            self._say(
                f"supervise: telemetry to {where(self.settings)} has not taken the session's last records in {wait:g} s{why}; "
                f"they are tried for up to {self.settings.timeout:g} s more, and what is not sent is counted and dropped "
                "(hint: check the collector there; everything is recorded here either way)"
            )

    # -- our thread ---------------------------------------------------------------------------

    def _work(self) -> None:
        pipeline = self._load()
        self._loaded.set()
        while True:
            self._wake.wait()  # nothing handed over: no wake-ups
            self._hurry.wait(GATHER)
            self._wake.clear()
            with self._lock:
                items = list(self._items)
                self._items.clear()
                self._chars = 0
            try:  # nothing of it may end this thread: what was not sent is counted, and said
                self._send(pipeline, items)
            except Exception as exc:
                self._lost(len(items), _why(exc))
            with self._lock:
                self._done += len(items)
                self._in_flight = 0
                self._sent.notify_all()
            if self._closing.is_set() and not self._items:
                return

    def _load(self) -> Any:
        """The SDK set up, or None: said once, and what is handed over is counted as not sent."""
        try:
            from . import sdk

            self._pipeline = sdk.Pipeline(self.settings, lambda: self._lost(0, None), self._observe)
            return self._pipeline
        except ImportError:
            self._say(
                f"supervise: telemetry is set ({where(self.settings)}) but the OpenTelemetry SDK is not installed; nothing is sent (hint: {INSTALL_HINT})"
            )
        except SuperviseError as exc:
            self._say(f"supervise: {exc.message}; nothing is sent (hint: {exc.hint})")
        except Exception as exc:  # the SDK's own complaint (a variable it reads itself, e.g. OTEL_EXPORTER_OTLP_COMPRESSION)
            self._say(
                f"supervise: telemetry to {where(self.settings)} could not be set up ({_why(exc)}); nothing is sent "
                "(hint: check the OTEL_* variables the OpenTelemetry SDK reads: docs/teams.md)"
            )
        return None

    def _send(self, pipeline, items: list[tuple]) -> None:
        """Make the records of `items` and send them in one request."""
        if pipeline is None:
            return self._lost(len(items), None, say=False)
        for item in items:
            try:
                self._make(pipeline, item)
            except Exception as exc:  # one item that cannot be made costs that item alone
                self._lost(1, _why(exc))
        with self._lock:
            self._in_flight = len(pipeline.collect.records)
        lost = pipeline.send_logs()
        if lost:
            self._lost(lost, None)

    def _make(self, pipeline, item: tuple) -> None:
        from ..redact import redact  # (its rules take a few ms to load: not on a `supervise search`'s way)

        content = self.settings.content
        if item[0] == "event":
            _, kind, t, detail = item
            if kind == "start" and self.release is not None:
                self.session = replace(self.session, release=self.release(list(detail.get("argv") or [])))
            counts, records = signals.of_event(kind, detail, self.session, content)
        elif item[0] == "context":
            _, row, t = item
            counts, records = signals.of_context(row, self.session, content)
        elif item[0] == "user":
            t, counts, records = item[2], [], [signals.of_user_request(item[1], self.session)]
        else:
            t, counts, records = item[2], [], [signals.of_log_lines(item[1], self.session)]
        time_ns = int((self.started_wall + t) * 1e9)
        bodies = [redact(record.body) if content else record.body for record in records]  # (without content, a fixed sentence)
        for count in counts:
            pipeline.add(count.metric, count.value, count.attributes)
        for record, body in zip(records, bodies):
            pipeline.emit(record.event, body, record.attributes, time_ns, record.warn)

    def _observe(self, name: str) -> list:
        """The observable instruments' values, when the reader collects (its thread)."""
        from opentelemetry.metrics import Observation

        base = self.session.metric_attributes()
        with self._lock:
            totals, current = self.clock.totals(self.now()), self.clock.current()
        if name == "supervise.state.time":
            return [Observation(round(seconds, 3), {**base, "supervise.state": state}) for state, seconds in totals.items()]
        return [Observation(int(state == current), {**base, "supervise.state": state}) for state in STATES]

    def _lost(self, count: int, why: str | None, say: bool = True) -> None:
        """Something was not sent: counted (exported once the endpoint takes it), said once.
        On whichever thread lost it: nothing here may raise."""
        reason = why or (self._pipeline.reasons.latest if self._pipeline is not None else None) or "no answer"
        with self._lock:
            if self._given_up:  # counted already, at the end
                return
            self.dropped += count
            self.reason = reason
        if count and self._pipeline is not None:
            with contextlib.suppress(Exception):
                self._pipeline.add("supervise.telemetry.dropped", count, self.session.metric_attributes())
        if say:
            self._say(
                f"supervise: telemetry to {where(self.settings)} failed ({reason}); what is not sent is counted and dropped, "
                "the session goes on (hint: check the collector there; everything is recorded here either way)"
            )

    def _say(self, line: str) -> None:
        """Once to the user (with the exit note), and into recorder.err."""
        with self._lock:
            told, self._told = self._told, True
        if told:
            return
        _to_stderr(line)
        self.report(line)

    def close(self, timeout: float | None = None) -> None:
        """Send what is left and the metrics' last values, within `timeout` seconds (the
        settings' export timeout): an endpoint that never answers keeps the process no longer.
        What was lost is told once, into recorder.err and to `record` (the session's events)."""
        timeout = self.settings.timeout if timeout is None else timeout
        end = time.monotonic() + timeout
        self._closing.set()
        self._hurry.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        with self._lock:  # what is still under way is lost, counted here once (the thread counts no more)
            unsent = self._in_flight + len(self._items) if self._thread.is_alive() else 0
            if unsent:
                self.dropped += unsent
                self.reason = f"no answer in {timeout:g} s"
            self._given_up = True
        if unsent and self._pipeline is not None:
            with contextlib.suppress(Exception):
                self._pipeline.add("supervise.telemetry.dropped", unsent, self.session.metric_attributes())
        if self._pipeline is not None:
            self._pipeline.close(max(0.1, end - time.monotonic()))
        with self._lock:
            dropped, reason = self.dropped, self.reason
        if reason is None:
            return
        _to_stderr(f"supervise: telemetry to {where(self.settings)}: {dropped} log records of this session were not sent ({reason})")
        if self.record is not None:
            try:
                self.record({"endpoint": where(self.settings), "records": dropped, "reason": reason})
            except Exception as exc:
                _to_stderr(f"supervise: telemetry: what was not sent could not be recorded in the session's events ({exc})")


def _why(exc: BaseException) -> str:
    return plain(str(exc) or type(exc).__name__, newlines=False)[:200]


def _to_stderr(line: str) -> None:
    """recorder.err, for the recorder (a full disk may refuse it)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
