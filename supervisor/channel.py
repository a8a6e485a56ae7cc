"""The two pipes between the PTY loop and the recorder process, and every message on them.

Loop -> recorder: frames `kind (1 byte) | offset seconds (float64) | length (uint32) |
payload`: output, input, resizes, the loop's own events, its notes on what it did with a
request to type, and the end. The loop side only appends to a buffer and writes what the
pipe takes without blocking; if the recorder falls behind, the backlog waits in memory
rather than in the user's terminal.

Recorder -> loop: the messages below, one JSON line each, and only what the loop reads.

Before either: the recorder's configuration, on its command line (`RecorderConfig`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import select
import struct
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice

from .config import DEFAULT_EMULATOR

HEADER = struct.Struct("<cdI")
OUTPUT, INPUT, RESIZE, EVENT, END = b"o", b"i", b"r", b"e", b"q"
NOTE = b"n"  # the loop telling the recorder what it did with a request (JSON)
# Output within this many seconds of a run's first bytes is one event in the recording: the
# same replay to the eye, far fewer events (and frames) under heavy output.
COALESCE = 0.010
F_SETPIPE_SZ = 1031
IOV_MAX = 1024
PIPE_SIZE = 1 << 20


def widen(fd: int) -> None:
    """Ask for a 1 MiB pipe: fewer wake-ups on both sides. Best effort."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        pass


class Outbox:
    """Loop side: a sink that frames everything for the recorder process.

    Frames wait in a list of chunks (no copying into one growing buffer) and go out with
    `writev` in batches: one pipe write per BATCH bytes rather than per PTY read, or sooner
    when the loop is about to sleep (`flush(force=True)`).
    """

    BATCH = 65536

    def __init__(self, fd: int):
        self.fd = fd
        os.set_blocking(fd, False)
        widen(fd)
        self._chunks: deque[bytes] = deque()
        self.pending = 0  # bytes waiting
        self.broken: str | None = None  # why the recorder stopped listening, if it did
        self.blocked = False  # the pipe was full: wait for the selector to say it is writable

    def put(self, kind: bytes, t: float, payload: bytes) -> None:
        if self.broken is None:
            self._chunks.append(HEADER.pack(kind, t, len(payload)))
            self._chunks.append(payload)
            self.pending += HEADER.size + len(payload)

    def framed(self, frames: bytes) -> None:
        """Frames made elsewhere (the PTY loop's copy in C), to go after what waits."""
        if frames and self.broken is None:
            self._chunks.append(frames)
            self.pending += len(frames)

    def flush(self, force: bool = False) -> None:
        """Write what the pipe takes now, never blocking; small amounts wait unless forced."""
        if self.blocked or (not force and self.pending < self.BATCH):
            return
        chunks = self._chunks
        while chunks and self.broken is None:
            batch = list(islice(chunks, 0, IOV_MAX))
            try:
                n = os.writev(self.fd, batch)
            except BlockingIOError:
                self.blocked = True
                return
            except OSError as exc:
                self.broken = os.strerror(exc.errno or errno.EPIPE)
                chunks.clear()
                self.pending = 0
                return
            self.pending -= n
            if n < sum(map(len, batch)):
                self.blocked = True
            while n:
                head = chunks[0]
                if n >= len(head):
                    chunks.popleft()
                    n -= len(head)
                else:
                    chunks[0] = head[n:]
                    n = 0

    def writable(self) -> None:
        """The selector says the pipe has room again."""
        self.blocked = False
        self.flush(force=True)

    def drain(self, timeout: float) -> bool:
        """At the end (off the loop): wait until everything is written, up to `timeout`."""
        deadline = time.monotonic() + timeout
        self.writable()
        while self.pending and self.broken is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([], [self.fd], [], left)
            self.writable()
        return self.broken is None

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass

    # -- Sink ---------------------------------------------------------------------------------

    def output(self, t: float, data: bytes) -> None:
        self.put(OUTPUT, t, data)

    def input(self, t: float, data: bytes) -> None:
        self.put(INPUT, t, data)

    def resize(self, t: float, cols: int, rows: int) -> None:
        self.put(RESIZE, t, f"{cols}x{rows}".encode())

    def event(self, t: float, kind: str, detail: dict | None = None, marker: bool = False) -> None:
        self.put(EVENT, t, json.dumps({"kind": kind, "detail": detail or {}, "marker": marker}).encode())

    def signal(self, t: float, signum: int) -> None:
        import signal as _signal

        self.event(t, "signal", {"signal": _signal.Signals(signum).name})

    def note(self, t: float, note: Note) -> None:
        self.put(NOTE, t, json.dumps(asdict(note)).encode())

    def end(self, t: float, detail: dict) -> None:
        self.put(END, t, json.dumps(detail).encode())


def read_batches(fd: int) -> Iterator[list[tuple[bytes, float, bytes]]]:
    """Recorder side: the frames of each read, until the pipe closes (normally, or because
    the loop died). Reads into one buffer kept for the purpose: a new 1 MB bytes object a
    read, appended to what was left over, was much of the recorder's work under a flood."""
    widen(fd)
    buf = bytearray(PIPE_SIZE)
    view = memoryview(buf)
    held = 0  # bytes of a partial frame at the start of buf
    while True:
        if held == len(buf):  # one frame larger than the buffer: make room (no view may hold it meanwhile)
            view.release()
            buf.extend(bytes(len(buf)))
            view = memoryview(buf)
        try:
            n = os.readv(fd, [view[held:]])
        except InterruptedError:
            continue
        if not n:
            return
        end = held + n
        frames, used = parse_frames(view[:end])
        held = end - used
        buf[:held] = bytes(view[used:end])  # (a partial frame: a copy, not buf read onto itself)
        if frames:
            yield frames


def parse_frames(buf: bytes | bytearray | memoryview) -> tuple[list[tuple[bytes, float, bytes]], int]:
    """The whole frames at the start of `buf`, and how many bytes they took."""
    pos = 0
    frames = []
    while len(buf) - pos >= HEADER.size:
        kind, t, length = HEADER.unpack_from(buf, pos)
        end = pos + HEADER.size + length
        if end > len(buf):
            break
        frames.append((kind, t, bytes(buf[pos + HEADER.size : end])))
        pos = end
    return frames, pos


class Inbox:
    """Loop side: JSON-line messages from the recorder process."""

    def __init__(self, fd: int):
        self.fd = fd
        os.set_blocking(fd, False)
        self._partial = b""
        self.closed = False

    def read(self) -> list[Message]:
        messages = []
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                break
            self._partial += chunk
        *lines, self._partial = self._partial.split(b"\n")
        for line in lines:
            message = decode(line)
            if message is not None:
                messages.append(message)
        return messages

    def read_until(self, wanted: type, timeout: float) -> list[Message]:
        """Messages until one of type `wanted`, the pipe closes, or `timeout` passes."""
        deadline = time.monotonic() + timeout
        messages: list[Message] = []
        while not self.closed and time.monotonic() < deadline:
            select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            got = self.read()
            messages += got
            if any(isinstance(m, wanted) for m in got):
                break
        return messages

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


# -- supervisor -> recorder, once: how to record ---------------------------------------------


@dataclass
class RecorderConfig:
    """What the supervisor tells the recorder (in a private file in the session's folder)."""

    session_id: str
    db_path: str
    cast_path: str
    log_path: str
    header: dict
    emulator: str = DEFAULT_EMULATOR
    agent: str | None = None  # pattern set to detect with
    pattern_files: list[str] = field(default_factory=list)
    start_monotonic: float | None = None  # the loop's time zero, to measure detection latency
    started_wall: float | None = None  # the same moment by the wall clock (transcript timestamps)
    transcript_dir: str | None = None  # the agent's transcript folder to follow (its profile's)
    cwd: str | None = None  # where the agent runs (which of a shared folder's files are its own)
    agent_session_id: str | None = None  # the agent's own session it carries on, if any
    contexts: bool = True  # make session contexts (on compaction, periodically, at the end)
    inject: str = "off"  # give the agent its context back: auto | type | off
    hook_socket: str | None = None  # where the agent's own hook asks for it
    hook_fd: int | None = None  # ... listening already: bound by the supervisor before the agent started
    door_file: str | None = None  # a file the agent reads before each request: the context is written there
    resume_from: str | None = None  # the session this one resumes: its context is due at start
    handoff_from: str | None = None  # ... by another agent: the one that did the work

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "RecorderConfig":
        return cls(**json.loads(text))


# -- recorder -> loop ------------------------------------------------------------------------


@dataclass(frozen=True)
class Error:
    """A side channel failed (said once to the user when the agent exits)."""

    text: str


@dataclass(frozen=True)
class Injected:
    """The context was given to the agent (the `injection` event's detail)."""

    detail: dict


@dataclass(frozen=True)
class Compacted:
    """The agent compacted: there is a context to point the user at when it exits."""


@dataclass(frozen=True)
class Inject:
    """Type `data` into the child, then Enter; `fresh`: when the agent last showed a fresh
    prompt (keys typed before it went to the agent, not to a half-typed line)."""

    id: int
    data: str
    fresh: float


@dataclass(frozen=True)
class Modes:
    """The sequence that turns off the terminal modes the child left on."""

    sequence: str


@dataclass(frozen=True)
class Done:
    """The recorder has written everything."""


@dataclass(frozen=True)
class Terminal:
    """For the user's terminal, not the agent's screen (terminal/termwrite.py): `title` (`text`; None
    puts the title back), `bell`, or `osc` (a desktop notification saying `text`). `id`: the
    wait a title shows; a key from the user calls it off (the loop answers with a Note,
    `cancelled`)."""

    kind: str
    text: str | None = None
    id: int = 0


Message = Error | Injected | Compacted | Inject | Modes | Done | Terminal
_TYPES = {cls.__name__: cls for cls in (Error, Injected, Compacted, Inject, Modes, Done, Terminal)}


def encode(message: Message) -> bytes:
    return (json.dumps({"type": type(message).__name__, **asdict(message)}) + "\n").encode()


def decode(line: bytes) -> Message | None:
    try:
        data = json.loads(line)
        return _TYPES[data.pop("type")](**data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


# -- loop -> recorder: the note on a request to type --------------------------------------------


@dataclass(frozen=True)
class Note:
    """What the loop did with an Inject: `declined` (why), or `typed` (Enter pressed at loop
    time `t`, with `held` of the user's keys held back meanwhile); or with a wait a Terminal
    title showed: `cancelled` (the user typed)."""

    id: int
    state: str
    why: str | None = None
    t: float | None = None
    held: int = 0


def send_message(fd: int, message: Message) -> None:
    """Recorder side: one JSON line back to the loop (blocking; the recorder may wait)."""
    data = encode(message)
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except InterruptedError:
            continue


def coalesce(frames: list[tuple[bytes, float, bytes]]) -> list[tuple[bytes, float, bytes]]:
    """Join runs of output frames that arrived within COALESCE seconds of the run's first."""
    out: list[tuple[bytes, float, bytes]] = []
    run: list[bytes] = []
    run_t = 0.0
    for kind, t, payload in frames:
        if kind == OUTPUT and run and t - run_t <= COALESCE:
            run.append(payload)
            continue
        if run:
            out.append((OUTPUT, run_t, b"".join(run)))
            run = []
        if kind == OUTPUT:
            run, run_t = [payload], t
        else:
            out.append((kind, t, payload))
    if run:
        out.append((OUTPUT, run_t, b"".join(run)))
    return out
