"""The agent of `supervise demo`: a scripted stand-in for a coding agent that works, compacts
(and so forgets), and then carries on from the session context supervise gives it back.
Nothing real is run; it only prints what an agent would, at a human pace. With --more it
then takes the user's turns until /exit: each line is worked on, /compact compacts again
(a line may carry notes after " | ": "decided: ...", "error: ...", "fixed: ...", "todo: ..."),
and a line starting "limit:" hits a usage limit that resets --limit-seconds later (until
then every line is refused, as a subscription's agent does). --pace FACTOR scales its pauses
(1, the default: a person's reading pace; the tests go faster)."""

from __future__ import annotations

import os
import re
import select
import sys
import time
from datetime import datetime, timezone

REQUEST = "add a --json flag to the report command"
WAIT = 30.0  # seconds to wait for the context after compacting

BOLD, DIM, CYAN, RESET = "\x1b[1m", "\x1b[2m", "\x1b[36m", "\x1b[0m"
_pending = b""  # typed, not yet read as a line


def say(text: str = "", pause: float = 0.35) -> None:
    sys.stdout.write(text + "\r\n" if not text.endswith("\r\n") else text)
    sys.stdout.flush()
    _pause(pause)


def caption(text: str) -> None:
    say(f"{CYAN}── {text} ──{RESET}", 0.6)


def prompt() -> None:
    sys.stdout.write("demo› ")
    sys.stdout.flush()


def busy(what: str, seconds: float) -> None:
    """A busy line, as agents draw it, erased when done."""
    sys.stdout.write(f"✻ {what}… {DIM}(esc to interrupt){RESET}")
    sys.stdout.flush()
    _pause(seconds)
    sys.stdout.write("\x1b[2K\r")


def read_line(wait: float, wanted: str = "") -> str:
    """The next line typed that holds `wanted`, read straight from the terminal (an end of
    input, such as the ^D a supervisor passes on when its own stdin is not a terminal, is
    not an answer: keep waiting), or "" after `wait` seconds."""
    global _pending
    deadline = time.monotonic() + wait
    while True:
        while b"\n" in _pending:
            line, _pending = _pending.split(b"\n", 1)
            text = line.decode("utf-8", errors="replace").rstrip("\r")
            if wanted in text:
                return text
        ready, _, _ = select.select([0], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return ""
        data = os.read(0, 65536)
        if not data:
            time.sleep(0.05)
            continue
        _pending += data


def compact() -> None:
    busy("Compacting conversation", 1.5)
    say("✻ Conversation compacted")
    say("  (the agent now remembers nothing of the above)", 0.5)


def context_back() -> str:
    """At the prompt, the context supervise types back ("" if none came)."""
    prompt()
    line = read_line(WAIT, "[supervise]")
    if not line:
        say("demo: no context arrived; I cannot carry on.")
    return line


def carry_on(context: str) -> None:
    """What the agent learnt from the context it was given."""
    busy("Reading it", 0.8)
    files = sorted(set(re.findall(r"(?:src|tests)/[\w./]+\.py", context)))
    request = re.search(r"Original request \(verbatim\): (.+?) (?:Latest request|Current task)", context)
    say(f"demo: my task: {request.group(1) if request else '(not in the context)'}")
    say(f"demo: files I had touched: {', '.join(files) or '(none in the context)'}")
    if "KeyError" in context:
        say("demo: the KeyError in src/report.py was already fixed: not doing it again")


def _pause(seconds: float) -> None:
    time.sleep(seconds * _option("--pace", 1.0))


def _option(name: str, default: float) -> float:
    args = sys.argv[1:]
    return float(args[args.index(name) + 1]) if name in args else default


def conversation() -> int:
    """The user's turns until /exit: a line is worked on (an edit to each file it names,
    then the tests), /compact compacts and takes the context back."""
    limited_until = 0.0
    while True:
        prompt()
        line = read_line(600).strip()
        if line in ("", "/exit"):
            return 0
        if line.startswith("limit:") or time.time() < limited_until:
            busy("Working", 0.3)
            again = " again" if time.time() < limited_until else ""
            limited_until = limited_until if again else time.time() + _option("--limit-seconds", 60.0)
            reset = datetime.fromtimestamp(limited_until, timezone.utc)
            say(f"● Usage limit reached{again} · resets {reset:%H:%M:%S} (UTC)")
            continue
        if line == "/compact":
            compact()
            context = context_back()
            if not context:
                return 1
            carry_on(context)
            continue
        busy("Working", 0.3)
        work(line)


# What a user line may add after " | ", as a real agent's work would show it: a decision,
# a failing test, its fix, a step left for later (the fidelity benchmark plants facts so).
NOTES = {
    "decided": ("  decided: {}",),
    "error": ("● Bash(pytest -q)", "  ⎿ 1 failed: {}"),
    "fixed": ("  fixed: {}",),
    "todo": ("  ☐ {}",),
}


def work(line: str) -> None:
    """A turn's work: an edit to each file the request names, its notes, then the tests."""
    request, *notes = line.split(" | ")
    for path in re.findall(r"[\w/]+\.py", request) or ["src/report.py"]:
        say(f"● Edit {path}: {request}", 0.1)
    for note in notes:
        kind, _, what = note.partition(": ")
        for shown in NOTES.get(kind, ("  {}",)):
            say(shown.format(what or kind), 0.1)
    say("● Bash(pytest -q)", 0.1)
    say("  ⎿ all tests passed", 0.1)


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
    compact()
    caption("supervise saw the compaction and summarized the session; it types the context back at the prompt")
    context = context_back()
    if not context:
        return 1
    caption("the agent got its context back and carries on with what it had lost")
    carry_on(context)
    say("● Bash(pytest tests/test_report_json.py)")
    say("  ⎿ 2 passed", 0.5)
    say(f"{BOLD}demo: done: --json added and tested.{RESET}")
    if "--more" in sys.argv[1:]:
        return conversation()
    prompt()  # idle again, a moment, as an agent waiting for the next turn
    time.sleep(1.0)
    say("")
    return 0


if __name__ == "__main__":
    sys.exit(main())
