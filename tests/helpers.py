"""Driving the real `supervise` under a real PTY."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pexpect

from conftest import SUPERVISE
from supervisor.store.database import Store

SHELL_ENV = {"PS1": "$ ", "TERM": "xterm-256color", "HISTFILE": "/dev/null"}

# A raw-mode child that says `echo ready` and echoes each key back until a "."
RAW_ECHO = r"""
import os, sys, tty
tty.setraw(0)
os.write(1, b'echo ready\r\n')
got = b''
while not got.endswith(b'.'):
    got += os.read(0, 100)
    os.write(1, got[-1:])
"""


def demo_agent(*flags: str, pace: float = 0.25) -> list[str]:
    """The demo agent's command, taking the user's turns after its script (--more), at `pace`
    of a person's reading pace: a test waits on what it shows, not on its pauses."""
    return [sys.executable, "-P", "-m", "supervisor.cli.demo_agent", "--more", "--pace", str(pace), *flags]


def spawn(args, cols=100, rows=30, env=None, **kw):
    e = dict(os.environ, **SHELL_ENV, **(env or {}))
    return pexpect.spawn(SUPERVISE[0], [*SUPERVISE[1:], *args], env=e, dimensions=(rows, cols), encoding="utf-8", timeout=15, **kw)


def shell(cols=100, rows=30):
    """A plain bash under a PTY, to run supervise from as a user would."""
    e = dict(os.environ, **SHELL_ENV)
    sh = pexpect.spawn("bash", ["--norc", "--noprofile"], env=e, dimensions=(rows, cols), encoding="utf-8", timeout=15)
    sh.expect_exact("$ ")
    return sh


def stty_state(sh) -> str:
    sh.sendline("stty -g; echo STTY-DONE")
    sh.expect(r"([0-9a-f:]+)\r\nSTTY-DONE")
    state = sh.match.group(1)
    sh.expect_exact("$ ")
    return state


def latest():
    store = Store.open_default()
    try:
        return store.latest()
    finally:
        store.close()


def session(sid):
    store = Store.open_default()
    try:
        s = store.resolve(sid)
        s["events"] = store.events(s["id"])
        return s
    finally:
        store.close()


def wait_for(predicate, timeout=10.0, interval=0.05, what=""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time" + (f": {what}" if what else ""))


def recorder_done(sid, timeout=120.0):
    """Wait for session `sid`'s recorder to exit: it makes the session's last context round
    after `supervise` itself has exited."""
    from procs import is_recorder, session_processes

    wait_for(lambda: not [p for p in session_processes(sid) if is_recorder(p)], timeout, interval=0.2)


def cast_events(path):
    with open(path, encoding="utf-8") as fh:
        header = json.loads(fh.readline())
        return header, [json.loads(line) for line in fh]


class Browse:
    """A running `supervise browse`: its base URL, the sign-in URL it printed, and `get`, a
    request signed in from that URL (as the user's browser is, once it opened it)."""

    def __init__(self, base: str, sign_in: str):
        self.base, self.sign_in = base, sign_in
        self._opener = None

    def signed_in(self):
        if self._opener is None:
            import http.cookiejar

            self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            self._opener.open(self.sign_in, timeout=10).read()
        return self._opener

    def get(self, path: str, timeout: float = 10):
        return self.signed_in().open(self.base + path, timeout=timeout)


@contextlib.contextmanager
def served(*args: str):
    """`supervise browse` on a free port of 127.0.0.1, answering; yields a Browse."""
    import re

    proc = subprocess.Popen([*SUPERVISE, "browse", "--port", "0", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        said = proc.stderr.readline()
        found = re.search(r"open (http://127\.0\.0\.1:(\d+)/-/auth-token\?token=\w+) ", said)
        assert found, said + proc.stderr.read() if proc.poll() is not None else said
        base = f"http://127.0.0.1:{found.group(2)}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", int(found.group(2))), timeout=2):
                    break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.3)
        yield Browse(base, found.group(1))
    finally:
        proc.terminate()
        proc.wait(10)


def table_pages(db, table) -> list[int]:
    """The pages of `table`'s b-tree in the database file `db` (dbstat), every write
    checkpointed into the file first."""
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        conn.execute("pragma wal_checkpoint(truncate)")
        return [p for (p,) in conn.execute("select pageno from dbstat where name = ? order by pageno", [table])]
    finally:
        conn.close()


def overwrite_pages(db, pages) -> None:
    """Garbage over each of `pages` of the database file `db`, byte by byte."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn:
        size = conn.execute("pragma page_size").fetchone()[0]
    with open(db, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(b"\xde\xad\xbe\xef" * (size // 4))
