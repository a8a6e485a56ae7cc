"""The hook script an agent runs to ask supervise for its context (the agents whose hooks
take a command and read `hookSpecificOutput.additionalContext` from its output).

The agent runs it (`python -I -S .../supervisor/profiles/hook.py`, standard library only, so
it starts in milliseconds) with the hook's JSON on stdin: after a compaction (source
`compact`), on a resume (`resume`) and, when something waits to be given at the start, at
start-up (`startup`). It passes the JSON to the recorder over the Unix socket named in
SUPERVISE_HOOK_SOCKET and prints the context as the event's `additionalContext`. Whatever
goes wrong, it prints nothing and exits 0: a broken side channel must never break the agent.

Its arguments, for an agent whose hook says less: `source=NAME` names the source its event
does not carry (a hook before each of the user's prompts: `prompt`); `shape=flat` prints
`{"additionalContext": ...}` itself, for an agent that reads it at the top of the output.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys

SOCKET_ENV = "SUPERVISE_HOOK_SOCKET"
SCRIPT = os.path.abspath(__file__)


def command(*args: str) -> str:
    """The shell command that runs this script with supervise's own Python (and `args`)."""
    return shlex.join([sys.executable, "-I", "-S", SCRIPT, *args])


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


def output(context: str, event: str = "SessionStart", shape: str = "") -> str:
    if shape == "flat":
        return json.dumps({"additionalContext": context})
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def main(args: list[str]) -> int:
    path = os.environ.get(SOCKET_ENV)
    if not path:
        return 0
    given = dict(a.split("=", 1) for a in args if "=" in a)
    try:
        request = json.loads(sys.stdin.read() or "{}")
        if not isinstance(request, dict):
            return 0
        if given.get("source"):
            request["source"] = given["source"]
        context = ask(path, request, float(os.environ.get("SUPERVISE_HOOK_TIMEOUT", "45")))
    except (OSError, ValueError):
        return 0
    if context:
        event = request.get("hook_event_name")
        print(output(context, event if isinstance(event, str) and event else "SessionStart", given.get("shape", "")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
