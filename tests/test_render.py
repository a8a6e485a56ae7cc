"""The render thread on its own: output in, the text log and detected events out."""

import threading

from supervisor.recording.flood import LEFT, QUEUE
from supervisor.recording.render import Renderer


def renderer(log, *, emit, fail, agent="claude", **more) -> Renderer:
    """A renderer at 60x10 whose frame subscribers are told at once, on its own thread."""
    call = lambda name, work, *args: work(*args)  # noqa: E731
    return Renderer(
        log, "avt", 60, 10, agent=agent, pattern_files=[], emit=emit, call=call, fail=fail, report=print, now=lambda: 0.0, **more
    )


def test_the_renderer_logs_lines_and_emits_what_its_patterns_detect(tmp_path):
    emitted, frames = [], []
    log = open(tmp_path / "session.log", "w", encoding="utf-8")
    r = renderer(log, emit=lambda *e: emitted.append(e), fail=lambda where, exc: emitted.append(("FAILED", where, exc)))
    r.subscribe("frames", lambda t, screen, seen: frames.append(t))
    r.output(0.1, "hello\r\n✻ Conversation compacted (ctrl+o for history)\r\n")
    r.output(0.2, "bye\r\n")
    r.finish()
    assert (tmp_path / "session.log").read_text().splitlines() == ["hello", "✻ Conversation compacted (ctrl+o for history)", "bye"]
    assert [(kind, source) for kind, t, detail, source in emitted] == [("compaction_finished", "regex")]
    assert frames == [0.1, 0.2]


def test_a_sudden_flood_is_left_in_the_recording_after_a_window_of_it_not_8_mb(tmp_path):
    """Output at a flood's rate right after a quiet start: past a window's worth (2 MB) the
    rest waits in the recording, not in memory (the text log is still every line). The rate
    is the one the output was read at, however slowly this machine renders or records it."""
    from supervisor.recording import asciicast, flood

    cast = open(tmp_path / "s.cast", "wb")
    writer = asciicast.Writer(cast, asciicast.Header(60, 10, 0))
    log = open(tmp_path / "session.log", "w", encoding="utf-8")
    r = renderer(log, emit=lambda *e: None, fail=lambda where, exc: print(where, exc), agent=None, cast_path=str(tmp_path / "s.cast"))
    chunk = "".join(f"{i:05d} flood line\r\n" for i in range(16000))  # 288 KB
    waiting = []
    for n in range(15):  # 4.3 MB read in 1.5 ms, after 0.2 s of quiet
        span = writer.write(0.2 + n * 1e-4, "o", chunk)
        writer.flush()
        r.output(0.2 + n * 1e-4, chunk, span)
        waiting.append(r.flood.backlog)
    r.finish()
    assert max(waiting) <= flood.FLOOD_RATE * flood.RATE_WINDOW + 2 * len(chunk)
    assert len((tmp_path / "session.log").read_text().splitlines()) == 15 * 16000


def admitted(rendering_keeps_up: bool) -> list[int]:
    """What the flood's bookkeeping says of 3 MB read at 5 MB/s (a quarter of FLOOD_RATE), 50 KB
    every 10 ms, with rendering keeping up or not rendering at all (a machine too busy)."""
    from supervisor.recording.flood import Flood

    f, said = Flood(readable=True), []
    for i in range(60):
        said.append(f.admit(0.5 + i * 0.01, 50_000, (i * 50_000, (i + 1) * 50_000)))
        if rendering_keeps_up and said[-1] == QUEUE:
            f.rendered(50_000)
    return said


def test_output_that_rendering_falls_behind_on_is_left_in_the_recording_at_any_rate():
    """Slow output that rendering keeps up with is rendered as it comes; the same output with
    rendering left behind (a slow or busy machine) is left in the recording past FLOOD_CAP
    waiting, not queued up to BACKLOG_CAP."""
    from supervisor.recording.flood import FLOOD_CAP

    assert admitted(rendering_keeps_up=True) == [QUEUE] * 60
    said = admitted(rendering_keeps_up=False)
    queued = said.index(next(s for s in said if s != QUEUE))
    assert said[queued] == queued * 50_000  # read back from where the queue ended
    assert said[queued + 1 :] == [LEFT] * (59 - queued)
    assert FLOOD_CAP < queued * 50_000 <= FLOOD_CAP + 50_000 * 11  # one window (0.1 s) of it past the cap at most


def test_a_step_that_fails_is_reported_and_the_rest_of_its_batch_is_still_logged_and_detected(tmp_path):
    """The emulator raises on one chunk: that chunk is reported, every other chunk queued
    with it still reaches the text log and the detector."""
    emitted, failed = [], []
    log = open(tmp_path / "session.log", "w", encoding="utf-8")
    r = renderer(log, emit=lambda *e: emitted.append(e[0]), fail=lambda where, exc: failed.append((where, str(exc))))
    feed = r.textlog.feed
    queued = threading.Event()

    def fragile(t, text):
        if "one" in text:
            queued.wait(10)  # the rest waits in the queue meanwhile: the next batch is all of it
        if "boom" in text:
            raise RuntimeError("the emulator choked")
        return feed(t, text)

    r.textlog.feed = fragile
    for n, text in enumerate(["one\r\n", "boom\r\n", "two\r\n", "✻ Conversation compacted (ctrl+o for history)\r\n", "three\r\n"]):
        r.output(0.1 * n, text)
    queued.set()
    r.finish()
    assert (tmp_path / "session.log").read_text().splitlines() == ["one", "two", "✻ Conversation compacted (ctrl+o for history)", "three"]
    assert emitted == ["compaction_finished"]
    assert failed == [("text log", "the emulator choked")]
