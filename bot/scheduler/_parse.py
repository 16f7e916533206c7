"""Read the parts of a daily schedule: time, zone, days, tag, digest day, closing time.

The chat layer's command grammar reads both forms (Slack's words, Discord's options) with these
readers and builds the request with ``schedule_request``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot import messages as M
from bot.errors import UserError
from bot.scheduler.port import Days
from bot.text import Code, say

ZONE_EXAMPLES = ("Europe/Berlin", "America/New_York", "Asia/Kolkata", "Pacific/Auckland", "UTC")
TIME_EXAMPLES = ("09:30", "13:00", "17:45")
WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MAX_CLOSE_MINUTES = 7 * 24 * 60

_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?:in)?)?$")


@dataclass(frozen=True, slots=True)
class ScheduleRequest:
    """A schedule as a user asked for it, checked but not yet stored."""

    hour: int
    minute: int
    zone: str = "UTC"
    days: Days = Days.DAILY
    tag: str | None = None
    digest_weekday: int | None = None
    close_minutes: int | None = None


def parse_time(text: str) -> tuple[int, int]:
    """Return (hour, minute) of a 24-hour ``HH:MM``; UserError with examples otherwise."""
    match = _TIME.match(text.strip())
    if match is not None:
        hour, minute = int(match[1]), int(match[2])
        if hour < 24 and minute < 60:
            return hour, minute
    raise UserError(say(M.BAD_TIME, text=Code(text[:40]), examples=", ".join(TIME_EXAMPLES)))


@cache
def _zones_by_folded_name() -> dict[str, str]:
    return {name.casefold(): name for name in available_timezones()}


def parse_zone(text: str) -> str:
    """Return the IANA name of a time zone (any letter case); UserError with examples otherwise."""
    name = text.strip()
    found = _zones_by_folded_name().get(name.casefold())
    try:
        if found is not None:
            ZoneInfo(found)
            return found
    except (ZoneInfoNotFoundError, ValueError):
        pass  # listed but unreadable here: treated as unknown
    close = difflib.get_close_matches(name, sorted(_zones_by_folded_name().values()), n=3)
    examples = ", ".join(ZONE_EXAMPLES)
    if not close:
        raise UserError(say(M.BAD_ZONE, text=Code(text[:60]), examples=examples))
    names = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    raise UserError(say(M.BAD_ZONE_CLOSE, text=Code(text[:60]), names=names, examples=examples))


def parse_days(text: str) -> Days:
    """Return ``daily`` or ``weekdays``."""
    try:
        return Days(text.strip().lower())
    except ValueError:
        days = say(M.BAD_DAYS, text=Code(text[:40]), daily=Code("daily"), weekdays=Code("weekdays"))
        raise UserError(days) from None


def parse_weekday(text: str) -> int:
    """Return 0 (Monday) to 6 (Sunday) for a day's name or its first three letters."""
    word = text.strip().lower()
    for number, name in enumerate(WEEKDAY_NAMES):
        if word in (name, name[:3]):
            return number
    raise UserError(say(M.BAD_WEEKDAY, text=Code(text[:40])))


def parse_duration(text: str) -> int:
    """Return minutes from ``90m``, ``2h``, ``1h30m`` or a bare number of minutes."""
    raw = text.strip().lower().replace(" ", "")
    minutes: int | None = None
    if raw.isdigit():
        minutes = int(raw)
    else:
        match = _DURATION.match(raw)
        if match is not None and (match[1] or match[2]):
            minutes = int(match[1] or 0) * 60 + int(match[2] or 0)
    if minutes is None or not 1 <= minutes <= MAX_CLOSE_MINUTES:
        raise UserError(say(M.BAD_DURATION, text=Code(text[:40])))
    return minutes


def parse_tag(text: str) -> str:
    """Return a tag (lowercase letters, digits and dashes)."""
    tag = text.strip().lower()
    if not _TAG.match(tag):
        raise UserError(say(M.BAD_TAG, text=Code(text[:40])))
    return tag


def schedule_request(
    time: str,
    *,
    zone: str | None = None,
    days: str | None = None,
    tag: str | None = None,
    digest: str | None = None,
    close: str | None = None,
) -> ScheduleRequest:
    """Check separately given options (Discord's form) and return the request."""
    hour, minute = parse_time(time)
    return ScheduleRequest(
        hour=hour,
        minute=minute,
        zone=parse_zone(zone) if zone else "UTC",
        days=parse_days(days) if days else Days.DAILY,
        tag=parse_tag(tag) if tag else None,
        digest_weekday=parse_weekday(digest) if digest else None,
        close_minutes=parse_duration(close) if close else None,
    )
