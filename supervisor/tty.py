"""The user's terminal: raw mode that is always restored, and its size."""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import termios
import tty
from collections.abc import Iterator

DEFAULT_SIZE = (80, 24)


@contextlib.contextmanager
def raw(fd: int | None) -> Iterator[None]:
    """Put `fd` in raw mode if it is a terminal; restore it on every way out."""
    if fd is None or not os.isatty(fd):
        yield
        return
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd, termios.TCSADRAIN)
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def size(*fds: int | None, env: dict | None = None) -> tuple[int, int]:
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


def set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
