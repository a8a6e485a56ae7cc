"""What the fake model APIs share: a real HTTP server on 127.0.0.1 in a thread of its own,
recording every request, usable as a context manager, and runnable from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that hung up before its answer (a model call killed at its deadline) is
        what the tests make happen: no traceback for it. Anything else is printed as before."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class QuietHandler(BaseHTTPRequestHandler):
    """What every fake's request handler shares: HTTP/1.1, no logging, JSON answers."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def send_json(self, status: int, data, headers: dict | None = None, content_type: str = "application/json") -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(payload)


class FakeServer:
    name = "fake API"

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.requests: list = []
        self._lock = threading.Lock()
        self._server = _Server((host, port), self._handler())
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve(make: type[FakeServer], default_port: int, **extra) -> None:
    """Run a fake from the shell until Ctrl-C, optionally logging every request.
    `extra`: further options, name -> default (passed to the fake's constructor)."""
    ap = argparse.ArgumentParser(description=f"Run a {make.name} on 127.0.0.1.")
    ap.add_argument("--port", type=int, default=default_port)
    ap.add_argument("--log", help="append every request as a JSON line to this file")
    for name, default in extra.items():
        ap.add_argument("--" + name.replace("_", "-"), default=default)
    args = ap.parse_args()
    api = make(port=args.port, **{name: getattr(args, name) for name in extra}).start()
    print(f"{make.name} at {api.url} (Ctrl-C to stop)", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            if args.log and len(api.requests) > seen:
                with open(args.log, "a") as fh:
                    for r in api.requests[seen:]:
                        fh.write(json.dumps({"method": getattr(r, "method", "POST"), "path": r.path, "body": r.body}) + "\n")
                seen = len(api.requests)
    except KeyboardInterrupt:
        api.stop()
