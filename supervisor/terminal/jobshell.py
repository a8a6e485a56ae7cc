"""The agent's session leader on its terminal, doing for it what a job-control shell does.

Run as `python -S -P jobshell.py PATH ARGV0 [ARGS...]` (by path, stdlib only: ~10 ms to
start); PATH is the agent's program, already found by supervise.

Why it exists: an agent spawned straight onto a PTY leads its own session, and its parent
(supervise) is in another session, so its process group is *orphaned*. The kernel discards
SIGTSTP for an orphaned group, so Ctrl-Z did nothing (`cat`) or left the agent waiting
forever for a SIGCONT in cooked mode (a Node TUI seen here leaves raw mode, then
`process.kill(0, "SIGTSTP")`). Here the agent gets a process group of its own, in the
foreground, under this process in the same session: its group is not orphaned, Ctrl-Z
stops it, and this process stops too, which supervise sees and passes up to the user's
shell. On SIGCONT the agent is put back in the foreground and continued.

Signals supervise forwards to this process go on to the agent's group; the agent's status
becomes this process's own (its exit code, or death by the same signal).
"""

import os
import signal
import sys

RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP, signal.SIGUSR1, signal.SIGUSR2)


def _foreground(pgid: int) -> None:
    # tcsetpgrp from outside the foreground group raises SIGTTOU unless it is ignored.
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(_terminal(), pgid)
    except OSError:
        pass  # not a terminal (tests without a PTY): nothing to hand over
    finally:
        signal.signal(signal.SIGTTOU, old)


def _terminal() -> int:
    """The terminal's fd: stdin, unless the agent was given a stdin pipe of its own."""
    return next((fd for fd in (0, 1, 2) if os.isatty(fd)), 0)


def _start(path: str, argv: list[str], mask: set) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            for name in ("SIGPIPE", "SIGXFSZ"):  # ignored by Python, and an ignored signal survives exec
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            os.setpgid(0, 0)
            _foreground(os.getpid())
            # The mask we were given, at the last moment: a signal meanwhile waits for the agent itself.
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.execv(path, argv)
        except OSError as exc:
            os.write(2, f"supervise: cannot run {argv[0]}: {exc.strerror}\r\n".encode())
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
    try:
        os.setpgid(pid, pid)  # also here: whichever of the two runs first, the group exists
    except OSError:
        pass
    return pid


def main(args: list[str]) -> None:
    # A signal that comes before the relay is in place waits (blocked), then is relayed.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, RELAYED)
    agent = _start(args[0], args[1:], mask)

    def relay(signum, frame):
        try:
            os.killpg(agent, signum)
        except OSError:
            pass

    for signum in RELAYED:
        signal.signal(signum, relay)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    while True:
        try:
            _, status = os.waitpid(agent, os.WUNTRACED)
        except ChildProcessError:
            os._exit(1)
        if os.WIFSTOPPED(status):
            os.kill(os.getpid(), signal.SIGSTOP)  # supervise sees this and stops in turn
            _foreground(agent)
            relay(signal.SIGCONT, None)
            continue
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig in RELAYED:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
            os._exit(128 + sig)  # a signal that does not kill by default (none we relay)
        os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main(sys.argv[1:])
