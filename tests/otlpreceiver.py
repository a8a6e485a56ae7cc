"""A local OTLP receiver for the tests: a real HTTP server on 127.0.0.1 (and a gRPC one) that
decodes OTLP protobuf with the OpenTelemetry proto package and keeps what arrived. It can
answer, refuse (503), fail (500), or take a request and never answer; it can be stopped and
started again on the same port."""

from __future__ import annotations

import gzip
import os
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2


def value(any_value) -> object:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind)


def attributes(kvs) -> dict:
    return {kv.key: value(kv.value) for kv in kvs}


class Received:
    """What arrived, decoded: log records and metric points, each with its resource."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[dict] = []
        self.points: list[dict] = []
        self.requests = 0

    def logs(self, request: logs_service_pb2.ExportLogsServiceRequest) -> None:
        found = []
        for rl in request.resource_logs:
            resource = attributes(rl.resource.attributes)
            for sl in rl.scope_logs:
                for r in sl.log_records:
                    found.append(
                        {
                            "event": r.event_name,
                            "body": value(r.body),
                            "attributes": attributes(r.attributes),
                            "resource": resource,
                            "time_ns": r.time_unix_nano,
                            "severity": r.severity_text,
                        }
                    )
        with self.lock:
            self.requests += 1
            self.records.extend(found)

    def metrics(self, request: metrics_service_pb2.ExportMetricsServiceRequest) -> None:
        found = []
        for rm in request.resource_metrics:
            resource = attributes(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    kind = m.WhichOneof("data")
                    for p in getattr(m, kind).data_points:
                        number = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                        found.append(
                            {"name": m.name, "unit": m.unit, "value": number, "attributes": attributes(p.attributes), "resource": resource}
                        )
        with self.lock:
            self.requests += 1
            self.points.extend(found)

    def events(self, name: str | None = None) -> list[dict]:
        with self.lock:
            return [r for r in self.records if name is None or r["event"] == name]

    def latest(self, metric: str, **match) -> dict[tuple, float]:
        """The metric's latest value for each attribute set that has `match` (cumulative sums:
        the last export holds the total)."""
        out: dict[tuple, float] = {}
        with self.lock:
            for p in self.points:
                if p["name"] == metric and all(p["attributes"].get(k) == v for k, v in match.items()):
                    out[tuple(sorted(p["attributes"].items()))] = p["value"]
        return out

    def total(self, metric: str, **match) -> float:
        return sum(self.latest(metric, **match).values())


class HttpReceiver:
    """OTLP/HTTP on 127.0.0.1: /v1/logs and /v1/metrics. `mode`: ok, refuse (503), fail (500), hang."""

    def __init__(self, port: int = 0, received: Received | None = None):
        self.received = received or Received()
        self.mode = "ok"
        self.released = threading.Event()  # a hanging request lets go when set
        self.port = port
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HttpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if receiver.mode == "hang":
                    receiver.released.wait(120)
                    return
                if receiver.mode in ("refuse", "fail"):
                    self.send_response(503 if receiver.mode == "refuse" else 500)
                    self.end_headers()
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/logs":
                    receiver.received.logs(logs_service_pb2.ExportLogsServiceRequest.FromString(body))
                    answer = logs_service_pb2.ExportLogsServiceResponse()
                elif self.path == "/v1/metrics":
                    receiver.received.metrics(metrics_service_pb2.ExportMetricsServiceRequest.FromString(body))
                    answer = metrics_service_pb2.ExportMetricsServiceResponse()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = answer.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class GrpcReceiver:
    """OTLP/gRPC on 127.0.0.1 (insecure)."""

    def __init__(self, received: Received | None = None):
        self.received = received or Received()
        self.server = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> GrpcReceiver:
        # This process goes on forking (pexpect's children) while the server's threads run:
        # gRPC's fork handlers then break the child before its exec (an epoll error and an
        # early end of its output). Off for this process only, not for what it starts.
        was = os.environ.get("GRPC_ENABLE_FORK_SUPPORT")
        os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
        try:
            return self._start()
        finally:
            if was is None:
                del os.environ["GRPC_ENABLE_FORK_SUPPORT"]
            else:
                os.environ["GRPC_ENABLE_FORK_SUPPORT"] = was

    def _start(self) -> GrpcReceiver:
        import grpc
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc

        received = self.received

        class Logs(logs_service_pb2_grpc.LogsServiceServicer):
            def Export(self, request, context):
                received.logs(request)
                return logs_service_pb2.ExportLogsServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request, context):
                received.metrics(request)
                return metrics_service_pb2.ExportMetricsServiceResponse()

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), self.server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(0)


def exporting(env: dict) -> tuple[dict, HttpReceiver]:
    """`env` with supervise's OTLP export on, its metrics every 5 s, to a receiver started here
    (the benchmarks' export-on cases; stop it when done)."""
    receiver = HttpReceiver().start()
    return {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_METRIC_EXPORT_INTERVAL": "5000"}, receiver
