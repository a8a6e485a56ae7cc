"""The recorder's end of an agent's hook (its profile's): a Unix socket in a private folder.

Each connection is one hook run: a JSON line in (the hook's input), a JSON line out
(`{"context": "..."}`, empty when there is nothing to give). Answers may wait for a context
that is still being made, so every connection gets its own thread.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path


class HookServer(threading.Thread):
    def __init__(self, path: str, answer: Callable[[dict], str | None], fail: Callable[[str, BaseException], None]):
        super().__init__(name="supervise-hooks", daemon=True)
        self.path = path
        self.answer = answer
        self.fail = fail
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)  # the socket file is the user's alone
        try:
            Path(path).unlink(missing_ok=True)
            self.sock.bind(path)
        finally:
            os.umask(old)
        self.sock.listen(8)

    def run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(conn,), name="supervise-hook", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                request = json.loads(data or b"{}")
                context = self.answer(request) or ""
                conn.sendall(json.dumps({"context": context}).encode() + b"\n")
            except Exception as exc:  # a hook that gets nothing is harmless; say so once
                self.fail("context hook", exc)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() (a bare close may not)
        except OSError:
            pass
        try:
            self.sock.close()
        finally:
            Path(self.path).unlink(missing_ok=True)
