"""What the fake model APIs share: a real HTTP server on 127.0.0.1 in a thread of its own,
recording every request, usable as a context manager, and runnable from the shell."""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeServer:
    name = "fake API"

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.requests: list = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
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
