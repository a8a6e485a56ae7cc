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


def read_all(fd, sink, delay=0.0, arrivals=None, pause=None):
    time.sleep(delay)
    began = time.monotonic()
    while True:
        if pause is not None and time.monotonic() - began >= pause[0]:
            time.sleep(pause[1])  # busy for a moment (the pipe fills meanwhile)
            pause = None
        try:
            data = os.read(fd, 1 << 20)
        except OSError:
            return
        if not data:
            return
        sink.append(data)
        if arrivals is not None:
            arrivals.append((time.monotonic(), sum(map(len, sink))))


def run_loop(child_code, native_copy, *, act=None, terminal_gone_after=None, recorder_delay=0.0, arrivals=None,
             recorder_pause=None):
    """Run the loop over a Python child with a pipe as the user's terminal. `act(stdin_w)`
    runs meanwhile. Returns (what the terminal got, the recorded output frames, the outcome).
    `arrivals` gets (when, bytes so far) for each read of the recorder's pipe; `recorder_pause`
    (at, seconds) stops reading it for a while."""
    child = PtyProcess.spawn([sys.executable, "-c", child_code], dimensions=(24, 80))
    frames_r, frames_w = os.pipe()
    term_r, term_w = os.pipe()
    stdin_r, stdin_w = os.pipe()
    frames, shown = [], []
    threads = [threading.Thread(target=read_all, args=(frames_r, frames, recorder_delay, arrivals, recorder_pause))]
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
        threads.append(threading.Thread(target=act, args=(stdin_w,)))
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
    def act(stdin_w):
        time.sleep(0.3)
        os.write(stdin_w, b"typed in the flood\r")

    shown, output, outcome, _ = run_loop(child, native_copy, act=act)
    assert b"GOT typed in the flood" in shown
    assert b"GOT typed in the flood" in b"".join(p for _, p in output)


def test_a_signal_in_a_flood_reaches_the_child_and_ends_the_loop(native_copy):
    """SIGTERM to supervise while the child prints without end: forwarded, and the loop
    (asleep in the copy, or busy in it) comes back to handle it."""
    child = "import sys\nwhile True:\n    sys.stdout.write('y' * 1000 + '\\n')"
    me = os.getpid()

    def act(stdin_w):
        time.sleep(0.5)
        os.kill(me, signal.SIGTERM)

    shown, output, outcome, took = run_loop(child, native_copy, act=act)
    assert outcome.interrupted_by == signal.SIGTERM and outcome.signal == signal.SIGTERM
    assert took < 10 and len(shown) > 100_000
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


def arrived_by(output, arrivals, marker: bytes) -> float:
    """When the recorder's side had read the frame holding `marker` (only output frames before it)."""
    upto = 0
    for _, payload in output:
        upto += channel.HEADER.size + len(payload)
        if marker in payload:
            break
    return next(when for when, got in arrivals if got >= upto)


@pytest.mark.slow
def test_output_reaches_the_recorder_while_the_agent_is_quiet(native_copy):
    """A line, then seconds of quiet: the recorder (and the detector) has it at once, not a
    batch later. A burst that fills the pipe to a recorder busy for a moment, then quiet:
    what waited goes as soon as the recorder reads again, not when the agent next prints."""
    child = ("import sys, time\nprint('a single line', flush=True)\ntime.sleep(1.5)\n"
             "sys.stdout.write(''.join('%07d burst line\\n' % i for i in range(300_000)))\n"
             "sys.stdout.flush()\ntime.sleep(4)\nprint('after the quiet', flush=True)")
    arrivals = []
    started = time.monotonic()
    _, output, _, _ = run_loop(child, native_copy, recorder_delay=0.0, arrivals=arrivals, recorder_pause=(1.6, 0.5))
    assert arrived_by(output, arrivals, b"a single line") - started < 1.2
    got_by = arrived_by(output, arrivals, b"0299999 burst line") - started
    assert got_by < 4.5, f"the burst's end reached the recorder {got_by:.1f} s in (the agent was quiet from ~2 s to 5.5 s)"
