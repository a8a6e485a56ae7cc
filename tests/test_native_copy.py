"""The PTY loop's copy of the child's output, in C and in Python (where the package was built
without a C compiler): each case runs the real loop over a real child on a real PTY, both
ways, and checks what the user's terminal and the recording got."""

import os
import signal
import sys
import threading
import time

import pytest
from ptyprocess import PtyProcess

from conftest import require
from supervisor import channel
from supervisor.terminal import pty_loop
from supervisor.terminal.pty_loop import PtyLoop


def test_the_installed_package_copies_in_c():
    require(pty_loop.native is not None, "supervisor.terminal._copy was not built (no C compiler at install?)")
    loop = PtyLoop(None, None, stdin_fd=None, stdout_fd=None, size=lambda: (80, 24))
    assert loop._pump is not None


@pytest.fixture(params=["c", "python"])
def native_copy(request):
    if request.param == "c":
        require(pty_loop.native is not None, "supervisor.terminal._copy was not built")
    return request.param == "c"


def read_all(fd, sink, delay=0.0, seen=None):
    """Read `fd` to its end into `sink`; `seen(sink)` after each read (on this thread: it
    may pause the reading)."""
    time.sleep(delay)
    while True:
        try:
            data = os.read(fd, 1 << 20)
        except OSError:
            return
        if not data:
            return
        sink.append(data)
        if seen is not None:
            seen(sink)


def run_loop(child_code, native_copy, *, act=None, terminal_gone_after=None, recorder_delay=0.0, recorder_seen=None):
    """Run the loop over a Python child with a pipe as the user's terminal. `act(stdin_w,
    shown)` runs meanwhile (`shown`: what the terminal got so far). Returns (what the terminal
    got, the recorded output frames, the outcome, how long the loop ran). `recorder_seen(frames)`
    is called on the recorder's side after each read of its pipe."""
    child = PtyProcess.spawn([sys.executable, "-c", child_code], dimensions=(24, 80))
    frames_r, frames_w = os.pipe()
    term_r, term_w = os.pipe()
    stdin_r, stdin_w = os.pipe()
    frames, shown = [], []
    threads = [threading.Thread(target=read_all, args=(frames_r, frames, recorder_delay, recorder_seen))]
    if terminal_gone_after is None:
        threads.append(threading.Thread(target=read_all, args=(term_r, shown)))
    else:

        def read_then_go():
            got = 0
            while got < terminal_gone_after:
                data = os.read(term_r, 65536)
                shown.append(data)
                got += len(data)
            os.close(term_r)

        threads.append(threading.Thread(target=read_then_go))
    if act is not None:
        threads.append(threading.Thread(target=act, args=(stdin_w, shown)))
    for t in threads:
        t.start()
    outbox = channel.Outbox(frames_w)
    loop = PtyLoop(child, outbox, stdin_fd=stdin_r, stdout_fd=term_w, size=lambda: (80, 24), native_copy=native_copy)
    assert (loop._pump is not None) == native_copy
    started = time.monotonic()
    outcome = loop.run()
    took = time.monotonic() - started
    outbox.end(took, {})
    assert outbox.drain(30)
    for fd in (frames_w, term_w, stdin_w):
        os.close(fd)
    for t in threads:
        t.join(30)
    for fd in (frames_r, stdin_r) + ((term_r,) if terminal_gone_after is None else ()):
        os.close(fd)
    parsed, used = channel.parse_frames(b"".join(frames))
    assert used == sum(map(len, frames)), "a torn frame"
    output = [(t, p) for k, t, p in parsed if k == channel.OUTPUT]
    return b"".join(shown), output, outcome, took


# 8 MB of numbered lines with colours and multi-byte characters, so reads cut escape
# sequences and characters in two.
FLOOD = r"""
import sys
w = sys.stdout.buffer.write
for i in range(100_000):
    w(b'\x1b[3%dm%06d \xe2\x94\x82 caf\xc3\xa9 \xf0\x9f\x90\x8d %s\x1b[0m\n' % (i % 8, i, b'x' * (i % 40)))
"""


def expected_flood() -> bytes:
    out = []
    for i in range(100_000):
        out.append(b"\x1b[3%dm%06d \xe2\x94\x82 caf\xc3\xa9 \xf0\x9f\x90\x8d %s\x1b[0m\r\n" % (i % 8, i, b"x" * (i % 40)))
    return b"".join(out)


def test_a_flood_reaches_the_terminal_and_the_recording_byte_for_byte(native_copy):
    shown, output, outcome, _ = run_loop(FLOOD, native_copy)
    assert outcome.exit_code == 0
    expected = expected_flood()
    assert shown == expected
    assert b"".join(p for _, p in output) == expected
    times = [t for t, _ in output]
    assert times == sorted(times) and 0 <= times[0]


def flooding(shown, at_least=100_000):
    """Wait until the terminal has had `at_least` bytes: the flood is under way."""
    deadline = time.monotonic() + 60  # (a hang guard)
    while sum(map(len, list(shown))) < at_least and time.monotonic() < deadline:
        time.sleep(0.01)


def test_keys_reach_the_child_in_the_middle_of_a_flood(native_copy):
    child = r"""
import sys, threading
done = threading.Event()
def flood():
    i = 0
    while not done.is_set():
        sys.stdout.write('%07d flood line\n' % i)
        i += 1
    sys.stdout.flush()
flooding = threading.Thread(target=flood)
flooding.start()
line = sys.stdin.readline()
done.set()
flooding.join()
print('GOT', line.strip(), flush=True)
"""

    def act(stdin_w, shown):
        flooding(shown)
        os.write(stdin_w, b"typed in the flood\r")

    shown, output, outcome, _ = run_loop(child, native_copy, act=act)
    assert b"GOT typed in the flood" in shown
    assert b"GOT typed in the flood" in b"".join(p for _, p in output)


def test_a_signal_in_a_flood_reaches_the_child_and_ends_the_loop(native_copy):
    """SIGTERM to supervise while the child prints without end: forwarded, and the loop
    (asleep in the copy, or busy in it) comes back to handle it."""
    # (it stops by itself after two minutes: a loop that never comes back fails, not hangs)
    child = "import sys, time\nend = time.monotonic() + 120\nwhile time.monotonic() < end:\n    sys.stdout.write('y' * 1000 + '\\n')"
    me = os.getpid()

    def act(stdin_w, shown):
        flooding(shown)
        os.kill(me, signal.SIGTERM)

    shown, output, outcome, _ = run_loop(child, native_copy, act=act)
    assert outcome.interrupted_by == signal.SIGTERM and outcome.signal == signal.SIGTERM
    assert len(shown) > 100_000
    assert b"".join(p for _, p in output).startswith(shown[: len(shown) // 2])


def test_when_the_terminal_goes_away_the_recording_goes_on(native_copy):
    shown, output, outcome, _ = run_loop(FLOOD, native_copy, terminal_gone_after=100_000)
    assert outcome.exit_code == 0
    assert b"".join(p for _, p in output) == expected_flood()


def test_a_recorder_that_falls_behind_still_gets_every_frame_in_order(native_copy):
    """The recorder's pipe fills (it starts reading a second late): what the pipe did not
    take waits in the loop and goes after, in order."""
    shown, output, outcome, _ = run_loop(FLOOD, native_copy, recorder_delay=1.0)
    assert shown == expected_flood()
    assert b"".join(p for _, p in output) == shown
    times = [t for t, _ in output]
    assert times == sorted(times)


def test_output_after_a_pause_is_an_event_of_its_own(native_copy):
    """Output read back to back joins one frame (one .cast event); output that came after a
    wait keeps its own time, so a replay shows the pause."""
    child = "import sys, time\nprint('first', flush=True)\ntime.sleep(0.5)\nprint('second', flush=True)"
    _, output, _, _ = run_loop(child, native_copy)
    first = next(t for t, p in output if b"first" in p)
    second = next(t for t, p in output if b"second" in p)
    assert second - first >= 0.45


def test_output_reaches_the_recorder_while_the_agent_is_quiet(native_copy, tmp_path):
    """A line, then quiet: the recorder (and the detector) has it at once, not a batch later.
    A burst that fills the pipe to a recorder busy for a moment, then quiet: what waited goes
    as soon as the recorder reads again, not when the agent next prints. The agent stays
    quiet until the recorder's side has what it printed (a loop that held it back until more
    output came would never send it: the agent gives up waiting and says so)."""
    got_line, got_burst = tmp_path / "got-line", tmp_path / "got-burst"
    child = (
        f"import os, sys, time\n"
        f"def until(path):\n"
        f"    end = time.monotonic() + 60\n"
        f"    while not os.path.exists(path):\n"
        f"        if time.monotonic() > end:\n"
        f"            print('gave up waiting for ' + path, flush=True)\n"
        f"            return\n"
        f"        time.sleep(0.01)\n"
        f"print('a single line', flush=True)\n"
        f"until({str(got_line)!r})\n"
        f"sys.stdout.write(''.join('%07d burst line\\n' % i for i in range(300_000)))\n"
        f"sys.stdout.flush()\n"
        f"until({str(got_burst)!r})\n"
        f"print('after the quiet', flush=True)\n"
    )
    state = {"pending": b"", "tail": b"", "paused": False}

    def seen(frames):
        """The recorder's side: the output in what it read (frames parsed as they complete)."""
        parsed, used = channel.parse_frames(state["pending"] + frames[-1])
        data = state["pending"] + frames[-1]
        state["pending"] = data[used:]
        out = state["tail"] + b"".join(p for k, _, p in parsed if k == channel.OUTPUT)
        state["tail"] = out[-64:]
        if b"a single line" in out:
            got_line.touch()
        if b"burst line" in out and not state["paused"]:
            state["paused"] = True
            time.sleep(0.5)  # busy for a moment: the pipe fills meanwhile
        if b"0299999 burst line" in out:
            got_burst.touch()

    shown, output, _, _ = run_loop(child, native_copy, recorder_seen=seen)
    assert b"gave up" not in shown
    recorded = b"".join(p for _, p in output)
    assert recorded.index(b"a single line") < recorded.index(b"0000000 burst line") < recorded.index(b"after the quiet")
