"""Fault suite, load and a full disk: each case names what must survive, and checks it.

| fault                                     | what is kept                                            |
| ----------------------------------------- | ------------------------------------------------------- |
| ten sessions at once writing one database | every session, event and context row; no "database is   |
| while `supervise browse` reads it         | locked" anywhere; every page Datasette serves meanwhile; |
|                                           | every key typed into an eleventh session, in order       |
| the disk fills up while recording         | the child runs on and the user's terminal keeps working; |
|                                           | on exit the user is told what was not recorded           |
"""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pexpect
import pytest

from conftest import SUPERVISE, require
from helpers import RAW_ECHO, served, spawn
from supervisor.store.database import Store

SESSIONS = 10
COMPACTIONS = 12  # per session: each is two events and a context round

# A busy agent: output, and a compaction (start, end) every few lines, as fast as it goes.
BUSY = f"""
import sys, time
for i in range({COMPACTIONS}):
    for j in range(300):
        print(f'working on step {{i}}.{{j}}: ' + 'x' * 60)
    print('Compacting conversation')
    time.sleep(0.2)
    print('Conversation compacted')
    time.sleep(0.2)
print('all done')
"""


def _reader(browse, stop: threading.Event, results: list) -> None:
    """A person browsing while the sessions run: the tables, a timeline, a search."""
    pages = [
        "/supervise/sessions.json?_shape=array",
        "/supervise/events.json?_shape=array&_size=100",
        "/supervise/contexts.json?_shape=array&_size=20",
        "/supervise/log_chunks.json?_search=working&_size=5",
    ]
    while not stop.is_set():
        for page in pages:
            try:
                with browse.get(page) as r:
                    results.append((page, r.status, r.read()[:200]))
            except Exception as exc:  # an HTTP error is a failure to report, not to raise here
                results.append((page, getattr(exc, "code", None), str(exc).encode()))


@pytest.mark.slow
def test_ten_sessions_write_one_database_while_it_is_browsed(home, tmp_path):
    subprocess.run([*SUPERVISE, "--", "true"], check=True, capture_output=True)  # the database exists
    stop, pages = threading.Event(), []
    with served() as browse:
        reader = threading.Thread(target=_reader, args=(browse, stop, pages))
        reader.start()
        busy = [
            subprocess.Popen(
                [*SUPERVISE, "--agent", "demo", "--inject", "off", "--", sys.executable, "-c", BUSY],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for _ in range(SESSIONS)
        ]
        # an eleventh session, interactive: what is typed comes back whole, in order
        typed = "".join(chr(ord("a") + i % 26) for i in range(200)) + "."
        c = spawn(["--", sys.executable, "-c", RAW_ECHO])
        c.expect_exact("echo ready")
        for ch in typed:
            c.send(ch)
            c.expect_exact(ch)
        c.expect(pexpect.EOF, timeout=60)
        errors = [p.communicate(timeout=180)[1].decode() for p in busy]
        stop.set()
        reader.join(30)
    assert all(p.returncode == 0 for p in busy), errors
    assert not any("locked" in e for e in errors), errors
    store = Store.open_default()
    try:
        sessions = [s for s in store.sessions() if s["agent"] == "demo"]
        assert len(sessions) == SESSIONS and all(s["status"] == "completed" for s in sessions)
        for s in sessions:
            # Every event the recorder wrote is in the database: its markers in the recording
            # (written by the same call) match the rows one for one. (Under this load a
            # starved recorder catches up by joining output, and compactions that close
            # together count as one: detection, not storage.)
            stored = [e["kind"] for e in store.events(s["id"]) if e["kind"].startswith("compaction")]
            assert stored and stored == _markers(s["cast_path"]), s["id"]
            assert "compaction_finished" in stored and store.contexts(s["id"]), s["id"]
            err = (Path(s["cast_path"]).parent / "recorder.err").read_text()
            assert "locked" not in err and "Traceback" not in err, err
    finally:
        store.close()
    assert len(pages) >= 8, "the browser got too few pages to say anything"
    failed = [(page, status, body) for page, status, body in pages if status != 200]
    assert not failed, failed[:5]


def _markers(cast_path: str) -> list[str]:
    with open(cast_path, encoding="utf-8") as fh:
        fh.readline()
        return [event[2] for event in map(json.loads, fh) if event[1] == "m" and event[2].startswith("compaction")]


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MB tmpfs as the data dir (root only: mount)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        require(False, "mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m,mode=0700", "tmpfs", str(mount)], capture_output=True, text=True)
    require(done.returncode == 0, f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


FILLING = r"""
import sys, time
print('child started', flush=True)
for i in range(400):
    sys.stdout.write(f'line {i:06d} ' + 'y' * 100 + '\n')
    if i % 50 == 0:
        sys.stdout.flush(); time.sleep(0.02)
sys.stdout.flush()
line = sys.stdin.readline()
print('child read: ' + line.strip(), flush=True)
"""


@pytest.mark.slow
def test_a_full_disk_keeps_the_child_and_the_terminal_and_says_what_was_lost(small_disk, monkeypatch):
    home = small_disk / "home"
    monkeypatch.setenv("SUPERVISE_HOME", str(home))
    subprocess.run([*SUPERVISE, "--", "true"], check=True, capture_output=True)  # the database, while there is room
    # fill the disk to its last few hundred KB
    with open(small_disk / "ballast", "wb", buffering=0) as fh:  # unbuffered: nothing left over to fail again at close
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    os.truncate(small_disk / "ballast", os.path.getsize(small_disk / "ballast") - 200_000)
    c = spawn(["--", sys.executable, "-c", FILLING.replace("range(400)", "range(40000)")])
    c.timeout = 60
    c.expect_exact("child started")
    c.expect_exact("line 039999")  # every line reaches the terminal though nothing more can be written
    c.sendline("still typing")
    c.expect_exact("child read: still typing")
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0, c.before[-3000:]  # the child's status, not ours
    said = c.before
    assert "supervise: recording failed ([Errno 28] No space left on device)" in said, said[-1500:]
    assert "of the session after it are not in" in said and "hint: free some space" in said, said[-1500:]
    assert "Traceback" not in said and "internal error" not in said
