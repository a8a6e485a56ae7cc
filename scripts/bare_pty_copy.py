#!/usr/bin/env python3
"""The baseline for benchmarks: the least a PTY passthrough can do.

Runs a command under a PTY and copies bytes both ways with one select loop, nothing else
(no recording, no rendering, no resize handling).
"""

import os
import pty
import select
import sys
import tty


def main(argv: list[str]) -> int:
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    restore = None
    if os.isatty(0):
        import termios

        restore = termios.tcgetattr(0)
        tty.setraw(0)
    fds = [master, 0]
    try:
        while True:
            ready, _, _ = select.select(fds, [], [])
            if master in ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if not data:
                    break
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view) :]
            if 0 in ready:
                data = os.read(0, 65536)
                if not data:
                    fds.remove(0)
                else:
                    os.write(master, data)
    finally:
        if restore is not None:
            import termios

            termios.tcsetattr(0, termios.TCSADRAIN, restore)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
