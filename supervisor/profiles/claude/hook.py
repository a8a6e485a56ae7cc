"""Claude Code's SessionStart hook: ask the supervisor for the session context.

Claude Code runs this (`python -I -S .../supervisor/giveback/hook.py`, standard library only, so it
starts in milliseconds) with the hook's JSON on stdin, after a compaction (source
`compact`), on `--resume` (`resume`) and, for a fresh resumed session, at start-up
(`startup`). It passes the JSON to the recorder over the Unix socket named in
SUPERVISE_HOOK_SOCKET and prints the context as `additionalContext`. Whatever goes wrong,
it prints nothing and exits 0: a broken side channel must never break the agent.
"""

from __future__ import annotations

import json
import os
import socket
import sys

SOCKET_ENV = "SUPERVISE_HOOK_SOCKET"


def ask(path: str, request: dict, timeout: float) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(json.dumps(request).encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    answer = json.loads(b"".join(chunks) or b"{}")
    return answer.get("context") or ""


def output(context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}})


def main() -> int:
    path = os.environ.get(SOCKET_ENV)
    if not path:
        return 0
    try:
        request = json.loads(sys.stdin.read() or "{}")
        context = ask(path, request, float(os.environ.get("SUPERVISE_HOOK_TIMEOUT", "45")))
    except (OSError, ValueError):
        return 0
    if context:
        print(output(context))
    return 0


if __name__ == "__main__":
    sys.exit(main())
