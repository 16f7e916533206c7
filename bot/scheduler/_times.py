"""When a schedule posts: pure functions of the schedule and an instant, exact across DST.

A slot is one local calendar day of the schedule, keyed by its date (``YYYY-MM-DD``), so a day
posts at most once whatever the clocks do. Its instant is the schedule's wall time on that day:

- on a spring-forward day a wall time inside the gap (02:30 when clocks jump from 02:00 to
  03:00) does not exist; the post happens once, at the first valid moment after it (03:00);
- on a fall-back day a wall time that happens twice (01:30 when clocks go from 02:00 back to
  01:00) posts once, at its first occurrence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.scheduler.port import Days, Schedule

# A zone's offset changes at most a few hours from one day to the next, so looking one day
# either side of a local date always covers every slot near a given instant.
_MARGIN_DAYS = 1


@dataclass(frozen=True, slots=True, order=True)
class Slot:
    """One post of a schedule: the local day it belongs to, and the UTC instant it happens."""

    at: datetime
    day: date

    @property
    def key(self) -> str:
        """Return the slot's key for claims: the local date."""
        return self.day.isoformat()


def zone_of(schedule: Schedule) -> ZoneInfo:
    """Return the schedule's time zone."""
    return ZoneInfo(schedule.zone)


def wall_time_instant(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """Return the UTC instant a wall time happens on a day: first occurrence, or gap's end."""
    local = datetime.combine(day, wall, tzinfo=zone)
    first = local.replace(fold=0).astimezone(UTC)
    if first.astimezone(zone).replace(tzinfo=None) == local.replace(tzinfo=None):
        return first
    # The wall time falls in a gap. fold=1 reads it with the offset after the change and fold=0
    # with the offset before; the change itself lies between the two readings. Find the first
    # instant whose local time has passed the wall time.
    low = local.replace(fold=1).astimezone(UTC)
    high = first
    if low > high:
        low, high = high, low
    target = local.replace(tzinfo=None)
    while high - low > timedelta(seconds=1):
        mid = low + (high - low) / 2
        if mid.astimezone(zone).replace(tzinfo=None) >= target:
            high = mid
        else:
            low = mid
    return high.replace(microsecond=0)


def posts_on(schedule: Schedule, day: date) -> bool:
    """Return whether the schedule posts on this local date."""
    return schedule.days is Days.DAILY or day.weekday() < 5


def slot_on(schedule: Schedule, day: date) -> Slot:
    """Return the slot of a local date (whether or not the schedule posts that day)."""
    wall = time(schedule.hour, schedule.minute)
    return Slot(at=wall_time_instant(day, wall, zone_of(schedule)), day=day)


def _days_around(schedule: Schedule, since: datetime, until: datetime) -> Iterator[date]:
    zone = zone_of(schedule)
    day = since.astimezone(zone).date() - timedelta(days=_MARGIN_DAYS)
    last = until.astimezone(zone).date() + timedelta(days=_MARGIN_DAYS)
    while day <= last:
        yield day
        day += timedelta(days=1)


def next_slot(schedule: Schedule, now: datetime, *, after_key: str | None = None) -> Slot:
    """Return the first post strictly after ``now`` (and after the slot ``after_key``, if given)."""
    # Weekdays-only schedules wait at most three days (Friday to Monday); a claimed key can be
    # at most a day ahead of the local date, so ten days always hold the answer.
    for day in _days_around(schedule, now, now + timedelta(days=10)):
        if not posts_on(schedule, day) or (after_key is not None and day.isoformat() <= after_key):
            continue
        slot = slot_on(schedule, day)
        if slot.at > now:
            return slot
    raise AssertionError(f"no post within ten days of {now} for {schedule}")


def next_post_time(now: datetime, schedule: Schedule) -> datetime:
    """Return the UTC instant of the schedule's next post strictly after ``now``."""
    return next_slot(schedule, now).at


def due_slots(schedule: Schedule, now: datetime, *, since: datetime) -> list[Slot]:
    """Return the posts with ``since <= at <= now``, oldest first."""
    if since > now:
        return []
    slots = (
        slot_on(schedule, d) for d in _days_around(schedule, since, now) if posts_on(schedule, d)
    )
    return [s for s in slots if since <= s.at <= now]


def digest_slot_on(schedule: Schedule, day: date) -> Slot | None:
    """Return the weekly digest's slot on a local date, if the digest falls that day."""
    if schedule.digest_weekday is None or day.weekday() != schedule.digest_weekday:
        return None
    return slot_on(schedule, day)


def due_digest_slots(schedule: Schedule, now: datetime, *, since: datetime) -> list[Slot]:
    """Return the digest slots with ``since <= at <= now``, oldest first."""
    if schedule.digest_weekday is None or since > now:
        return []
    slots = (digest_slot_on(schedule, d) for d in _days_around(schedule, since, now))
    return [s for s in slots if s is not None and since <= s.at <= now]


def next_digest_slot(schedule: Schedule, now: datetime) -> Slot | None:
    """Return the first digest strictly after ``now``, or None without a digest day."""
    if schedule.digest_weekday is None:
        return None
    for day in _days_around(schedule, now, now + timedelta(days=8)):
        slot = digest_slot_on(schedule, day)
        if slot is not None and slot.at > now:
            return slot
    raise AssertionError(f"no digest within eight days of {now} for {schedule}")
