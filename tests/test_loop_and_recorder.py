"""The PTY loop and the recorder process's protocol, driven at library level with real
children and real pipes (the end-to-end tests drive the same code through the CLI)."""

import json
import os
import sys
import threading
import time

from ptyprocess import PtyProcess

from supervisor import channel
from supervisor.terminal.pty_loop import PtyLoop
from supervisor.run.recorder import RecorderConfig, serve
from supervisor.store.database import Store


def drain(fd, sink):
    while True:
        data = os.read(fd, 65536)
        if not data:
            return
        sink.append(data)


def start_recorder(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.create_session(command="x", argv=["x"], cwd="/", pid=os.getpid())["id"]
    config = RecorderConfig(
        sid,
        str(tmp_path / "s.db"),
        str(tmp_path / "s.cast"),
        str(tmp_path / "s.log"),
        {"width": 40, "height": 10, "timestamp": 1, "command": "x"},
    )
    frames_r, frames_w = os.pipe()
    back_r, back_w = os.pipe()
    thread = threading.Thread(target=serve, args=(config, frames_r, back_w))
    thread.start()
    return store, sid, channel.Outbox(frames_w), channel.Inbox(back_r), thread


def test_markers_and_events_reach_the_cast_and_the_database(tmp_path):
    store, sid, outbox, inbox, thread = start_recorder(tmp_path)
    outbox.output(0.1, "hello \x1b[?2004h".encode())
    outbox.event(0.2, "compaction_started", {"source": "regex"}, marker=True)
    outbox.event(0.3, "note", {"x": 1})
    outbox.end(0.4, {"exit_code": 0})
    assert outbox.drain(5)
    outbox.close()
    messages = inbox.read_until(channel.Done, 10)
    thread.join(10)
    assert channel.Modes("\x1b[?2004l") in messages  # the child left bracketed paste on
    lines = [json.loads(l) for l in (tmp_path / "s.cast").read_text().splitlines()[1:]]
    assert [0.2, "m", "compaction_started"] in lines
    assert [(e["kind"], e["detail"]) for e in store.events(sid)] == [("compaction_started", {"source": "regex"}), ("note", {"x": 1})]
    assert (tmp_path / "s.log").read_text() == "hello\n"
    assert store.get_session(sid)["status"] == "active"  # a clean END leaves the status to the supervisor


def test_recorder_keeps_what_it_got_when_the_supervisor_vanishes(tmp_path):
    store, sid, outbox, inbox, thread = start_recorder(tmp_path)
    outbox.output(0.1, b"line one\r\nline two\r\n")
    assert outbox.drain(5)
    outbox.close()  # no END frame: as if the supervisor was killed
    thread.join(10)
    assert store.get_session(sid)["status"] == "interrupted"
    assert "line two" in (tmp_path / "s.cast").read_text()
    assert (tmp_path / "s.log").read_text().splitlines() == ["line one", "line two"]


def run_loop_with_inbox(child_code, script):
    """Run the loop over a real child; `script(loop_stdin_w, inbox_w, output, notes)` acts
    meanwhile (`output()`, `notes()`: so far). Returns (child output, notes the loop sent the
    recorder)."""
    child = PtyProcess.spawn([sys.executable, "-c", child_code])
    r, w = os.pipe()
    frames = []
    reader = threading.Thread(target=drain, args=(r, frames))
    reader.start()
    stdin_r, stdin_w = os.pipe()
    inbox_r, inbox_w = os.pipe()
    outbox = channel.Outbox(w)
    devnull = os.open(os.devnull, os.O_WRONLY)
    loop = PtyLoop(child, outbox, inbox=channel.Inbox(inbox_r), stdin_fd=stdin_r, stdout_fd=devnull, size=lambda: (80, 24))

    def output():
        return b"".join(p for k, _, p in channel.parse_frames(b"".join(frames))[0] if k == channel.OUTPUT).decode()

    def notes():
        return [json.loads(p) for k, _, p in channel.parse_frames(b"".join(frames))[0] if k == channel.NOTE]

    actor = threading.Thread(target=script, args=(stdin_w, inbox_w, output, notes))
    actor.start()
    loop.run()
    actor.join(10)
    outbox.drain(5)
    outbox.close()
    reader.join(5)
    for fd in (devnull, stdin_w, inbox_w):
        os.close(fd)
    return output(), notes()


def wait_until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.02)


TWO_LINES = "print('READY', flush=True); got = [input(), input()]; print('GOT', got, flush=True)"


def test_the_users_keys_wait_while_supervise_types_so_the_two_never_mix():
    def script(stdin_w, inbox_w, output, notes):
        wait_until(lambda: "READY" in output())
        channel.send_message(inbox_w, channel.Inject(7, "the context", 0.0))
        wait_until(lambda: "the context" in output())  # typed (echoed); its Enter comes a moment later
        os.write(stdin_w, b"my own line\r")  # typed while the context is being typed

    out, notes = run_loop_with_inbox(TWO_LINES, script)
    assert "GOT ['the context', 'my own line']" in out
    assert [(n["id"], n["state"]) for n in notes] == [(7, "typed")] and notes[0]["held"] == len(b"my own line\r")


def test_the_loop_declines_to_type_while_the_user_is_typing():
    def script(stdin_w, inbox_w, output, notes):
        wait_until(lambda: "READY" in output())
        os.write(stdin_w, b"half a li")
        wait_until(lambda: "half a li" in output())  # the loop passed the keys on (echoed)
        channel.send_message(inbox_w, channel.Inject(1, "the context", 0.0))
        wait_until(notes)  # the loop's answer: declined, or (wrongly) typed
        os.write(stdin_w, b"ne\rsecond\r")

    out, notes = run_loop_with_inbox(TWO_LINES, script)
    assert "GOT ['half a line', 'second']" in out
    assert [(n["id"], n["state"], n["why"]) for n in notes] == [(1, "declined", "user typing")]


def test_a_frame_larger_than_the_pipe_buffer_arrives_whole():
    """The recorder reads its pipe into a buffer of PIPE_SIZE; a frame longer than that
    grows the buffer rather than failing."""
    import threading

    from supervisor import channel

    r, w = os.pipe()
    data = channel.HEADER.pack(channel.OUTPUT, 1.0, 3 * channel.PIPE_SIZE) + b"x" * (3 * channel.PIPE_SIZE)
    data += channel.HEADER.pack(channel.OUTPUT, 2.0, 2) + b"ok"

    def write() -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(w, view) :]
        os.close(w)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    frames = [f for batch in channel.read_batches(r) for f in batch]
    os.close(r)
    assert [(t, len(p)) for _, t, p in frames] == [(1.0, 3 * channel.PIPE_SIZE), (2.0, 2)]
    assert frames[0][2] == b"x" * (3 * channel.PIPE_SIZE) and frames[1][2] == b"ok"
