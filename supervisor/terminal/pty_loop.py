"""The PTY loop: one thread, one selector, no polling.

Copies the user's keys to the child and the child's output to the user, unchanged, and
hands each chunk to an `Outbox` for the recorder process: a buffer written to a pipe only
as far as the pipe takes it, so recording, rendering and the database never slow the
terminal (they run on the other core, under another GIL). When there is only output to
copy, the copy runs in C (_copy.c) until something else needs the loop. Signals arrive as
bytes on a pipe (`signal.set_wakeup_fd`, as asciinema 2.x does), so the loop sleeps until
something happens.

The recorder may ask the loop to type the session context into the child (`Inject`). The
loop has the last word, as only it sees the user's keys: it declines while the user is
typing or has a half-typed line, and holds their keys back while it types, so the two
never interleave (typist.py). What it types waits in the same pending-input buffer as the
user's keys and is written only when the PTY is writable. Every effect is a parameter
(child, fds, outbox, size function), so tests run it with real tiny children.
"""

from __future__ import annotations

import errno
import io
import os
import selectors
import signal
import time
from collections.abc import Callable
from types import ModuleType

from ptyprocess import PtyProcess

from ..channel import COALESCE, Inbox, Inject, Message, Note, Outbox, Terminal
from . import tty
from .child import FORWARDED, HANDLED, Outcome, drain_pipe, escalation, exit_code_from_status, ignore, signal_groups
from .stdin import READ_SIZE, Stdin
from .keys import KeyWatch
from .termwrite import TermWriter
from .typist import Typist

native: ModuleType | None
try:
    from . import _copy as native
except ImportError:  # built where no C compiler was found: the loop copies in Python
    native = None

# After the child exits, grandchildren may still hold the PTY open: read what is already on
# its way, then stop once output goes quiet.
DRAIN_QUIET = 0.1
DRAIN_MAX = 2.0
# Output not yet taken by the recorder. Past this, we stop reading the PTY until half of it
# is gone: a flood (`yes`) then runs at the recorder's pace instead of filling memory.
BACKLOG_CAP = 16 << 20


class PtyLoop:
    def __init__(
        self,
        proc: PtyProcess,
        outbox: Outbox,
        *,
        inbox: Inbox | None = None,
        on_message: Callable[[Message], None] | None = None,
        stdin_fd: int | None,
        stdout_fd: int | None,
        size: Callable[[], tuple[int, int]],
        clock: Callable[[], float] = time.monotonic,
        start: float | None = None,
        record_input: bool = False,
        backlog_cap: int = BACKLOG_CAP,
        stop: Callable[[], bool] = lambda: False,
        native_copy: bool = True,
        stdin_pipe: int | None = None,
    ):
        self.proc = proc
        self.outbox = outbox
        self.inbox = inbox
        self.on_message = on_message or (lambda message: None)
        self.stdout_fd = stdout_fd
        self.size = size
        self.clock = clock
        self.start = clock() if start is None else start
        self.record_input = record_input
        self.backlog_cap = backlog_cap
        self.stop = stop
        self._stdin = Stdin(stdin_fd, stdin_pipe, clock)
        self._pending = bytearray()
        self._status: int | None = None
        self._interrupted_by: int | None = None
        self._escalate: list[tuple[float, int]] = []  # after a signal that ends the run: the next ones, when
        self._stdout_ok = stdout_fd is not None
        self._last_output = self._last_input = float("-inf")  # when the agent last printed, was last written to
        self._outbox_watched = False  # the recorder's pipe is in the selector (it was full)
        self._keys = KeyWatch()
        self._typist = Typist(self._keys)
        self._term = TermWriter(os.environ.get("TERM", ""))  # our own writes to the user's terminal
        # The copy in C stamps frames with CLOCK_MONOTONIC itself: only with the real clock.
        self._pump = native.pump if native is not None and native_copy and clock is time.monotonic else None

    # -- the loop -------------------------------------------------------------------------------

    def run(self, typed_ahead: bytes = b"") -> Outcome:
        """Copy until the agent has exited and gone quiet; `typed_ahead`: its first input (tty.py)."""
        master = self.proc.fd
        os.set_blocking(master, False)
        self._master_io = io.FileIO(master, "rb", closefd=False)
        self._read_buf = bytearray(READ_SIZE)
        self._read_view = memoryview(self._read_buf)
        sig_r, sig_w = os.pipe()
        for fd in (sig_r, sig_w):
            os.set_blocking(fd, False)
        old_handlers = {s: signal.signal(s, ignore) for s in HANDLED}
        old_wakeup = signal.set_wakeup_fd(sig_w, warn_on_full_buffer=False)
        sel = selectors.DefaultSelector()
        try:
            sel.register(master, selectors.EVENT_READ)
            sel.register(sig_r, selectors.EVENT_READ)
            if self.inbox is not None:
                sel.register(self.inbox.fd, selectors.EVENT_READ)
            self._stdin.register(sel)
            self._took_input(typed_ahead, self.clock())  # keys the user's terminal held before raw mode
            self._copy(sel, master, sig_r)
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for s, h in old_handlers.items():
                signal.signal(s, h)
            sel.close()
            for fd in (sig_r, sig_w):
                os.close(fd)
        self._write_stdout(self._term.close())
        code, sig = exit_code_from_status(self._status if self._status is not None else 0)
        return Outcome(code, sig, self._interrupted_by)

    def _copy(self, sel: selectors.BaseSelector, master: int, sig_r: int) -> None:
        drain_until: float | None = None
        master_mask = selectors.EVENT_READ
        inbox_fd = self.inbox.fd if self.inbox is not None else None
        while True:
            timeout = None
            now = self.clock()
            more_input = self._take_input(sel, master, now)
            master_mask = self._master_mask(sel, master, master_mask, drain_until)
            if more_input:
                timeout = 0.0
            elif drain_until is not None:
                timeout = max(0.0, min(DRAIN_QUIET, drain_until - now))
            typing_due = self._typist.next_due() if self._typist.holding is not None else None
            escalate_at = self._escalate[0][0] if self._escalate and self._status is None else None
            due = [at for at in (escalate_at, typing_due, self._stdin.eof.next_check(now)) if at is not None]
            if due:
                wait = max(0.0, min(due) - now)
                timeout = wait if timeout is None else min(timeout, wait)
            # Under heavy output, frames for the recorder go out in batches; before sleeping,
            # whatever is left goes out so the recorder (and the detector) see it at once.
            events = []
            if self._pump is not None and timeout is None and master_mask == selectors.EVENT_READ and not self._stdin.pipe_waiting:
                # Nothing due and only output to copy: the copy in C does it until a key, a
                # signal, a message or the recorder's pipe needs us.
                self.outbox.flush(force=True)
                self._watch_outbox(sel)
                if not self._pump_output(sel, master):
                    return
                events = sel.select(0)
            else:
                if self.outbox.pending and not self.outbox.blocked:
                    events = sel.select(0)
                    if not events:
                        self.outbox.flush(force=True)
                if not events:
                    self._watch_outbox(sel)
                    events = sel.select(timeout)
            now = self.clock()
            if drain_until is not None and (not events or now >= drain_until):
                return  # child gone and output quiet (or grandchildren keep talking too long)
            while self._escalate and now >= self._escalate[0][0] and self._status is None:
                signal_groups(self.proc, self._escalate.pop(0)[1])
            for key, mask in events:
                fd = key.fd
                if fd == master:
                    if mask & selectors.EVENT_READ:
                        if not self._read_master(master, now):
                            return
                        if drain_until is not None and now >= drain_until:
                            return
                    if mask & selectors.EVENT_WRITE:
                        self._write_master(master)
                elif fd == sig_r:
                    if self._handle_signals(sig_r, master, now) and drain_until is None:
                        drain_until = now + DRAIN_MAX
                elif fd == self.outbox.fd:
                    self.outbox.writable()
                elif fd == inbox_fd:
                    assert self.inbox is not None  # inbox_fd is its fd
                    for message in self.inbox.read():
                        if isinstance(message, Inject):
                            self._inject(message, now)
                        elif isinstance(message, Terminal):
                            self._write_stdout(self._term.put(message))
                        else:
                            self.on_message(message)
                    if self.inbox.closed:
                        sel.unregister(inbox_fd)
                        inbox_fd = None
                elif fd == self._stdin.fd:
                    self._took_input(self._stdin.read(sel), now)  # (the stdin pipe's room: its flush comes next pass)
            if self._typist.holding is not None:
                self._type_due(now)
            self.outbox.flush()

    def _master_mask(self, sel: selectors.BaseSelector, master: int, mask: int, drain_until: float | None) -> int:
        """What to wait for on the PTY: its output unless the recorder is too far behind, and
        room for our input while some waits."""
        # Once the child has exited, read the little that is left whatever the backlog.
        if self.outbox.pending > self.backlog_cap and drain_until is None:
            reading = False
        elif self.outbox.pending <= self.backlog_cap // 2 or drain_until is not None:
            reading = True
        else:
            reading = bool(mask & selectors.EVENT_READ)
        wanted = (selectors.EVENT_READ if reading else 0) | (selectors.EVENT_WRITE if self._pending else 0)
        if wanted != mask:
            if not wanted:
                sel.unregister(master)
            elif not mask:
                sel.register(master, wanted)
            else:
                sel.modify(master, wanted)
        return wanted

    def _read_master(self, master: int, now: float) -> bool:
        # readinto a reused buffer, then an exact-size copy: os.read(fd, 64K) allocates 64 KiB
        # and shrinks it, and chunks held while the recorder is behind fragment the heap
        # (peak memory under a flood: docs/benchmarks.md).
        try:
            n = self._master_io.readinto(self._read_buf)
        except BlockingIOError:
            return True
        except OSError as exc:
            if exc.errno == errno.EIO:  # every slave fd closed: the child and its children are gone
                self._reap(block=True)
                return False
            raise
        if n is None:
            return True
        if not n:
            self._reap(block=True)
            return False
        data = bytes(self._read_view[:n])
        self._last_output = now
        self._write_stdout(data)
        self._write_stdout(self._term.child(data))
        self.outbox.output(now - self.start, data)
        return True

    def _watch_outbox(self, sel: selectors.BaseSelector) -> None:
        """Before sleeping: wake when the recorder's pipe has room exactly while it is full
        (set just now by a flush, it must be in the selector before the sleep, or what waits
        for the pipe would wait for the agent's next output)."""
        if self.outbox.blocked != self._outbox_watched:
            if self.outbox.blocked:
                sel.register(self.outbox.fd, selectors.EVENT_WRITE)
            else:
                sel.unregister(self.outbox.fd)
            self._outbox_watched = self.outbox.blocked

    def _pump_output(self, sel: selectors.BaseSelector, master: int) -> bool:
        """Copy output in C (native.pump) until Python is needed; False at the end of output."""
        assert self._pump is not None and native is not None  # run() calls this only with the copy in C
        wake = [key.fd for key in sel.get_map().values() if key.fd not in (master, self.outbox.fd)]
        full = self.outbox.fd if self.outbox.blocked else -1
        stdout = self.stdout_fd if self._stdout_ok and self.stdout_fd is not None else -1
        why, frames, recent, echoed = self._pump(
            master, stdout, self.outbox.fd, not self.outbox.pending, wake, full, self.start, COALESCE, self.outbox.BATCH
        )
        if not echoed:  # the terminal went away: keep recording, stop echoing
            self._stdout_ok = False
        self.outbox.framed(frames)
        if frames:
            self._last_output = self.clock()
        if recent:
            self._write_stdout(self._term.child(recent))
        if why < 0:  # a read failed other than at the end of output (the Python path raises too)
            raise OSError(-why, os.strerror(-why))
        if why == native.END:
            self._reap(block=True)
            return False
        return True

    def _write_stdout(self, data: bytes) -> None:
        if self._stdout_ok and self.stdout_fd is not None and data and not tty.write_all(self.stdout_fd, data):
            self._stdout_ok = False  # the terminal went away (EIO, EPIPE): keep recording, stop echoing

    def _write_master(self, master: int) -> None:
        try:
            n = os.write(master, self._pending)
        except BlockingIOError:
            return
        except OSError:
            self._pending.clear()
            return
        del self._pending[:n]
        self._last_input = self.clock()

    def _took_input(self, data: bytes, now: float) -> None:
        """The user's input (from stdin, or typed ahead), on its way to the agent."""
        if not data:
            return
        if self.record_input or not self._stdin.is_tty:  # input from a file or a pipe is no secret keystroke
            self.outbox.input(now - self.start, data)
        if self._stdin.hand_on(data):
            return
        pressed = self._keys.keys(data, now, now - self.start)
        cancelled, ours = self._term.keys(pressed)
        for wait in cancelled:
            self.outbox.note(now - self.start, Note(wait, "cancelled", why="user typed"))
        self._write_stdout(ours)
        self._pending += self._typist.user(data)

    # -- typing for supervise ------------------------------------------------------------------

    def _inject(self, request: Inject, now: float) -> None:
        """Type the request's text (Enter follows a moment later), or decline it, saying why."""
        data, why = self._typist.request(request, now, child_exited=self._status is not None)
        if why:
            self.outbox.note(now - self.start, Note(request.id, "declined", why=why))
        self._pending += data

    def _type_due(self, now: float) -> None:
        data, note = self._typist.tick(now, now - self.start)
        self._pending += data
        if note is not None:
            self.outbox.note(now - self.start, note)

    def _take_input(self, sel: selectors.BaseSelector, master: int, now: float) -> bool:
        """Input that is not a terminal, between passes (stdin.py): True while a stdin file has
        more to give and room to take it (the loop does not sleep then)."""
        if self._stdin.settled:
            return False
        if self._stdin.wants_read(len(self._pending)):
            self._took_input(self._stdin.read(sel), now)
        if self._status is None:
            busy = bool(self._pending) or self._typist.holding is not None
            self._pending += self._stdin.settle(sel, master, now, busy, max(self._last_output, self._last_input))
        return self._stdin.wants_read(len(self._pending))

    def _handle_signals(self, sig_r: int, master: int, now: float) -> bool:
        """Returns True once the child has exited."""
        data = drain_pipe(sig_r)
        exited = False
        for signum in set(data):
            if signum == signal.SIGWINCH:
                self._sync_size(master, now)
            elif signum == signal.SIGCHLD:
                exited = self._reap(block=False, master=master) or exited
            elif signum in FORWARDED:
                self.outbox.signal(now - self.start, signum)
                signal_groups(self.proc, signum)
                ladder = escalation(signum, now, self._stdin.is_tty)
                if ladder:  # a signal to end the run: it ends, whether or not the agent listens
                    self._interrupted_by = signum
                    if not self._escalate:
                        self._escalate = ladder
        return exited or self._status is not None

    def _sync_size(self, master: int, now: float) -> None:
        cols, rows = self.size()
        try:
            tty.set_size(master, cols, rows)
        except OSError:
            return
        self.outbox.resize(now - self.start, cols, rows)

    def _child_stopped(self, master: int) -> None:
        """The agent stopped itself or was stopped by its terminal (Ctrl-Z): left alone, the
        user would face a frozen agent with no shell. Stop with it, and when the shell
        continues us, continue the agent at the window's size now."""
        self.outbox.event(self.clock() - self.start, "suspended", {})
        stopped = self.stop()
        now = self.clock()
        if stopped:
            self.outbox.event(now - self.start, "resumed", {})
            self._sync_size(master, now)
        signal_groups(self.proc, signal.SIGCONT)

    def _reap(self, block: bool, master: int | None = None) -> bool:
        if self._status is not None:
            return True
        try:
            pid, status = os.waitpid(self.proc.pid, 0 if block else os.WNOHANG | os.WUNTRACED)
        except ChildProcessError:
            return True
        if pid == 0:
            return False
        if os.WIFSTOPPED(status):
            if master is not None:
                self._child_stopped(master)
            return False
        self._status = status
        self.proc.terminated = True
        return True
