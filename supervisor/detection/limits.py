"""When a usage limit resets: the words an agent shows, read into an absolute time.

An agent on a subscription stops at its usage limit and says when it resets, each its own
way: a clock time with an optional zone ("resets 7:45am (UTC)", "resets 3pm
(Europe/Berlin)"; "at 15:00"), a date ("Nov 25", "2026-11-25"), or a delay ("try again in
2 hours 3 minutes", "in 17s"). A pattern of kind `limit` captures the parts as named groups
(`clock`, `zone`, `date`, `delay`), and `reset_at` turns them into an aware datetime: a
clock time is its next occurrence in its zone (the machine's zone when none is named); a
delay counts from when the line was seen. What cannot be read, or is not a time to wait
for (gone already, or days away), is said by `waitable`.

Pure: values and a `now` in, a time out.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

WAIT_AT_MOST = timedelta(days=7)  # a reset further ahead is not waited for (a misread, a monthly cap)
# A reset shown to the minute may be a moment ago when it is read: still one to wait for (the
# continue then goes at once, after the margin).
JUST_PASSED = timedelta(minutes=2)

_CLOCK = re.compile(r"^\s*(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))?\s*([ap])?\.?\s*m?\.?\s*$", re.IGNORECASE)
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_DELAY = re.compile(r"(\d+(?:\.\d+)?)\s*(d(?:ays?)?|h(?:ours?|rs?)?|m(?:inutes?|ins?)?|s(?:econds?|ecs?)?)(?![a-z])", re.IGNORECASE)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_ISO_DATE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")
_MONTH_DAY = re.compile(r"^\s*([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\s*$")
_DAY_MONTH = re.compile(r"^\s*(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?(?:,?\s+(\d{4}))?\s*$")


def reset_at(values: dict, now: datetime, local: tzinfo | None = None) -> datetime | None:
    """The moment a limit resets, from a `limit` pattern's named groups; None if they say
    nothing that can be read. `now` is aware (when the line was seen); `local` is the zone of
    a clock time that names none (the machine's)."""
    delay = values.get("delay")
    if delay:
        seconds = delay_seconds(str(delay))
        return None if seconds is None else now + timedelta(seconds=seconds)
    clock, day = values.get("clock"), values.get("date")
    if not clock and not day:
        return None
    zone = _zone(values.get("zone"), local or now.tzinfo or timezone.utc)
    if zone is None:
        return None
    at = _clock(str(clock)) if clock else time(0, 0)
    if at is None:
        return None
    today = now.astimezone(zone).date()
    if day:
        on = _date(str(day), today)
        return None if on is None else _aware(on, at, zone)
    when = _aware(today, at, zone)
    # the next occurrence of that clock time; one shown to the minute ("4:21pm", for 16:21:23)
    # is still today's while that minute lasts
    shown_to = timedelta(seconds=1 if at.second else 60)
    if when + shown_to <= now:
        when = _aware(today + timedelta(days=1), at, zone)
    return when


def reading(values: dict, now: datetime) -> dict:
    """What a limit line says, for its event: `reset_at` (ISO 8601 with its offset, or None),
    `reset_by` (the latest it can be: a clock time shown to the minute is the minute's
    start: 17:01:07 may be shown as "5:01pm") and, when it is no time to wait for,
    `no_wait` (why)."""
    at = reset_at(values, now)
    out: dict = {"reset_at": at.isoformat() if at else None}
    if at is not None:
        clock = _CLOCK.match(str(values.get("clock") or ""))
        to_the_minute = values.get("clock") and not (clock and clock.group(3))
        out["reset_by"] = (at + timedelta(seconds=59) if to_the_minute else at).isoformat()
    why = waitable(at, now)
    if why:
        out["no_wait"] = why
    return out


def parse_time(text) -> datetime | None:
    """A time as stored (ISO 8601), or None if there is none or it does not read."""
    try:
        return datetime.fromisoformat(text) if text else None
    except (TypeError, ValueError):
        return None


def waitable(at: datetime | None, now: datetime) -> str | None:
    """Why a reset time is not one to wait for (None if it is): unread, gone, or too far."""
    if at is None:
        return "the reset time could not be read"
    if at + JUST_PASSED <= now:
        return "the reset time has passed"
    if at - now > WAIT_AT_MOST:
        return f"the reset is more than {WAIT_AT_MOST.days} days ahead"
    return None


def delay_seconds(text: str) -> float | None:
    """'2 hours 3 minutes', '17s', '1h30m', '5 min' -> seconds; None if no unit is there."""
    parts = _DELAY.findall(text)
    if not parts:
        return None
    return sum(float(n) * _UNITS[unit[0].lower()] for n, unit in parts)


def _zone(name, fallback: tzinfo) -> tzinfo | None:
    if not name:
        return fallback
    name = str(name).strip().strip("()").strip()
    if name.upper() in ("UTC", "GMT", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None  # an abbreviation ("PST") names no one zone: not guessed


def _clock(text: str) -> time | None:
    m = _CLOCK.match(text)
    if not m:
        return None
    hour, minute, second = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
    half = (m.group(4) or "").lower()
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "p" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return time(hour, minute, second)


def _date(text: str, today: date) -> date | None:
    month: int | None
    year: int | str | None  # the text's digits until checked
    m = _ISO_DATE.match(text)
    if m:
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = _MONTH_DAY.match(text)
        if m:
            month_name, day, year = m.group(1), int(m.group(2)), m.group(3)
        else:
            m = _DAY_MONTH.match(text)
            if not m:
                return None
            day, month_name, year = int(m.group(1)), m.group(2), m.group(3)
        month = _MONTHS.get(month_name[:3].lower())
        if month is None:
            return None
        if year is None:  # no year: the next such day (a reset is ahead)
            year = today.year + (1 if (month, day) < (today.month, today.day) else 0)
        year = int(year)
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _aware(on: date, at: time, zone: tzinfo) -> datetime:
    # through UTC and back: a wall time that does not exist (the hour skipped when clocks go
    # forward) comes out as the time it names after the change
    naive = datetime.combine(on, at)
    return naive.replace(tzinfo=zone).astimezone(timezone.utc).astimezone(zone)
