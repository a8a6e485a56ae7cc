"""The search index keeps up with the text logs: a running session's lines are found while it
runs, whatever it is; a session's end is indexed once, whoever else indexes meanwhile; a
session whose recorder was stopped before its end was indexed is caught up, said in a line.
Real sessions, real processes, a real database."""

import json
import sqlite3
import sys
import threading

import pexpect

from conftest import run_cli
from helpers import latest, spawn, wait_for
from supervisor.recording import logindex
from supervisor.store.database import Store


def chunks(store, sid):
    return store.conn.execute('select start, "end" from log_chunks where session_id = ? order by start', [sid]).fetchall()


def covered_once(spans, size):
    """The chunks lie end to end over the log's first `size` bytes: none twice, none missing."""
    return spans and spans[0][0] == 0 and spans[-1][1] == size and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_two_writers_indexing_the_same_stretch_at_once_index_it_once(tmp_path):
    """Both passes read where the index ends before either writes (the recorder's last pass
    meeting another writer): the second finds the stretch taken and writes nothing of it."""
    first = Store(tmp_path / "s.db")
    sid = first.create_session(command="x", argv=["x"], cwd="/")["id"]
    second = Store(tmp_path / "s.db")
    log = tmp_path / "session.log"
    log.write_text("".join(f"line {n} of the flood\n" for n in range(20_000)))
    mine = logindex.plan(first, sid, log, logindex.BLOCK)
    theirs = logindex.plan(second, sid, log, logindex.BLOCK)
    assert mine == theirs and len(mine) > 1
    assert logindex.commit(first, mine) == len(mine)
    assert logindex.commit(second, theirs) == 0
    logindex.finish(second, sid, log)
    assert covered_once(chunks(first, sid), log.stat().st_size)
    assert first.conn.execute("select log_indexed from sessions where id = ?", [sid]).fetchone() == (1,)


def test_a_plain_command_is_found_while_it_runs(tmp_path, home):
    """Not an agent: a command printing a line every half second. A line is logged once it
    scrolls off the screen; it is found within seconds, while the command still runs."""
    script = 'for i in $(seq 1 120); do echo "tick $i heron$i"; sleep 0.5; done'
    child = spawn(["--", "sh", "-c", script], rows=10, cwd=str(tmp_path))
    try:
        child.expect_exact("heron14", timeout=30)  # heron3 has scrolled off a 10-row screen
        sid = latest()["id"]
        found = wait_for(
            lambda: (lambda p: p.returncode == 0 and p)(run_cli("search", "heron3", "--json", cwd=tmp_path)),
            10,
            what="heron3 found by search",
        )
        assert json.loads(found.stdout)[0]["session_id"] == sid
        assert child.isalive() and latest()["status"] == "active"
    finally:
        child.terminate(force=True)


HEAVY = r"""
import sys, time
w = sys.stdout.write
end = time.monotonic() + 90
n = 0
while time.monotonic() < end:  # build lines about as fast as rendering goes (a backlog most of the time)
    w("".join(f"compiling unit {n + i} of the heavy build\n" for i in range(500)))
    n += 500
    if n == 50_000:
        w("the bittern line, printed once\n")
    sys.stdout.flush()
    time.sleep(0.002)
"""


def drain(child) -> None:
    while True:
        try:
            child.read_nonblocking(1 << 20, timeout=1)
        except pexpect.TIMEOUT:
            continue
        except (pexpect.EOF, OSError, ValueError):
            return


def test_a_line_printed_amid_heavy_output_is_found_while_the_output_goes_on(tmp_path, home):
    """Output heavy enough that rendering has a backlog most of the time: the indexer takes
    smaller passes but keeps going, so a line is found while the program still floods."""
    child = spawn(["--", sys.executable, "-c", HEAVY], cwd=str(tmp_path))
    try:
        child.expect_exact("the bittern line", timeout=60)
        sid = latest()["id"]
        reading = threading.Thread(target=drain, args=(child,), daemon=True)
        reading.start()  # read on, as a terminal does, or the output stops
        found = wait_for(  # (nothing found yet is exit 1)
            lambda: (lambda p: p.returncode == 0 and json.loads(p.stdout))(run_cli("search", "bittern", "--json", cwd=tmp_path)),
            30,
            what="the bittern line found by search",
        )
        assert [hit["session_id"] for hit in found] == [sid]
        assert child.isalive() and latest()["status"] == "active"
    finally:
        child.terminate(force=True)


def test_the_end_of_a_session_whose_recorder_was_stopped_is_indexed_by_the_next_search(tmp_path, home):
    """A recorder killed before its last pass leaves the index short of the log and the
    session not marked indexed: the next search indexes the rest, says so once, and finds it."""
    lines = [f"line {n} osprey{n}" for n in range(3000)]
    run_cli("--", "sh", "-c", 'for n in $(seq 0 2999); do echo "line $n osprey$n"; done', cwd=tmp_path, check=True)
    sid = latest()["id"]
    log = home / "sessions" / sid / "session.log"
    assert log.read_text().splitlines() == lines
    with sqlite3.connect(home / "supervise.db") as db:  # as a recorder killed mid-session leaves it
        half = db.execute('select max("end") from log_chunks where session_id = ?', [sid]).fetchone()[0] // 2
        db.execute('delete from log_chunks where session_id = ? and "end" > ?', [sid, half])
        db.execute("update sessions set log_indexed = 0, status = 'interrupted' where id = ?", [sid])
    assert run_cli("search", "osprey2999", cwd=tmp_path).returncode == 0
    said = run_cli("search", "osprey2998", "--json", cwd=tmp_path)
    assert json.loads(said.stdout)[0]["session_id"] == sid
    store = Store(home / "supervise.db")
    try:
        assert covered_once(chunks(store, sid), log.stat().st_size)
    finally:
        store.close()
    again = run_cli("search", "osprey2997", cwd=tmp_path)
    assert "indexed the end" not in again.stderr  # said once: the session is whole now


def test_the_catch_up_is_said_in_one_line(tmp_path, home):
    run_cli("--", "sh", "-c", "echo the plover line", cwd=tmp_path, check=True)
    sid = latest()["id"]
    with sqlite3.connect(home / "supervise.db") as db:
        db.execute("delete from log_chunks where session_id = ?", [sid])
        db.execute("update sessions set log_indexed = 0, status = 'interrupted' where id = ?", [sid])
    found = run_cli("search", "plover", cwd=tmp_path)
    assert found.returncode == 0 and sid in found.stdout
    assert found.stderr.splitlines() == ["supervise: indexed the end of 1 session(s) for search (their recorder was stopped)"]
