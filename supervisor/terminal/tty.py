"""The user's terminal: raw mode that is always restored, its size, and writing to it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import struct
import termios
import tty
from collections.abc import Mapping

DEFAULT_SIZE = (80, 24)
TYPED_AHEAD_READS = 64  # lines (or EOF keys) typed before supervise started, at most
_TIOCGPTN = 0x80045430  # Linux's number for the PTY's slave (not in the termios module)


class Raw:
    """The user's terminal in raw mode while inside `with`, restored on every way out, with
    the modes it had before kept to give back."""

    def __init__(self, fd: int | None):
        self.fd = fd if fd is not None and os.isatty(fd) else None
        self.saved = termios.tcgetattr(self.fd) if self.fd is not None else None
        self.typed_ahead = b""  # whole lines the terminal held as supervise started (typed_ahead()), for the agent

    def __enter__(self) -> "Raw":
        if self.fd is not None and self.saved is not None:
            self.typed_ahead = typed_ahead(self.fd, self.saved)  # its modes, as just read
        self.enter()
        return self

    def __exit__(self, *exc) -> None:
        self.leave()

    def enter(self) -> None:
        if self.fd is not None:
            tty.setraw(self.fd, termios.TCSADRAIN)

    def leave(self) -> None:
        if self.fd is not None and self.saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def stop(self) -> bool:
        """The agent stopped (Ctrl-Z): give the shell its terminal back in its own modes and
        stop as the agent did; return once the shell continues us (`fg`), raw again. False,
        without stopping, where no job-control shell could ever continue us."""
        if self.fd is None or not _job_control(self.fd):
            return False
        self.leave()
        os.kill(os.getpid(), signal.SIGSTOP)
        self.enter()
        return True


def typed_ahead(fd: int, modes: list) -> bytes:
    """The whole lines a terminal in canonical mode holds, read before raw mode is taken, each
    EOF key (Ctrl-D) in them given back as the key. Left to raw mode, an EOF key comes out as a
    NUL: `script` with its input at an end types one as it starts, and the agent got a `^@`.
    A partial line stays: raw mode reads it as it was typed."""
    if not modes[3] & termios.ICANON:
        return b""
    key = modes[6][termios.VEOF]
    key = key if isinstance(key, bytes) and key != b"\0" else b"\x04"
    out = b""
    with contextlib.suppress(OSError):
        for _ in range(TYPED_AHEAD_READS):  # a hung-up terminal reads as an end for ever
            if not select.select([fd], [], [], 0)[0]:
                break
            line = os.read(fd, 4096)  # a canonical read gives one line at most (4095 bytes)
            out += line if line.endswith(b"\n") else line + key
    return out


def _job_control(fd: int) -> bool:
    """Whether a shell could continue us after a stop: we are in the terminal's foreground,
    and our parent is in the same session but another process group (a job-control shell,
    not `exec supervise` or an ssh command, whose stop would be for good)."""
    try:
        parent = os.getppid()
        return os.tcgetpgrp(fd) == os.getpgrp() and os.getsid(parent) == os.getsid(0) and os.getpgid(parent) != os.getpgrp()
    except OSError:
        return False


def size(*fds: int | None, env: Mapping[str, str] | None = None) -> tuple[int, int]:
    """(cols, rows) of the first terminal among `fds`; else $COLUMNS/$LINES; else 80x24."""
    for fd in fds:
        if fd is None:
            continue
        with contextlib.suppress(OSError):
            if os.isatty(fd):
                rows, cols, _, _ = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
                if cols and rows:
                    return cols, rows
    env = os.environ if env is None else env
    try:
        return int(env.get("COLUMNS", "")), int(env.get("LINES", ""))
    except ValueError:
        return DEFAULT_SIZE


def unread_input(master: int) -> int | None:
    """Bytes the agent's terminal holds that the agent has not read yet (complete lines only,
    in canonical mode), asked of its slave side; None where that cannot be known."""
    try:
        number = struct.unpack("I", fcntl.ioctl(master, getattr(termios, "TIOCGPTN", _TIOCGPTN), b"\0" * 4))[0]
        slave = os.open(f"/dev/pts/{number}", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0" * 4))[0]
    except OSError:
        return None
    finally:
        os.close(slave)


def canonical(fd: int) -> bool | None:
    """Whether the terminal (a PTY's master: its slave's modes) reads whole lines; None: unknown."""
    try:
        return bool(termios.tcgetattr(fd)[3] & termios.ICANON)
    except termios.error:
        return None


def set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def write_all(fd: int, data: bytes) -> bool:
    """Write all of `data`, waiting (a second at a time) while the terminal is full. False if
    the terminal went away (EIO, EPIPE)."""
    view = memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                waiter = select.poll()
                waiter.register(fd, select.POLLOUT)
                waiter.poll(1000)
    except OSError:
        return False
    return True
