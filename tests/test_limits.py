"""Reading when a usage limit resets: the texts agents show, and the edges of clocks."""

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from supervisor.detection.limits import delay_seconds, reset_at, waitable

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(text: str, zone=UTC) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=zone)


@pytest.mark.parametrize(
    "values, now, local, expected",
    [
        # Claude Code 2.1.330: "You've hit your 5-hour limit · resets 7:45am (UTC)"
        ({"clock": "7:45am", "zone": "UTC"}, at("2026-11-24 05:00"), None, at("2026-11-24 07:45")),
        # the same words after 7:45 mean tomorrow's
        ({"clock": "7:45am", "zone": "UTC"}, at("2026-11-24 08:00"), None, at("2026-11-25 07:45")),
        ({"clock": "3pm", "zone": "Europe/Berlin"}, at("2026-11-24 10:00"), None, at("2026-11-24 15:00", BERLIN)),
        ({"clock": "3 p.m.", "zone": "(Europe/Berlin)"}, at("2026-11-24 10:00"), None, at("2026-11-24 15:00", BERLIN)),
        # a 24-hour clock with no zone is the machine's time
        ({"clock": "15:00"}, at("2026-11-24 12:00"), NEW_YORK, at("2026-11-24 15:00", NEW_YORK)),
        ({"clock": "15:00"}, at("2026-11-24 21:00"), NEW_YORK, at("2026-11-25 15:00", NEW_YORK)),
        # midnight and noon on a 12-hour clock; a time gone by, even just, is the next day's
        ({"clock": "12am", "zone": "UTC"}, at("2026-11-24 18:00"), None, at("2026-11-25 00:00")),
        ({"clock": "12pm", "zone": "UTC"}, at("2026-11-24 08:00"), None, at("2026-11-24 12:00")),
        ({"clock": "23:58", "zone": "UTC"}, at("2026-11-24 23:59:30"), None, at("2026-11-25 23:58")),
        # shown to the minute: "4:21pm" read at 16:21:23 is today's (the reset is within that minute)
        ({"clock": "4:21pm", "zone": "UTC"}, at("2026-11-24 16:21:23"), None, at("2026-11-24 16:21")),
        ({"clock": "4:21:10pm", "zone": "UTC"}, at("2026-11-24 16:21:23"), None, at("2026-11-25 16:21:10")),
        # clocks go forward in Berlin at 02:00 on 2026-03-29: 2:30 does not exist, it is 3:30
        ({"clock": "2:30am", "zone": "Europe/Berlin"}, at("2026-03-29 00:30"), None, at("2026-03-29 01:30")),
        # and back at 03:00 on 2026-10-25: 2:30 happens twice, the first one is meant
        ({"clock": "2:30am", "zone": "Europe/Berlin"}, at("2026-10-24 23:00"), None, at("2026-10-25 00:30")),
        # a date, with and without a clock; a date without a year is the next such day
        ({"date": "Nov 25", "clock": "9am", "zone": "UTC"}, at("2026-11-24 12:00"), None, at("2026-11-25 09:00")),
        ({"date": "2026-11-26"}, at("2026-11-24 12:00"), UTC, at("2026-11-26 00:00")),
        ({"date": "Jan 2", "clock": "10:00", "zone": "UTC"}, at("2026-11-24 12:00"), None, at("2027-01-02 10:00")),
        ({"date": "2nd January 2027", "clock": "10:00", "zone": "UTC"}, at("2026-11-24 12:00"), None, at("2027-01-02 10:00")),
        # delays count from when the line was seen
        ({"delay": "2 hours 3 minutes"}, at("2026-11-24 12:00"), None, at("2026-11-24 14:03")),
        ({"delay": "17s"}, at("2026-11-24 12:00"), None, at("2026-11-24 12:00:17")),
        ({"delay": "1h30m"}, at("2026-11-24 12:00"), None, at("2026-11-24 13:30")),
        ({"delay": "5 min"}, at("2026-11-24 12:00"), None, at("2026-11-24 12:05")),
        ({"delay": "1 day"}, at("2026-11-24 12:00"), None, at("2026-11-25 12:00")),
    ],
)
def test_a_reset_text_is_read_into_the_moment_it_names(values, now, local, expected):
    got = reset_at(values, now, local)
    # (as instants: Python calls two zones' times unequal within an hour that happens twice)
    assert got.astimezone(UTC) == expected.astimezone(UTC)
    assert got.utcoffset() is not None  # aware: stored with its offset


@pytest.mark.parametrize(
    "values",
    [
        {},  # nothing to read
        {"clock": "25:00", "zone": "UTC"},
        {"clock": "13pm", "zone": "UTC"},
        {"clock": "7:45am", "zone": "PST"},  # an abbreviation names no one zone
        {"clock": "7:45am", "zone": "Mars/Olympus"},
        {"date": "Feb 30", "zone": "UTC"},
        {"date": "Smarch 3"},
        {"delay": "a while"},
    ],
)
def test_what_cannot_be_read_is_no_time(values):
    assert reset_at(values, at("2026-11-24 12:00"), UTC) is None


def test_only_a_reset_ahead_and_within_a_week_is_waited_for():
    now = at("2026-11-24 12:00")
    assert waitable(now + timedelta(hours=5), now) is None
    assert "could not be read" in waitable(None, now)
    assert waitable(now - timedelta(minutes=1), now) is None  # shown to the minute, read a moment later
    assert "passed" in waitable(now - timedelta(minutes=3), now)
    assert "7 days" in waitable(now + timedelta(days=8), now)


def test_delays_add_up_their_units():
    assert delay_seconds("try again in 2 hours 3 minutes") == 7380
    assert delay_seconds("in 1.5h") == 5400
    assert delay_seconds("soon") is None


def test_a_wait_is_due_after_the_reset_plus_the_margin_and_counts_a_minute_shown_to_its_end():
    from supervisor.config import Limits
    from supervisor.giveback.limitwait import LimitWait

    now = at("2026-11-24 16:00")
    waits = LimitWait(Limits(on_limit="wait", margin=60.0, max_continues=1))
    wait, why = waits.reached({"reset_at": "2026-11-24T16:20:00+00:00", "reset_by": "2026-11-24T16:20:59+00:00"}, now)
    assert why is None and wait.due == at("2026-11-24 16:21:59").timestamp()
    assert waits.due(at("2026-11-24 16:21:58").timestamp()) is None
    assert waits.due(at("2026-11-24 16:22:00").timestamp()) is wait
    waits.finished(typed=True)
    # at most max_continues per session; never for a reset that cannot be read or is far off
    assert waits.reached({"reset_at": "2026-11-24T18:00:00+00:00"}, now) == (
        None,
        "1 continues typed in this session already (the most: [limits] max_continues)",
    )
    other = LimitWait(Limits(on_limit="wait"))
    assert other.reached({"reset_at": None}, now)[1] == "the reset time could not be read"
    assert "7 days" in other.reached({"reset_at": "2026-12-24T18:00:00+00:00"}, now)[1]
    assert LimitWait(Limits(on_limit="notify")).reached({"reset_at": "2026-11-24T18:00:00+00:00"}, now) == (None, None)


def test_our_writes_to_the_terminal_wait_for_the_agents_escape_sequence_or_character_to_end():
    from supervisor.channel import Terminal
    from supervisor.terminal.termwrite import TITLE_POP, TITLE_PUSH, TermWriter

    w = TermWriter("xterm-256color")
    assert w.child(b"plain text \x1b[3") == b""
    assert w.put(Terminal("title", "supervise: usage limit until 16:20", 1)) == b""  # inside "ESC [31m"
    assert w.child(b"1mred\x1b[0m") == TITLE_PUSH + b"\x1b]2;supervise: usage limit until 16:20\x07"
    assert w.child("demo›".encode()[:-2]) == b""
    assert w.put(Terminal("bell")) == b""  # inside "›"
    assert w.child("›".encode()[1:]) == b"\x07"
    assert w.keys(False) == ([], b"")  # a mouse report is no key
    assert w.keys(True) == ([1], TITLE_POP)  # the user is back: the title put back
    assert w.put(Terminal("osc", "claude \x1b]0;evil\x07 done")) == b"\x1b]9;claude  done\x07"  # an escape sequence in it goes whole
