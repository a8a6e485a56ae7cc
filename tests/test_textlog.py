"""Recorded-style byte streams in, the text a person saw out."""

import pytest

from supervisor.recording.emulator import make
from supervisor.detection.sameline import shape
from supervisor.recording.textlog import TextLog

EMULATORS = ["avt", "pyte"]


def render(chunks, cols=40, rows=8, emulator="avt", settle=0.4):
    """chunks: list of (time, text). Returns the whole log."""
    log = TextLog(make(emulator, cols, rows), settle=settle)
    out = []
    for t, text in chunks:
        out += log.feed(t, text).logged
    return out + log.finish()


@pytest.mark.parametrize("emulator", EMULATORS)
def test_scrolling_output_is_logged_in_order_once(emulator):
    text = "".join(f"line {i}\r\n" for i in range(50))
    lines = render([(0.0, text[:200]), (0.1, text[200:])], emulator=emulator)
    assert [l for l in lines if l] == [f"line {i}" for i in range(50)]


def test_soft_wrapped_line_is_logged_whole():
    long = "x" * 95
    lines = render([(0.0, long + "\r\n" + "after\r\n" * 20)], cols=40)
    assert long in lines


def ink_frame(spinner, seconds, body_rows):
    # cursor up over the previous frame, erase it, draw it again (what Ink does each tick)
    return "\x1b[2K\x1b[1A" * 3 + "\x1b[2K\r" + "\r\n".join([f"{spinner} Thinking… ({seconds}s)", *body_rows])


def test_ink_style_redraws_log_the_result_not_every_frame():
    chunks = [(0.0, "> build the parser\r\n\r\n\r\n\r\n")]
    t = 0.0
    for i in range(60):
        t += 0.1
        chunks.append((t, ink_frame("✻✽✢·"[i % 4], i // 10, ["─" * 30, "❯ ", "? for shortcuts"])))
    chunks.append(
        (t + 0.1, "\x1b[2K\x1b[1A" * 3 + "\x1b[2K\r" + "● Parser done: 3 files changed\r\n" + "─" * 30 + "\r\n❯ \r\n? for shortcuts")
    )
    lines = render(chunks, cols=60, rows=10)
    assert lines.count("> build the parser") == 1
    assert "● Parser done: 3 files changed" in lines
    assert sum("Thinking" in l for l in lines) <= 1, lines  # its last frame at most, not every frame
    assert lines.count("? for shortcuts") == 1


def test_full_screen_clear_keeps_what_was_shown_long_enough():
    first = "\x1b[2J\x1b[H" + "\r\n".join(f"page one row {i}" for i in range(5))
    flash = "\x1b[2J\x1b[H" + "flash that nobody could read"
    second = "\x1b[2J\x1b[H" + "\r\n".join(f"page two row {i}" for i in range(5))
    lines = render([(0.0, first), (2.0, flash), (2.01, second)], cols=40, rows=8)
    assert [l for l in lines if l.startswith("page")] == [f"page one row {i}" for i in range(5)] + [f"page two row {i}" for i in range(5)]
    assert "flash that nobody could read" not in lines


def test_alternate_screen_program_is_logged_and_primary_screen_not_repeated():
    before = "$ vim notes.txt\r\n"
    alt = "\x1b[?1049h\x1b[H\x1b[2J" + "\r\n".join(["first note", "second note", "~", "~"])
    back = "\x1b[?1049l" + "$ echo done\r\ndone\r\n"
    lines = render([(0.0, before), (0.1, alt), (3.0, back), (3.1, "$ ")], cols=40, rows=6)
    assert "first note" in lines and "second note" in lines
    assert lines.count("$ vim notes.txt") == 1
    assert lines.index("second note") < lines.index("$ echo done")
    assert lines[-2:] == ["done", "$"]


def test_line_that_moved_up_is_not_logged_as_replaced():
    # a status block that shifts down as content is inserted above it (Ink <Static> output)
    first = "\x1b[H" + "\r\n".join(["─" * 20, "❯ draft", "footer"])
    second = "\x1b[H\x1b[J" + "\r\n".join(["answer line", "─" * 20, "❯ draft", "footer"])
    lines = render([(0.0, first), (1.0, second)], cols=30, rows=6)
    assert lines == ["answer line", "─" * 20, "❯ draft", "footer"]


def test_wide_and_special_characters_survive():
    lines = render([(0.0, "日本語 ✻ Conversation compacted … ⎿ done\r\n")], cols=60)
    assert lines[0] == "日本語 ✻ Conversation compacted … ⎿ done"


def test_shape_ignores_spinner_glyphs_and_counters_only():
    assert shape("✻ Thinking… (3s · 120 tokens)") == shape("✽ Thinking… (4s · 180 tokens)")
    assert shape("✽ Compacting conversation…") != shape("✻ Conversation compacted (ctrl+o for history)")


def test_appeared_lines_fire_once_per_distinct_text():
    log = TextLog(make("avt", 40, 5))
    seen = []
    for i in range(20):
        seen += log.feed(i * 0.05, "\x1b[H\x1b[2KConversation compacted").appeared
    assert seen == [(0, "Conversation compacted")]


def test_a_line_being_typed_or_streamed_is_logged_once_complete():
    chunks = [(0.0, "\x1b[H> ")]
    t = 0.0
    for ch in "fix the flaky test":
        t += 0.3  # slow typing: every partial line stays up long enough to read
        chunks.append((t, ch))
    chunks.append((t + 0.3, "\r\n● On it.\r\n"))
    chunks.append((t + 1.0, "\x1b[2J\x1b[Hsomething else entirely"))
    lines = render(chunks, cols=40, rows=6)
    assert lines == ["> fix the flaky test", "● On it.", "something else entirely"]


def test_no_break_spaces_read_as_spaces():
    assert render([(0.0, "❯\u00a0turn 3\r\n")])[0] == "❯ turn 3"


def test_a_spinner_line_up_for_seconds_is_logged_once_when_it_is_replaced():
    chunks = [(0.0, "start\r\n")]
    for i in range(60):  # 6 s of a braille spinner redrawn every 0.1 s
        chunks.append((i * 0.1, "\r\x1b[2K" + "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"[i % 10] + " Compressing chat history"))
    chunks.append((6.1, "\r\x1b[2K✦ Chat history compressed from 600000 to 163 tokens.\r\n"))
    lines = render(chunks, cols=60, rows=6)
    assert [l for l in lines if "ompress" in l] == ["⠏ Compressing chat history", "✦ Chat history compressed from 600000 to 163 tokens."]


def test_lines_that_scroll_past_within_one_chunk_still_count_as_appeared():
    log = TextLog(make("avt", 40, 5))
    burst = "".join(f"filler {i}\r\n" for i in range(50)) + "Conversation compacted\r\n" + "".join(f"more {i}\r\n" for i in range(50))
    appeared = [text for _, text in log.feed(0.0, burst).appeared]
    assert "Conversation compacted" in appeared
    assert appeared.count("filler 3") == 1


def test_a_long_line_still_on_screen_at_the_end_is_logged_whole():
    long = "ANTHROPIC_API_KEY=" + "x" * 90
    assert render([(0.0, long + "\r\nnext\r\n")], cols=40, rows=8) == [long, "next"]


@pytest.mark.parametrize("emulator", EMULATORS)
def test_a_view_moved_down_a_row_and_cleared_at_once_is_still_logged(emulator):
    """Codex quitting: its last frame draws the view one row lower, and 3 ms later the
    screen is cleared. A line that only moved has been up since it first appeared."""
    alt = "\x1b[?1049h"
    rows = ["› hello there", "• Fake reply", "› second message", "• Another reply"]
    view = "\x1b[H" + "\r\n".join(rows)
    moved = "\x1b[H\x1b[2K\r\n" + "\r\n".join("\x1b[2K" + row for row in rows)
    lines = render([(0.0, alt + view), (2.0, moved), (2.003, "\x1b[2J\x1b[?1049l")], emulator=emulator)
    assert [l for l in lines if l.strip()][:4] == rows


def test_lines_that_scroll_off_before_a_reset_in_the_same_chunk_are_logged():
    """avt forgets rows scrolled off earlier in a feed that also holds a full reset (ESC c):
    a flood catching up feeds big chunks, and such lines were missing from the log."""
    log = TextLog(make("avt", 80, 24))
    frame = log.feed(0.0, "scrolled away\r\n" + "\r\n" * 30 + "\x1bc" + "after the reset")
    assert "scrolled away" in frame.logged
    assert "after the reset" in log.finish()


def test_a_view_that_moves_up_logs_each_line_even_when_they_differ_only_in_numbers():
    """A full-screen TUI (Claude Code's) redraws its view moved up by a few rows: the row of
    "❯ turn 2: ..." now shows "❯ turn 3: ...". That is a line leaving, not a counter ticking."""

    def view(first):  # rows first..first+5 of the conversation, redrawn in place
        rows = []
        for n in range(first, first + 3):
            rows += [f"❯ turn {n}: please say hello", f"● Reply to: turn {n}: please say hello"]
        return "\x1b[H\x1b[2J" + "\r\n".join(rows)

    chunks = [(0.0, "\x1b[?1049h")] + [(float(k), view(k)) for k in range(1, 8)] + [(9.0, "\x1b[?1049l")]
    lines = render(chunks, cols=60, rows=8)
    for n in range(1, 10):
        assert f"❯ turn {n}: please say hello" in lines, (n, lines)
        assert f"● Reply to: turn {n}: please say hello" in lines, (n, lines)
    assert lines.index("❯ turn 2: please say hello") < lines.index("❯ turn 3: please say hello")


def test_a_replaced_line_waits_for_the_lines_that_came_above_it_while_it_was_up():
    """A footer replaced while content that arrived above it is still on screen: a person saw
    that content above the footer, so it is logged first."""
    chunks = [
        (0.0, "\x1b[6;1Hfooter one"),
        (1.0, "\x1b[2;1Hreply above the footer"),
        (2.0, "\x1b[6;1H\x1b[2Kfooter two"),
        (3.0, "\x1b[2J\x1b[Hnext page"),
    ]
    lines = render(chunks, cols=40, rows=8, settle=0.1)
    assert lines.index("reply above the footer") < lines.index("footer one") < lines.index("footer two")


def test_a_line_cleared_and_drawn_again_a_moment_later_never_left():
    """Gemini CLI clears the rows under its reply and draws them again a millisecond later, in
    the next write: its footer did not leave, and is logged where it finally stood."""
    chunks = [
        (0.0, "\x1b[Hheader\x1b[6;1Hfooter"),
        (1.0, "\x1b[6;1H\x1b[J"),
        (1.001, "\x1b[2;1Hreply\x1b[6;1Hfooter"),
        (2.0, "\x1b[2J\x1b[Hnext page"),
    ]
    lines = render(chunks, cols=40, rows=8, settle=0.1)
    assert lines == ["header", "reply", "footer", "next page"]


def test_a_line_that_left_is_logged_before_a_line_that_came_after_it_even_above_it():
    """Codex clears its logo as a message is sent, then redraws the message at the top of its
    view, above the rows the logo stood on: the logo was seen first."""
    chunks = [
        (0.0, "\x1b[Hheader"),
        (0.5, "\x1b[4;1Hlogo one\r\nlogo two\x1b[8;1H> type here"),
        (2.0, "\x1b[4;1H\x1b[2K\x1b[5;1H\x1b[2K\x1b[8;1H\x1b[2K> my message"),
        (2.05, "\x1b[2;1H> my message\x1b[8;1H\x1b[2K> type here"),
    ]
    lines = render(chunks, cols=40, rows=8, settle=0.1)
    assert lines.index("logo two") < lines.index("> my message")


def test_a_spinner_word_up_for_a_tenth_of_a_second_is_logged():
    """Claude Code changes its spinner's word ("✽ Zigzagging…", "✽ Swirling…") every few
    tenths of a second: 100 ms on screen is enough to read one."""
    log = TextLog(make("avt", 40, 6))
    out = []
    for t, word in [(0.0, "Zigzagging…"), (0.12, "Swirling…"), (0.5, "Done")]:
        out += log.feed(t, f"\x1b[H\x1b[2K✽ {word}").logged
    out += log.finish()
    assert out == ["✽ Zigzagging…", "✽ Swirling…", "✽ Done"]


def test_leaving_the_alternate_screen_logs_waiting_lines_in_their_places():
    """A full-screen TUI's replaced status lines wait below the conversation still on screen;
    when it quits, they are written where they stood, not before the whole last view."""
    alt = "\x1b[?1049h\x1b[H"
    chunks = [
        (0.0, alt + "❯ turn 1\r\n● reply 1\x1b[6;1H✻ Thinking"),
        (1.0, "\x1b[6;1H\x1b[2K\x1b[3;1H✻ Worked for 1s"),
        (2.0, "\x1b[?1049l"),
    ]
    lines = render(chunks, cols=40, rows=8, settle=0.1)
    assert lines == ["❯ turn 1", "● reply 1", "✻ Thinking", "✻ Worked for 1s"]


def test_a_line_cut_back_in_place_is_logged_as_it_stood():
    """Codex erases a row from the right before redrawing the screen: the log keeps the
    whole line a reader saw, not the stub left a moment before it went."""
    full = "› turn 3: add a --csv flag beside --json in src/export_csv.py"
    chunks = [(0.0, full + "\r\n"), (2.0, "\x1b[1;31H\x1b[K"), (2.05, "\x1b[H\x1b[2J" + "something else entirely")]
    lines = render(chunks, cols=80, rows=6)
    assert full in lines and "› turn 3: add a --csv flag bes" not in lines, lines


def test_a_line_typed_while_a_menu_shows_the_same_words_is_logged_once_complete():
    """Gemini lists "/compress" in its command menu while the input line grows to it: the
    input line is being typed, not replaced by a line that moved."""
    menu = "\x1b[3;1H/compress"
    chunks = [(0.0, menu)]
    for k in range(2, len("/compress") + 1):
        chunks.append((0.2 * k, "\x1b[1;1H\x1b[K" + "/compress"[:k]))
    chunks.append((3.0, "\x1b[1;1H\x1b[K\x1b[3;1H\x1b[K" + "\x1b[1;1Hdone"))
    lines = render(chunks, cols=60, rows=6)
    assert "/compres" not in lines and "/compress" in lines, lines


def test_a_message_that_left_while_its_reply_stayed_is_logged_before_the_reply():
    """Claude Code redraws its conversation moved up after a compaction; a message whose row
    went comes before its reply, which is still on screen when the log is finished."""
    chunks = [
        (0.0, "\x1b[?1049h\x1b[H" + "header\r\n\r\n\r\n❯ turn 4: please say hello"),
        (0.5, "\r\n\r\n● Reply to: turn 4"),
        (1.0, "\x1b[H\x1b[2J" + "header\r\n● Reply to: turn 4"),
    ]
    lines = render(chunks, cols=60, rows=8)
    assert lines.index("❯ turn 4: please say hello") < lines.index("● Reply to: turn 4"), lines


def test_a_long_line_wrapped_across_the_top_of_the_last_screen_is_logged_whole():
    """The first line of the final screen can have begun on rows that scrolled off: it is one
    line in the log, not its scrolled part and its visible part apart (nor lost)."""
    import random

    rnd = random.Random(3)
    for cols in (80, 37):
        for count in (200, 7, 31):
            printed = ["%0*d" % (rnd.randint(1, 300), i) + " " * rnd.randint(0, 3) + "x" for i in range(count)]
            log = TextLog(make("avt", cols, 24))
            logged = log.feed(1.0, "".join(line + "\r\n" for line in printed)).logged + log.finish()
            assert logged == printed, (cols, count)
