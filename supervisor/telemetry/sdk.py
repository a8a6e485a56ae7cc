"""The OpenTelemetry SDK, set up from our settings: the resource, the OTLP exporters (HTTP, or
gRPC where its exporter is installed), a meter whose instruments are METRICS, and a logger.
Imported only when telemetry is on (the SDK is an optional extra), on the exporting thread.

The exporters say what went wrong through Python's logging; here it is caught (nothing of it
reaches a terminal) and kept as the latest reason, which export.py says once.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Callable

from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor, ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from .. import __version__
from ..config import Telemetry
from ..errors import SuperviseError
from ..plaintext import plain
from ..valueforms import pairs
from .signals import METRICS

SCOPE = "supervise"
ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


class Reasons(logging.Handler):
    """The exporters' latest complaint, as one plain line."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.latest: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        template = str(record.msg)
        args = record.args if isinstance(record.args, tuple) else (record.args,)
        if template.startswith("Transient error") and args:
            text = str(args[0])  # the cause of a retry
        elif self.latest and ("max retries" in template or "hutdown" in template):
            return  # "... due to timeout, max retries or shutdown", "Shutdown in progress": the cause said before is the news
        elif "max retries" in template:
            text = "no answer in time"  # (with no cause said before: the first request timed out)
        elif template.startswith("Failed to export %s batch code") and len(args) == 3 and args[1]:
            text = f"HTTP {args[1]} {args[2] or ''}".strip()  # what the endpoint answered
        else:
            try:
                text = record.getMessage()
            except Exception:
                text = template
        errno = ERRNO.search(text)  # requests' "HTTPConnectionPool(...): Max retries ... [Errno 111] Connection refused"
        text = "no answer in time" if "timed out" in text.lower() else errno.group(1) if errno else text
        self.latest = plain(text.splitlines()[0] if text else "", newlines=False)[:200]


def quiet() -> Reasons:
    """Catch the SDK's logging: to a handler that keeps the reason, never to stderr."""
    reasons = Reasons()
    logger = logging.getLogger("opentelemetry")
    logger.handlers[:] = [reasons]
    logger.propagate = False
    return reasons


def resource(settings: Telemetry) -> Resource:
    attributes = {"host.name": socket.gethostname(), **pairs(settings.resource_attributes)}
    attributes.update({"service.name": settings.service_name, "service.version": __version__})
    return Resource.create(attributes)


def _signal_url(settings: Telemetry, own: str | None, path: str) -> str:
    if own:
        return own
    base = settings.endpoint or ""
    return base if settings.protocol == "grpc" else base.rstrip("/") + "/" + path


def exporters(settings: Telemetry):
    """(the log exporter, the metric exporter) for the settings' protocol; None for a signal with no endpoint."""
    headers = pairs(settings.headers)
    logs_url = _signal_url(settings, settings.logs_endpoint, "v1/logs") if settings.endpoint or settings.logs_endpoint else None
    metrics_url = _signal_url(settings, settings.metrics_endpoint, "v1/metrics") if settings.endpoint or settings.metrics_endpoint else None
    if settings.protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetrics
        except ImportError:
            from .export import GRPC_HINT

            raise SuperviseError("telemetry over gRPC needs the OTLP gRPC exporter, which is not installed", GRPC_HINT) from None

        def grpc_args(url: str) -> dict:
            return {"endpoint": url, "insecure": url.startswith("http://"), "headers": headers, "timeout": settings.timeout}

        return (
            GrpcLogs(**grpc_args(logs_url)) if logs_url else None,
            GrpcMetrics(**grpc_args(metrics_url)) if metrics_url else None,
        )
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return (
        OTLPLogExporter(endpoint=logs_url, headers=headers, timeout=settings.timeout) if logs_url else None,
        OTLPMetricExporter(endpoint=metrics_url, headers=headers, timeout=settings.timeout) if metrics_url else None,
    )


class Counted(MetricExporter):
    """A metric exporter that tells `failed` of each export that did not go through (the
    metrics are cumulative: the next export carries what this one lost)."""

    def __init__(self, inner: MetricExporter, failed: Callable[[], None]):
        super().__init__(preferred_temporality=inner._preferred_temporality, preferred_aggregation=inner._preferred_aggregation)
        self.inner, self.failed = inner, failed

    def export(self, metrics_data, timeout_millis: float = 10_000, **kwargs) -> MetricExportResult:
        try:
            result = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception:
            result = MetricExportResult.FAILURE
        if result is not MetricExportResult.SUCCESS:
            self.failed()
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)


def _observer(observe: Callable[[str], list], name: str) -> Callable:
    return lambda options: observe(name)


class Collect(LogRecordProcessor):
    """Keeps what the logger emits for the exporting thread to send in one request (the
    SDK's batch processor wakes every second, with or without something to send)."""

    def __init__(self) -> None:
        self.records: list[ReadableLogRecord] = []

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        record = log_record.log_record
        record.context = Context()  # (no trace to carry)
        self.records.append(
            ReadableLogRecord(
                log_record=record,
                resource=log_record.resource or Resource.create({}),
                instrumentation_scope=log_record.instrumentation_scope,
                limits=log_record.limits,
            )
        )

    def take(self) -> list[ReadableLogRecord]:
        taken, self.records = self.records, []
        return taken

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class Pipeline:
    """A logger and a meter that export, for one process."""

    def __init__(self, settings: Telemetry, failed: Callable[[], None], observe: Callable[[str], list] | None = None):
        """`observe(name)`: the observations of an observable instrument, when the metrics are collected."""
        self.reasons = quiet()
        self.resource = resource(settings)
        self.log_exporter, metric_exporter = exporters(settings)
        self.collect = Collect()
        self.logs = LoggerProvider(resource=self.resource, shutdown_on_exit=False) if self.log_exporter is not None else None
        if self.logs is not None:
            self.logs.add_log_record_processor(self.collect)
        self.logger = self.logs.get_logger(SCOPE, __version__) if self.logs is not None else None
        self.reader = None
        if metric_exporter is not None:
            self.reader = PeriodicExportingMetricReader(
                Counted(metric_exporter, failed),
                export_interval_millis=settings.export_interval * 1000,
                export_timeout_millis=settings.timeout * 1000,
            )
        self.meters = MeterProvider(resource=self.resource, metric_readers=[self.reader] if self.reader else [], shutdown_on_exit=False)
        meter = self.meters.get_meter(SCOPE, __version__)
        self.instruments: dict = {}
        for name, (kind, unit, description) in METRICS.items():
            if kind == "counter":
                self.instruments[name] = meter.create_counter(name, unit=unit, description=description)
            elif observe is not None:
                make = meter.create_observable_counter if kind == "observable_counter" else meter.create_observable_up_down_counter
                make(name, callbacks=[_observer(observe, name)], unit=unit, description=description)

    def add(self, name: str, value: float, attributes: dict) -> None:
        self.instruments[name].add(value, attributes)

    def emit(self, event: str, body: str, attributes: dict, time_ns: int, warn: bool = False) -> None:
        if self.logger is not None:
            from opentelemetry._logs import SeverityNumber

            severity = SeverityNumber.WARN if warn else SeverityNumber.INFO
            self.logger.emit(
                timestamp=time_ns, severity_number=severity, severity_text=severity.name, body=body, attributes=attributes, event_name=event
            )

    def send_logs(self) -> int:
        """Send what was emitted since, in one request: how many records did not go through."""
        records = self.collect.take()
        if self.log_exporter is None or not records:
            return 0
        try:
            sent = self.log_exporter.export(records) is LogRecordExportResult.SUCCESS
        except Exception:
            sent = False
        return 0 if sent else len(records)

    def close(self, timeout: float) -> None:
        """The metrics' last export and the exporters shut, each within `timeout` (on threads
        of their own: an endpoint that never answers keeps none of it)."""
        parts = [lambda: self.meters.shutdown(timeout_millis=timeout * 1000)]
        if self.log_exporter is not None:
            parts.append(self.log_exporter.shutdown)
        threads = [threading.Thread(target=part, daemon=True, name="supervise-telemetry-close") for part in parts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout)
