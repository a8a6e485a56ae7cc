"""The agent's session leader on its terminal, doing for it what a job-control shell does.

It starts on the agent's PTY before the agent's command is known, and waits for it on a
pipe (`Orders`): `supervise -- AGENT` forks it as its very first step, so that it is ready
by the time supervise has imported itself and planned the run (one interpreter start less
before the agent's own); elsewhere it is started then, as `python -S -P jobshell.py ORDERS
[STDIN]` (by path, stdlib only). This module imports nothing of supervise's, either way.

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


class Started:
    """The parent's side of a job shell that waits for its orders."""

    def __init__(self, pid: int, master: int, orders: int, stdin: int | None):
        self.pid = pid
        self.master = master  # the PTY's master side: the PTY loop's from `launch` on
        self._orders: int | None = orders
        self.stdin = stdin  # the write end of a stdin pipe it holds the other end of, if any

    def launch(self, path: str, argv: list[str], cwd: str, env: dict[str, str], reads_stdin: bool) -> int | None:
        """Run the agent (`path`, found by the caller); the write end of its stdin pipe if it
        reads one."""
        head = [b"1" if reads_stdin and self.stdin is not None else b"0", os.fsencode(cwd), os.fsencode(path), b"%d" % len(argv)]
        env_entries = [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
        self._send(b"\0".join([*head, *map(os.fsencode, argv), *env_entries]))
        stdin, self.stdin = self.stdin, None
        if stdin is not None and not reads_stdin:
            os.close(stdin)
            return None
        return stdin

    def discard(self) -> None:
        """The run stopped before the agent started: the job shell ends (no orders), and is reaped."""
        if self._orders is None:
            return
        self._send(b"")
        for fd in (self.stdin, self.master):
            if fd is not None:
                os.close(fd)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    def _send(self, data: bytes) -> None:
        fd, self._orders = self._orders, None
        assert fd is not None, "a job shell takes one order"
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BrokenPipeError:
            pass  # it is gone: the PTY loop sees it end
        finally:
            os.close(fd)


def start(stdin_fd: int | None, forked: bool) -> Started:
    """A job shell on a new PTY, waiting for its orders. `stdin_fd`: ours, where the agent may
    read a stdin that is not a terminal (it gets a pipe if ours is not one). `forked`: the
    job shell is this process forked, which only a small process should be (its pages stay
    shared with ours until one of the two writes them); else a new interpreter."""
    orders_r, orders_w = os.pipe()
    pipe = os.pipe() if stdin_fd is not None and not os.isatty(stdin_fd) else None
    pid, master = os.forkpty()
    if pid == 0:
        try:
            os.close(orders_w)
            keep = [orders_r]
            if pipe is not None:
                os.close(pipe[1])
                keep.append(pipe[0])
            for low, high in zip([2, *sorted(keep)], [*sorted(keep), 1 << 20]):
                os.closerange(low + 1, high)
            if forked:
                serve(orders_r, pipe[0] if pipe else None)
            for fd in keep:
                os.set_inheritable(fd, True)
            os.execv(sys.executable, [sys.executable, "-S", "-P", __file__, *map(str, keep)])
        finally:
            os._exit(127)
    os.set_inheritable(master, False)
    os.close(orders_r)
    if pipe is not None:
        os.close(pipe[0])
    return Started(pid, master, orders_w, pipe[1] if pipe else None)


def serve(orders: int, stdin: int | None) -> None:
    """The job shell's life: its orders, then the agent run as they say (never returns)."""
    argv0 = b"the agent"
    try:
        chunks = []
        while chunk := os.read(orders, 65536):
            chunks.append(chunk)
        os.close(orders)
        if not chunks:
            os._exit(0)  # the run stopped before the agent started
        try:
            with open("/proc/self/comm", "w") as comm:
                comm.write("supervise-job")  # what `ps` and `top` show of it (a fork has supervise's command line)
        except OSError:
            pass
        fields = b"".join(chunks).split(b"\0")
        reads, cwd, path, count = fields[:4]
        argv = fields[4 : 4 + int(count)]
        argv0 = argv[0]
        env = dict(e.split(b"=", 1) for e in fields[4 + int(count) :])
        if stdin is not None:
            if reads == b"1":
                os.dup2(stdin, 0)
            os.close(stdin)
        os.chdir(cwd)
        main(path, argv, env)
    except OSError as exc:
        _cannot_run(argv0, exc)
        os._exit(126)
    finally:
        os._exit(1)


def _cannot_run(argv0: bytes, exc: OSError) -> None:
    """One line on the agent's terminal, which the user sees: no control bytes of the command's."""
    name = argv0.translate(None, bytes(range(32)) + b"\x7f")
    os.write(2, b"supervise: cannot run %s: %s\r\n" % (name, os.fsencode(exc.strerror or str(exc))))


def _start(path: bytes, argv: list[bytes], env: dict[bytes, bytes], mask: set) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            for name in ("SIGPIPE", "SIGXFSZ"):  # ignored by Python, and an ignored signal survives exec
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            os.setpgid(0, 0)
            _foreground(os.getpid())
            # The mask we were given, at the last moment: a signal meanwhile waits for the agent itself.
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.execve(path, argv, env)
        except OSError as exc:
            _cannot_run(argv[0], exc)
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
    try:
        os.setpgid(pid, pid)  # also here: whichever of the two runs first, the group exists
    except OSError:
        pass
    return pid


def main(path: bytes, argv: list[bytes], env: dict[bytes, bytes]) -> None:
    # A signal that comes before the relay is in place waits (blocked), then is relayed.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, RELAYED)
    agent = _start(path, argv, env, mask)

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
    serve(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None)
