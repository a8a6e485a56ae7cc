"""The agent's input: lines from the terminal, read by one thread all the time, so a line
typed while the agent works is not lost: it is queued (and said so) and handed to the loop
at its next step. At the prompt, lines that arrive together (a paste) are one message."""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable

PASTE_GAP = 0.05  # seconds: lines closer than this to the one before came in one paste


class Lines:
    def __init__(self, stream=None, busy: Callable[[], bool] = lambda: False, say: Callable[[str], None] = lambda text: None):
        self._stream = stream or sys.stdin
        self._busy = busy
        self._say = say
        self._lines: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._read, name="agent-input", daemon=True).start()

    def _read(self) -> None:
        for line in self._stream:
            line = line.rstrip("\n")
            if self._busy() and line.strip():
                self._say(f"  ↳ queued: {line}\n")
            self._lines.put(line)
        self._lines.put(None)  # end of input

    def message(self) -> str | None:
        """The next message (blocking); None at the end of input."""
        first = self._lines.get()
        if first is None:
            return None
        lines = [first]
        while True:
            try:
                more = self._lines.get(timeout=PASTE_GAP)
            except queue.Empty:
                break
            if more is None:
                self._lines.put(None)
                break
            lines.append(more)
        return "\n".join(lines)

    def queued(self) -> list[str]:
        """What was typed while the agent worked (taken now, without waiting)."""
        out: list[str] = []
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return out
            if line is None:
                self._lines.put(None)
                return out
            if line.strip():
                out.append(line)
