"""The recorder's end of an agent's hook (its profile's): a Unix socket in a private folder.

Each connection is one hook run: a JSON line in (the hook's input), a JSON line out
(`{"context": "..."}`, empty when there is nothing to give). Answers may wait for a context
that is still being made, so every connection gets its own thread. The supervisor binds it
before the agent starts and hands it over; the recorder accepts once it knows what is due at
the start (a resumed session's context, a brief), so a hook that asks at once is not told
"nothing".
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path


def listen(path: str) -> socket.socket:
    """A listening socket at `path`, the user's alone. Bound before the agent starts, so its
    first hook finds it whatever the recorder's start-up costs (it waits in the backlog)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        Path(path).unlink(missing_ok=True)
        sock.bind(path)
        sock.listen(8)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    return sock


def adopted(fd: int | None, keep: bool) -> socket.socket | None:
    """The listening socket the supervisor handed over as `fd`; closed at once when this run
    does not answer hooks (an ask is then refused, never left waiting)."""
    if fd is None:
        return None
    sock = socket.socket(fileno=fd)
    if keep:
        sock.set_inheritable(False)  # (handed over inheritable): nothing the recorder runs holds it open
        return sock
    sock.close()
    return None


class HookServer(threading.Thread):
    def __init__(
        self,
        path: str,
        answer: Callable[[dict], str | None],
        fail: Callable[[str, BaseException], None],
        listener: socket.socket | None = None,
    ):
        super().__init__(name="supervise-hooks", daemon=True)
        self.path = path
        self.answer = answer
        self.fail = fail
        self.sock = listener if listener is not None else listen(path)

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
