"""Sending a session's telemetry, in the recorder process, off everyone's way.

The recorder's threads hand over what happened (an append to a bounded queue, nothing more);
one thread of ours, woken only when something was handed over, makes the metrics and log
records of it (signals.py) and sends the records in one request. The metrics go out once
per export interval, on the SDK's reader thread, and once more at the end. An endpoint that
is down, slow or refusing holds our thread alone: what could not be sent, or did not fit the
queue, is counted (and exported as a metric once the endpoint is back), said once to the
user, and nothing recorded locally depends on it. The SDK is loaded on our thread, so a
session starts as fast with telemetry on.
"""

from __future__ import annotations

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
    ):
        """`now`: session seconds; `release(argv)`: the agent's release, asked once the run's
        command is known; `report`: a line for the user (said at the agent's exit)."""
        self.settings, self.session, self.now, self.report = settings, session, now, report
        self.started_wall = started_wall or time.time() - now()
        self.release = release
        self.clock = signals.StateClock()
        self.dropped = 0
        self._items: deque = deque()
        self._chars = 0  # of text in the items queued
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = threading.Event()
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
            if full:
                self.dropped += 1
            else:
                self._items.append(item)
                self._chars += chars
        if full:
            self._lost(1, "the queue was full")
        self._wake.set()

    # -- our thread ---------------------------------------------------------------------------

    def _work(self) -> None:
        try:
            from . import sdk

            self._pipeline = pipeline = sdk.Pipeline(self.settings, lambda: self._lost(0, None), self._observe)
        except ImportError:
            return self._say(
                f"supervise: telemetry is set ({where(self.settings)}) but the OpenTelemetry SDK is not installed; nothing is sent (hint: {INSTALL_HINT})"
            )
        except SuperviseError as exc:
            return self._say(f"supervise: {exc.message}; nothing is sent (hint: {exc.hint})")
        while True:
            self._wake.wait()  # nothing handed over: no wake-ups
            self._closing.wait(GATHER)
            self._wake.clear()
            with self._lock:
                items = list(self._items)
                self._items.clear()
                self._chars = 0
            for item in items:
                self._make(pipeline, item)
            lost = pipeline.send_logs()
            if lost:
                with self._lock:
                    self.dropped += lost
                self._lost(lost, None)
            if self._closing.is_set() and not self._items:
                return

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
        for count in counts:
            pipeline.add(count.metric, count.value, count.attributes)
        time_ns = int((self.started_wall + t) * 1e9)
        for record in records:
            body = redact(record.body) if content else record.body  # (without content, a fixed sentence)
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

    def _lost(self, count: int, why: str | None) -> None:
        """Something was not sent: counted (exported once the endpoint takes it), said once."""
        if count and self._pipeline is not None:
            try:  # (on whichever thread dropped it: nothing of ours may raise there)
                self._pipeline.add("supervise.telemetry.dropped", count, self.session.metric_attributes())
            except Exception:
                pass
        reason = why or (self._pipeline.reasons.latest if self._pipeline is not None else None) or "no answer"
        self._say(
            f"supervise: telemetry to {where(self.settings)} failed ({reason}); what is not sent is counted and dropped, "
            "the session goes on (hint: check the collector there; everything is recorded here either way)"
        )

    def _say(self, line: str) -> None:
        with self._lock:
            told, self._told = self._told, True
        if not told:
            self.report(line)

    def close(self, timeout: float | None = None) -> None:
        """Send what is left and the metrics' last values, within `timeout` seconds (the
        settings' export timeout): an endpoint that never answers keeps the process no longer."""
        timeout = self.settings.timeout if timeout is None else timeout
        end = time.monotonic() + timeout
        self._closing.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._pipeline is not None:
            self._pipeline.close(max(0.1, end - time.monotonic()))
        if self.dropped:
            print(f"supervise: telemetry: {self.dropped} log records were not sent to {where(self.settings)}", file=sys.stderr)


class Lookups:
    """Lookups counted by a process of their own (`supervise mcp`, `supervise search`): the
    count goes out once per export interval and when the process ends."""

    def __init__(self, settings: Telemetry, via: str, project: str | None = None):
        self.settings, self.via = settings, via
        self.base = {"supervise.lookup.via": via, **({"supervise.project": signals.project_name(project)} if project else {})}
        self._pipeline: Any = None
        self._failed = False

    @classmethod
    def configured(cls, via: str, project: str | None = None) -> Lookups:
        """As the settings say; a broken config.toml counts nothing (`supervise` says what is wrong)."""
        from .. import config

        try:
            return cls(config.load().telemetry, via, project)
        except SuperviseError:
            return cls(Telemetry(), via, project)

    def count(self, tool: str) -> None:
        if not self.settings.on or self._failed:
            return
        try:
            if self._pipeline is None:
                from . import sdk

                self._pipeline = sdk.Pipeline(self.settings, lambda: None)
            self._pipeline.add("supervise.lookups", 1, {**self.base, "supervise.lookup.tool": tool})
        except (ImportError, SuperviseError):
            self._failed = True  # a lookup is never refused for it; the recorder says why once

    def close(self, timeout: float) -> None:
        if self._pipeline is not None:
            self._pipeline.close(timeout)
