#!/usr/bin/env python3
"""The floor a benchmark measures supervise's PTY loop against: `supervise` with a recorder
that does nothing (it reads the loop's frames and drops them), so the loop's own cost shows.

Usage: scripts/bench_floor.py [--slow] SUPERVISE-ARGS...   e.g. scripts/bench_floor.py -- cat big.txt
(--slow: the recorder sleeps 50 ms after each read, as one that cannot keep up: the loop's
backpressure). Runs supervise in this process with the recorder it starts replaced by this
script's; the session is recorded in the database as usual, its recording stays empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from supervisor import channel  # noqa: E402


def discard(in_fd: int, back_fd: int, slow: bool) -> None:
    while os.read(in_fd, 1 << 20):
        if slow:
            time.sleep(0.05)
    channel.send_message(back_fd, channel.Modes(""))
    channel.send_message(back_fd, channel.Done())


def main(argv: list[str]) -> None:
    if argv[:1] == ["--recorder"]:  # --recorder slow|fast IN OUT: started by the supervisor below
        discard(int(argv[2]), int(argv[3]), argv[1] == "slow")
        return
    slow = argv[:1] == ["--slow"]
    args = argv[1:] if slow else argv
    real = subprocess.Popen

    class Popen(real):  # type: ignore[misc, valid-type]
        def __init__(self, command, *rest, **options):
            if isinstance(command, list) and "supervisor.run.recorder" in command:  # [..., CONFIG, IN, OUT]
                command = [sys.executable, __file__, "--recorder", "slow" if slow else "fast", *command[-2:]]
            super().__init__(command, *rest, **options)

    subprocess.Popen = Popen  # type: ignore[misc]
    from supervisor.cli.entry import main as supervise

    sys.argv = ["supervise", *args]
    supervise()


if __name__ == "__main__":
    main(sys.argv[1:])
