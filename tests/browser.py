"""A real browser for the tests: Debian's headless Chromium, driven over its DevTools pipe
(`--remote-debugging-pipe`: JSON messages, each ended by a NUL, on fds 3 and 4), so one
browser signs in from a URL and then loads other pages with the cookie it was given, as a
person's browser does."""

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

from conftest import require

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
]


class Chromium:
    def __init__(self, profile: Path):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        require(exe is not None, "Chromium is not installed (apt-get install chromium)")
        to_r, self._to = os.pipe()  # we write, it reads on fd 3
        self._from, from_w = os.pipe()  # it writes on fd 4, we read

        def fds() -> None:
            a, b = os.dup(to_r), os.dup(from_w)  # above 4 both: dup2 cannot clobber the other
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_r)
        os.close(from_w)
        self._buffer = b""
        self._id = 0
        self._events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=self.session)

    def call(self, method: str, session: str | None = None, timeout: float = 60, **params) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self._to, json.dumps(message).encode() + b"\0")
        while True:
            got = self._read(timeout)
            if got.get("id") == self._id:
                assert "error" not in got, (method, got["error"])
                return got.get("result", {})
            self._events.append(got)

    def _read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0 and select.select([self._from], [], [], left)[0], "Chromium did not answer"
            data = os.read(self._from, 1 << 20)
            assert data, "Chromium closed its pipe"
            self._buffer += data
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def load(self, url: str, timeout: float = 60) -> str:
        """Navigate to `url`, wait for the page (after any redirect) to load; its HTML."""
        self._events = [e for e in self._events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", session=self.session, url=url)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            self._events.append(self._read(deadline - time.monotonic()))
        return self.evaluate("document.documentElement.outerHTML")

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", session=self.session, expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", session=self.session)["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to, self._from):
            os.close(fd)
