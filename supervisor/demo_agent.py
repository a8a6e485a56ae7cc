"""The agent of `supervise demo`: a scripted stand-in for a coding agent that works, compacts
(and so forgets), and then carries on from the session context supervise gives it back.
Nothing real is run; it only prints what an agent would, at a human pace."""

from __future__ import annotations

import re
import select
import sys
import time

REQUEST = "add a --json flag to the report command"
WAIT = 30.0  # seconds to wait for the context after compacting

BOLD, DIM, CYAN, RESET = "\x1b[1m", "\x1b[2m", "\x1b[36m", "\x1b[0m"


def say(text: str = "", pause: float = 0.35) -> None:
    sys.stdout.write(text + "\r\n" if not text.endswith("\r\n") else text)
    sys.stdout.flush()
    time.sleep(pause)


def caption(text: str) -> None:
    say(f"{CYAN}── {text} ──{RESET}", 0.6)


def read_context(wait: float) -> str:
    """The next line that holds the context, read straight from the terminal (an end of
    input, such as the ^D a supervisor passes on when its own stdin is not a terminal, is
    not an answer: keep waiting), or "" after `wait` seconds."""
    import os

    deadline = time.monotonic() + wait
    pending = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([0], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        data = os.read(0, 65536)
        if not data:
            time.sleep(0.05)
            continue
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            text = line.decode("utf-8", errors="replace")
            if "[supervise]" in text:
                return text
    return ""


def main() -> int:
    caption("supervise demo: a coding agent runs under supervise, which records it and watches its screen")
    say(f"demo› {REQUEST}")
    for line in (
        "● Read src/report.py",
        "  ⎿ 120 lines: def report(rows, fmt='text') ...",
        "● Edit src/report.py: add the --json option to the report command",
        "  decided: use json.dumps(indent=2) because the CI job diffs the output",
        "● Bash(pytest tests/test_report.py)",
        "  ⎿ 1 failed: KeyError: 'total' in src/report.py line 88",
        "● Edit src/report.py: default 'total' to 0 when a row has no amount",
        "  fixed: the KeyError in src/report.py; tests/test_report.py now passes",
        "● Write tests/test_report_json.py: a test for --json",
    ):
        say(line, 0.45)
    caption("the agent's context is full: it compacts, and its memory of the work is gone")
    sys.stdout.write(f"✻ Compacting conversation… {DIM}(esc to interrupt){RESET}")  # a busy line, as agents draw it
    sys.stdout.flush()
    time.sleep(1.5)
    say("\x1b[2K\r✻ Conversation compacted")
    say("  (the agent now remembers nothing of the above)", 0.5)
    caption("supervise saw the compaction and summarized the session; it types the context back at the prompt")
    sys.stdout.write("demo› ")
    sys.stdout.flush()
    line = read_context(WAIT)
    if "[supervise]" not in line:
        say("demo: no context arrived; I cannot carry on.")
        return 1
    sys.stdout.write(f"✻ Reading it… {DIM}(esc to interrupt){RESET}")  # busy, as agents are once a turn is sent
    sys.stdout.flush()
    time.sleep(0.8)
    say("\x1b[2K\r", 0)
    caption("the agent got its context back and carries on with what it had lost")
    files = sorted(set(re.findall(r"(?:src|tests)/[\w./]+\.py", line)))
    request = re.search(r"Original request \(verbatim\): (.+?) Current task", line)
    say(f"demo: my task: {request.group(1) if request else '(not in the context)'}")
    say(f"demo: files I had touched: {', '.join(files) or '(none in the context)'}")
    if "KeyError" in line:
        say("demo: the KeyError in src/report.py was already fixed: not doing it again")
    say("● Bash(pytest tests/test_report_json.py)")
    say("  ⎿ 2 passed", 0.5)
    say(f"{BOLD}demo: done: --json added and tested.{RESET}")
    sys.stdout.write("demo› ")  # idle again, a moment, as an agent waiting for the next turn
    sys.stdout.flush()
    time.sleep(1.0)
    say("")
    return 0


if __name__ == "__main__":
    sys.exit(main())
