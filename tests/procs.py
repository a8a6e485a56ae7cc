"""What /proc says of the processes the tests and benchmarks start: CPU time, memory,
children, and which of them are supervise's own (its recorder, its other roles)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (ppid is [1], utime [11], stime [12])."""
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (0.0 once it is gone)."""
    try:
        fields = _stat(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))


def pss_kb(pid: int) -> int:
    """Proportional set size (shared pages split among the processes that map them), in KB;
    0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def children(pid: int) -> list[int]:
    return [p for p, parent in _parents().items() if parent == pid]


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it."""
    kids: dict[int, list[int]] = {}
    for p, parent in _parents().items():
        kids.setdefault(parent, []).append(p)
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def cmdline(pid: int) -> list[str]:
    """`pid`'s command line, [] if it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def is_recorder(pid: int) -> bool:
    return "supervisor.run.recorder" in cmdline(pid)


# Interpreter options that take the next word as their value (`python -X importtime -m ...`).
_VALUED = {"-X", "-W"}


def supervise_role(pid: int) -> str | None:
    """Which of supervise's processes `pid` is, from its command line: "loop" (`supervise --
    AGENT`, `supervise run ...` or `python -m supervisor -- AGENT`: the PTY loop), "job shell"
    (terminal/jobshell.py, the agent's session leader: named `supervise-job`, since the one
    `supervise -- AGENT` forks has the loop's command line), "recorder"
    (supervisor.run.recorder), "mcp" (`supervise mcp` / `python -m supervisor mcp`, started by
    the agent); None for the rest (the agent's own, a command it ran, or gone)."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            if fh.read().strip() == "supervise-job":
                return "job shell"
    except OSError:
        return None
    return role_of(cmdline(pid))


def role_of(argv: list[str]) -> str | None:
    """`supervise_role` of a command line."""
    if not argv:
        return None
    module = script = None
    rest: list[str] = []
    if os.path.basename(argv[0]) == "supervise":  # started as the script itself
        script, rest = argv[0], argv[1:]
    else:
        i = 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
            if argv[i] == "-m" and i + 1 < len(argv):
                module, rest = argv[i + 1], argv[i + 2 :]
                break
            if argv[i] == "-c":
                return None
            i += 2 if argv[i] in _VALUED else 1
        else:
            if i < len(argv):
                script, rest = argv[i], argv[i + 1 :]
    if module == "supervisor.run.recorder":
        return "recorder"
    if script and script.replace(os.sep, "/").endswith("supervisor/terminal/jobshell.py"):
        return "job shell"
    if module == "supervisor" or (script and os.path.basename(script) == "supervise"):
        if rest[:1] == ["mcp"]:
            return "mcp"
        if "--" in rest and (rest[0] in ("--", "run") or rest[0].startswith("-")):
            return "loop"
    return None


def recorder_pid(supervise_pid: int) -> int:
    """The recorder process a supervise process started."""
    for p in children(supervise_pid):
        if is_recorder(p):
            return p
    raise AssertionError("no recorder process")


def session_processes(sid: str) -> list[int]:
    """Every live process that belongs to session `sid`: its recorder (the session id is in
    its command line) and the agent and its children (SUPERVISE_SESSION_ID in their env)."""
    return live(lambda cmdline, environ: sid.encode() in cmdline or f"SUPERVISE_SESSION_ID={sid}".encode() in environ)


def live(match: Callable[[bytes, list[bytes]], bool]) -> list[int]:
    """Live processes (not zombies, not this one) whose command line and environment (its
    NUL-separated entries) `match` takes."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if _stat(int(entry))[0] == "Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read().split(b"\0")
        except OSError:
            continue
        if match(cmdline, environ):
            found.append(int(entry))
    return found


def left_running(match: Callable[[bytes, list[bytes]], bool], wait: float = 10.0) -> list[int]:
    """`live(match)`, once the processes killed a moment ago are gone (SIGKILL cannot be
    ignored, but a process may still be on its way out): waited for, at most `wait` seconds;
    one that escaped the kill stays, and is returned."""
    found = live(match)
    deadline = time.monotonic() + wait
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = live(match)
    return found


def _parents() -> dict[int, int]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                out[int(entry)] = int(_stat(int(entry))[1])
            except OSError:
                continue
    return out
