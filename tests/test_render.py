"""The render thread on its own: output in, the text log and detected events out."""

from supervisor.recording.render import Renderer


def test_the_renderer_logs_lines_and_emits_what_its_patterns_detect(tmp_path):
    emitted, frames = [], []
    log = open(tmp_path / "session.log", "w", encoding="utf-8")
    r = Renderer(log, "avt", 60, 10, agent="claude", pattern_files=[], emit=lambda *e: emitted.append(e),
                 fail=lambda where, exc: emitted.append(("FAILED", where, exc)), report=print, now=lambda: 0.0)
    r.on_frame.append(lambda t, screen, detector: frames.append(t))
    r.output(0.1, "hello\r\n✻ Conversation compacted (ctrl+o for history)\r\n")
    r.output(0.2, "bye\r\n")
    r.finish()
    assert (tmp_path / "session.log").read_text().splitlines() == ["hello", "✻ Conversation compacted (ctrl+o for history)", "bye"]
    assert [(kind, source) for kind, t, detail, source in emitted] == [("compaction_finished", "regex")]
    assert frames == [0.1, 0.2]
