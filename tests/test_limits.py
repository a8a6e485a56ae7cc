"""Reading when a usage limit resets: the texts agents show, and the edges of clocks."""

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from supervisor.limits import delay_seconds, reset_at, waitable

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
