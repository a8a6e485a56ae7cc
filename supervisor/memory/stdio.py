"""MCP over stdio, the part of it a tool server needs, with the standard library: JSON-RPC
2.0 messages a line each. `initialize` is answered at once, from what the server says of
itself and its tools (the store and the search are imported only after it, while the client
reads the answer); `ping`, `tools/list` and `tools/call`, and the empty resources and prompts
lists. A call runs on a thread of its own, so a slow one holds up no other; one writer
thread writes each answer whole. A method we do not serve gets -32601 (a client that probes
`server/discover` then falls back to `initialize`), a line that is not JSON -32700, and the
server goes on; notifications are taken without a word. The client closing stdin ends it
(calls in flight answered first)."""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

# The handshake's versions we speak, the newest last: a client's own is echoed if it is one.
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = -32700, -32600, -32601, -32602

Call = Callable[[str, dict], "tuple[str, bool]"]  # tool, arguments -> (text, is it an error)


class Server:
    def __init__(self, about: dict, tools: list[dict], call: Call, warm: Callable[[], object] | None = None):
        """`about`: name, version, instructions; `tools`: as tools/list lists them; `call`:
        carries a call out (on a thread of the call's); `warm`: run once after the handshake."""
        self.about, self.tools, self.call, self.warm = about, tools, call, warm
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._calls: list[threading.Thread] = []

    def serve(self, source: BinaryIO | None = None, out: BinaryIO | None = None) -> int:
        writer = threading.Thread(target=self._writer, args=(out or sys.stdout.buffer,), name="supervise-mcp-out", daemon=True)
        writer.start()
        for raw in source or sys.stdin.buffer:
            if raw.strip():
                self.take(raw)
        for thread in self._calls:
            thread.join()
        self._outbox.put(None)
        writer.join()
        return 0

    def _writer(self, out: BinaryIO) -> None:
        while (line := self._outbox.get()) is not None:
            try:
                out.write(line)
                out.flush()
            except (BrokenPipeError, ValueError):  # the client is gone
                return

    def take(self, raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return self._error(None, PARSE_ERROR, "Parse error")
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
                return None  # an answer to a request of ours: we make none
            return self._error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST, "Invalid Request")
        method, params = message["method"], message.get("params")
        if "id" not in message:
            return None  # a notification: initialized, cancelled, roots changed...
        ident = message["id"]
        params = params if isinstance(params, dict) else {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            self._answer(ident, self._hello(asked if asked in VERSIONS else VERSIONS[-1]))
            if self.warm is not None:
                warm, self.warm = self.warm, None
                threading.Thread(target=warm, name="supervise-mcp-warm", daemon=True).start()
        elif method == "ping":
            self._answer(ident, {})
        elif method == "tools/list":
            self._answer(ident, {"tools": self.tools})
        elif method == "resources/list":
            self._answer(ident, {"resources": []})
        elif method == "prompts/list":
            self._answer(ident, {"prompts": []})
        elif method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str):
                return self._error(ident, INVALID_PARAMS, "Invalid params", "tools/call needs a tool's name")
            thread = threading.Thread(target=self._tool, args=(ident, name, arguments if isinstance(arguments, dict) else {}), daemon=True)
            self._calls = [t for t in self._calls if t.is_alive()] + [thread]
            thread.start()
        else:
            self._error(ident, NO_METHOD, "Method not found", method)
        return None

    def _hello(self, version: str) -> dict:
        return {
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"listChanged": False, "subscribe": False},
                "prompts": {"listChanged": False},
            },
            "serverInfo": {"name": self.about["name"], "version": self.about["version"]},
            "instructions": self.about["instructions"],
        }

    def _tool(self, ident: Any, name: str, arguments: dict) -> None:
        try:
            text, failed = self.call(name, arguments)
        except Exception as exc:  # a fault of ours: said to the agent as one line, the server goes on
            text, failed = f"supervise: internal error in {name}: {type(exc).__name__}", True
        self._answer(ident, {"content": [{"type": "text", "text": text}], "isError": failed})

    def _answer(self, ident: Any, result: dict) -> None:
        self._send({"jsonrpc": "2.0", "id": ident, "result": result})

    def _error(self, ident: Any, code: int, message: str, data: object = None) -> None:
        error: dict[str, object] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._send({"jsonrpc": "2.0", "id": ident, "error": error})

    def _send(self, message: dict) -> None:
        self._outbox.put(json.dumps(message, ensure_ascii=False).encode() + b"\n")
