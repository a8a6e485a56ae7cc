"""One empty OTLP export to the endpoint, as `supervise doctor` asks it: protobuf over HTTP
(an empty ExportLogsServiceRequest is no bytes at all), or the gRPC service where that
protocol is set; what the endpoint answered, as one line."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..config import Telemetry
from ..plaintext import plain
from ..valueforms import pairs


@dataclass(frozen=True)
class Answer:
    """What an OTLP endpoint answered a test export."""

    taken: bool  # the export was taken (HTTP 2xx, gRPC OK)
    said: str  # "HTTP 200", "HTTP 500 Internal Server Error", "gRPC UNIMPLEMENTED: ...", "no answer in 2 s", "Connection refused"
    status: int | None = None  # the HTTP status, if one came


def target(settings: Telemetry) -> tuple[str, str]:
    """(the URL asked, its signal): the logs' (the metrics' if only they are sent)."""
    signal = "logs" if settings.endpoint or settings.logs_endpoint else "metrics"
    own = settings.logs_endpoint if signal == "logs" else settings.metrics_endpoint
    if own:
        return own, signal
    base = settings.endpoint or ""
    return (base if settings.protocol == "grpc" else base.rstrip("/") + f"/v1/{signal}"), signal


def probe(settings: Telemetry, timeout: float) -> Answer:
    url, signal = target(settings)
    headers = pairs(settings.headers)
    if settings.protocol == "grpc":
        return _grpc(url, signal, headers, timeout)
    return _http(url, headers, timeout)


def _http(url: str, headers: dict[str, str], timeout: float) -> Answer:
    request = urllib.request.Request(url, data=b"", method="POST", headers={**headers, "Content-Type": "application/x-protobuf"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Answer(200 <= answer.status < 300, f"HTTP {answer.status}", answer.status)
    except urllib.error.HTTPError as exc:
        return Answer(False, plain(f"HTTP {exc.code} {exc.reason or ''}".strip(), newlines=False), exc.code)
    except (TimeoutError, socket.timeout):
        return Answer(False, f"no answer in {timeout:g} s")
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return Answer(False, f"no answer in {timeout:g} s")
        return Answer(False, plain(getattr(reason, "strerror", None) or str(reason), newlines=False))
    except (OSError, ValueError) as exc:  # the connection dropped mid-answer; a URL urllib cannot take
        return Answer(False, plain(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__, newlines=False))


def _grpc(url: str, signal: str, headers: dict[str, str], timeout: float) -> Answer:
    import grpc

    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc

    ask: Any = logs_service_pb2_grpc.LogsServiceStub if signal == "logs" else metrics_service_pb2_grpc.MetricsServiceStub
    request: Any = logs_service_pb2.ExportLogsServiceRequest() if signal == "logs" else metrics_service_pb2.ExportMetricsServiceRequest()
    parts = urlsplit(url if "://" in url else "http://" + url)
    address = f"{parts.hostname}:{parts.port or 4317}"
    channel = grpc.secure_channel(address, grpc.ssl_channel_credentials()) if parts.scheme == "https" else grpc.insecure_channel(address)
    try:
        ask(channel).Export(request, timeout=timeout, metadata=[(k.lower(), v) for k, v in headers.items()])
        return Answer(True, "gRPC OK")
    except grpc.RpcError as exc:
        code, details = exc.code(), str(exc.details() or "")
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return Answer(False, f"no answer in {timeout:g} s")
        if code == grpc.StatusCode.UNAVAILABLE and "refused" in details.lower():
            return Answer(False, "Connection refused")
        return Answer(False, plain(f"gRPC {code.name}: {details}"[:200], newlines=False))
    finally:
        channel.close()
