"""Next post times: pure functions of a fixed instant and a schedule, across DST changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.engine.model import Place
from bot.scheduler import next_post_time
from bot.scheduler._times import (
    due_digest_slots,
    due_slots,
    next_digest_slot,
    next_slot,
    wall_time_instant,
)
from bot.scheduler.port import Days, Schedule

PLACE = Place("slack", "T1", "C1")


def sched(at: str, zone: str = "UTC", days: Days = Days.DAILY, digest: int | None = None):
    hour, minute = (int(x) for x in at.split(":"))
    return Schedule(PLACE, hour, minute, zone, days, digest_weekday=digest)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "now", "expected"),
    [
        # ordinary days
        (sched("09:00"), utc(2026, 3, 2, 8, 0), utc(2026, 3, 2, 9, 0)),
        (sched("09:00"), utc(2026, 3, 2, 9, 0), utc(2026, 3, 3, 9, 0)),  # strictly after now
        (sched("09:00"), utc(2026, 3, 2, 9, 0, 1), utc(2026, 3, 3, 9, 0)),
        (sched("00:00"), utc(2026, 12, 31, 23, 59), utc(2027, 1, 1, 0, 0)),
        (sched("23:59"), utc(2028, 2, 28, 23, 59), utc(2028, 2, 29, 23, 59)),  # leap day
        # weekdays only: Friday after the post, Saturday and Sunday all wait for Monday
        (sched("09:00", days=Days.WEEKDAYS), utc(2026, 3, 6, 8, 0), utc(2026, 3, 6, 9, 0)),
        (sched("09:00", days=Days.WEEKDAYS), utc(2026, 3, 6, 9, 30), utc(2026, 3, 9, 9, 0)),
        (sched("09:00", days=Days.WEEKDAYS), utc(2026, 3, 7, 12, 0), utc(2026, 3, 9, 9, 0)),
        (sched("09:00", days=Days.WEEKDAYS), utc(2026, 3, 8, 23, 0), utc(2026, 3, 9, 9, 0)),
        # weekdays are the schedule's local days: Monday 08:00 in Auckland is Sunday in UTC
        (
            sched("08:00", "Pacific/Auckland", Days.WEEKDAYS),
            utc(2026, 3, 6, 12, 0),  # Saturday 01:00 in Auckland
            utc(2026, 3, 8, 19, 0),  # Monday 9 March 08:00 NZDT
        ),
        # Europe/Berlin: 09:00 moves from 08:00 UTC to 07:00 UTC on 29 March 2026
        (sched("09:00", "Europe/Berlin"), utc(2026, 3, 28, 9, 0), utc(2026, 3, 29, 7, 0)),
        (sched("09:00", "Europe/Berlin"), utc(2026, 10, 24, 8, 0), utc(2026, 10, 25, 8, 0)),
        # Berlin spring forward (02:00 -> 03:00): 02:30 does not exist, posts at 03:00 CEST
        (sched("02:30", "Europe/Berlin"), utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 1, 0)),
        (sched("02:30", "Europe/Berlin"), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)),
        # Berlin fall back (03:00 -> 02:00): 02:30 happens twice, posts at the first only
        (sched("02:30", "Europe/Berlin"), utc(2026, 10, 24, 12, 0), utc(2026, 10, 25, 0, 30)),
        (sched("02:30", "Europe/Berlin"), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)),
        # America/New_York spring forward on 8 March 2026 and fall back on 1 November 2026
        (sched("02:30", "America/New_York"), utc(2026, 3, 7, 12, 0), utc(2026, 3, 8, 7, 0)),
        (sched("02:30", "America/New_York"), utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 6, 30)),
        (sched("09:00", "America/New_York"), utc(2026, 3, 7, 15, 0), utc(2026, 3, 8, 13, 0)),
        (sched("01:30", "America/New_York"), utc(2026, 10, 31, 12, 0), utc(2026, 11, 1, 5, 30)),
        (sched("01:30", "America/New_York"), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)),
        (sched("09:00", "America/New_York"), utc(2026, 11, 1, 12, 0), utc(2026, 11, 1, 14, 0)),
        # Pacific/Chatham: +12:45 / +13:45, changes at 02:45 standard time
        (sched("09:00", "Pacific/Chatham"), utc(2026, 3, 2, 0, 0), utc(2026, 3, 2, 19, 15)),
        (sched("09:00", "Pacific/Chatham"), utc(2026, 7, 1, 0, 0), utc(2026, 7, 1, 20, 15)),
        # spring forward 27 Sep 2026, 02:45 -> 03:45: 03:00 posts at 03:45 CHADT
        (sched("03:00", "Pacific/Chatham"), utc(2026, 9, 26, 0, 0), utc(2026, 9, 26, 14, 0)),
        # fall back 5 Apr 2026, 03:45 -> 02:45: 03:00 happens twice, first at 13:15 UTC
        (sched("03:00", "Pacific/Chatham"), utc(2026, 4, 4, 0, 0), utc(2026, 4, 4, 13, 15)),
        (sched("03:00", "Pacific/Chatham"), utc(2026, 4, 4, 13, 15), utc(2026, 4, 5, 14, 15)),
        # a schedule created just after today's slot waits for tomorrow's
        (sched("09:00", "Europe/Berlin"), utc(2026, 3, 2, 8, 0, 30), utc(2026, 3, 3, 8, 0)),
        (
            sched("09:00", "Europe/Berlin", Days.WEEKDAYS),
            utc(2026, 3, 6, 8, 0, 30),  # Friday 09:00:30 CET
            utc(2026, 3, 9, 8, 0),
        ),
    ],
)
def test_next_post_time(schedule: Schedule, now: datetime, expected: datetime):
    assert next_post_time(now, schedule) == expected


def test_a_schedule_created_just_after_its_slot_owes_nothing_today():
    schedule = sched("09:00", "Europe/Berlin")
    created = utc(2026, 3, 2, 8, 0, 30)
    assert due_slots(schedule, created + timedelta(hours=1), since=created) == []
    [tomorrow] = due_slots(schedule, utc(2026, 3, 3, 8, 0), since=created)
    assert (tomorrow.key, tomorrow.at) == ("2026-03-03", utc(2026, 3, 3, 8, 0))


@pytest.mark.parametrize(
    ("zone", "day", "wall", "expected"),
    [
        ("Europe/Berlin", date(2026, 3, 29), time(2, 0), utc(2026, 3, 29, 1, 0)),
        ("Europe/Berlin", date(2026, 3, 29), time(2, 59), utc(2026, 3, 29, 1, 0)),
        ("Europe/Berlin", date(2026, 3, 29), time(3, 0), utc(2026, 3, 29, 1, 0)),
        ("Europe/Berlin", date(2026, 3, 29), time(1, 59), utc(2026, 3, 29, 0, 59)),
        ("America/New_York", date(2026, 3, 8), time(2, 0), utc(2026, 3, 8, 7, 0)),
        ("Pacific/Chatham", date(2026, 9, 27), time(2, 45), utc(2026, 9, 26, 14, 0)),
        # Lord Howe Island moves by half an hour: 02:00 -> 02:30 on 4 October 2026
        ("Australia/Lord_Howe", date(2026, 10, 4), time(2, 15), utc(2026, 10, 3, 15, 30)),
    ],
)
def test_wall_time_in_a_gap_posts_when_the_gap_ends(zone, day, wall, expected):
    assert wall_time_instant(day, wall, ZoneInfo(zone)) == expected


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Pacific/Chatham", "UTC"])
@pytest.mark.parametrize("at", ["00:00", "01:30", "02:30", "03:00", "09:15", "23:45"])
def test_a_year_of_slots_posts_once_per_local_day(zone: str, at: str):
    schedule = sched(at, zone)
    tz = ZoneInfo(zone)
    now = utc(2026, 1, 1, 0, 0)
    days = []
    for _ in range(365):
        slot = next_slot(schedule, now)
        assert slot.at > now
        local = slot.at.astimezone(tz)
        assert local.date() == slot.day
        wall = (local.hour, local.minute)
        if wall != (schedule.hour, schedule.minute):  # only inside a spring-forward gap
            assert local.dst() and wall > (schedule.hour, schedule.minute)
            before = (slot.at - timedelta(seconds=1)).astimezone(tz)
            assert before.utcoffset() != local.utcoffset()
        days.append(slot.day)
        now = slot.at
    assert days == [days[0] + timedelta(days=i) for i in range(365)]


def test_due_slots_lists_every_missed_day_oldest_first():
    schedule = sched("09:00", "Europe/Berlin", Days.WEEKDAYS)
    slots = due_slots(schedule, utc(2026, 3, 10, 9, 0), since=utc(2026, 3, 5, 0, 0))
    assert [s.key for s in slots] == ["2026-03-05", "2026-03-06", "2026-03-09", "2026-03-10"]


def test_after_key_skips_a_claimed_day():
    schedule = sched("10:00")
    slot = next_slot(schedule, utc(2026, 3, 2, 9, 30), after_key="2026-03-02")
    assert slot.key == "2026-03-03"


def test_digest_slots_fall_on_the_chosen_weekday():
    schedule = sched("09:00", "America/New_York", digest=4)  # Fridays
    nxt = next_digest_slot(schedule, utc(2026, 3, 2, 12, 0))
    assert nxt is not None and (nxt.key, nxt.at) == ("2026-03-06", utc(2026, 3, 6, 14, 0))
    due = due_digest_slots(schedule, utc(2026, 3, 20, 14, 0), since=utc(2026, 3, 1, 0, 0))
    assert [s.key for s in due] == ["2026-03-06", "2026-03-13", "2026-03-20"]
    assert next_digest_slot(sched("09:00"), utc(2026, 3, 2, 12, 0)) is None
