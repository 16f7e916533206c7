"""Set, show and remove a channel's daily question: what the chat layer's schedule flows call."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot import messages as M
from bot.engine import COMPUTED, QuizEngine
from bot.engine.model import Place
from bot.engine.ports import Clock
from bot.errors import UserError
from bot.scheduler._parse import WEEKDAY_NAMES, ScheduleRequest
from bot.scheduler._times import Slot, next_digest_slot, next_slot, zone_of
from bot.scheduler.port import ClaimKind, Days, Schedule, ScheduleStore
from bot.text import Code, Text, echo, lines, say

NOT_ADMIN = say(M.SCHEDULE_ADMINS_ONLY, admins="admins")


@dataclass(frozen=True, slots=True)
class ScheduleView:
    """A channel's schedule with its next post, for showing to people."""

    schedule: Schedule
    next_post: Slot
    next_digest: Slot | None

    @property
    def next_local(self) -> datetime:
        """Return the next post in the schedule's own time zone."""
        return self.next_post.at.astimezone(zone_of(self.schedule))

    @property
    def next_utc(self) -> datetime:
        """Return the next post in UTC."""
        return self.next_post.at


def minutes_text(minutes: int) -> str:
    """Return ``45 min``, ``2 h`` or ``1 h 30 min``."""
    hours, rest = divmod(minutes, 60)
    parts = ([M.HOURS.format(n=hours)] if hours else []) + (
        [M.MINUTES.format(n=rest)] if rest else []
    )
    return " ".join(parts)


def _moment(at: datetime) -> str:
    return M.SCHEDULE_MOMENT.format(
        day=f"{at:%a} {at.day} {at:%b %Y}", time=f"{at:%H:%M}", zone=at.tzname()
    )


def describe_schedule(view: ScheduleView) -> Text:
    """Render a schedule and its next post time, in its zone and in UTC."""
    s = view.schedule
    days = M.DAYS_DAILY if s.days is Days.DAILY else M.DAYS_WEEKDAYS
    at = f"{s.hour:02d}:{s.minute:02d}"
    head = (
        say(M.SCHEDULE_HEAD_TAGGED, time=at, zone=s.zone, days=days, tag=Code(s.tag))
        if s.tag
        else say(M.SCHEDULE_HEAD, time=at, zone=s.zone, days=days)
    )
    closing = (
        say(M.SCHEDULE_CLOSES_AFTER, duration=minutes_text(s.close_minutes))
        if s.close_minutes
        else say(M.SCHEDULE_OPEN_UNTIL_NEXT)
    )
    digest = None
    if s.digest_weekday is not None:
        digest = say(M.SCHEDULE_DIGEST, day=WEEKDAY_NAMES[s.digest_weekday].capitalize())
    local, utc = view.next_local, view.next_utc
    if local.utcoffset() == utc.utcoffset():
        upcoming = say(M.SCHEDULE_NEXT, local=_moment(local))
    else:
        upcoming = say(M.SCHEDULE_NEXT_BOTH, local=_moment(local), utc=_moment(utc))
    return lines(head, closing, digest, upcoming)


class ScheduleService:
    """Keep channels' schedules; the scheduler loop reads what this writes."""

    def __init__(self, engine: QuizEngine, store: ScheduleStore, *, clock: Clock | None = None):
        self.engine = engine
        self.store = store
        self.clock = clock or engine.clock

    async def set(
        self, place: Place, request: ScheduleRequest, *, user: str, admin: bool
    ) -> ScheduleView:
        """Store the channel's schedule (admins only) and return it with its next post."""
        if not admin:
            raise UserError(NOT_ADMIN)
        bank = await self.engine.bank_for(place.platform, place.workspace)
        if request.tag is not None and request.tag.casefold() == COMPUTED:
            # A daily computed question: the engine draws it from a template.
            if not self.engine.bank.templates:
                raise UserError(say(M.NO_TEMPLATES))
        elif request.tag is not None and not bank.filter(request.tag):
            raise UserError(say(M.NO_SUCH_TAG, tag=echo(request.tag)))
        schedule = Schedule(
            place=place,
            hour=request.hour,
            minute=request.minute,
            zone=request.zone,
            days=request.days,
            tag=request.tag,
            digest_weekday=request.digest_weekday,
            close_minutes=request.close_minutes,
            since=self.clock(),
            set_by=user,
        )
        await self.store.put_schedule(schedule)
        return await self._view(schedule)

    async def show(self, place: Place) -> ScheduleView | None:
        """Return the channel's schedule with its next post, or None."""
        schedule = await self.store.get_schedule(place)
        return await self._view(schedule) if schedule is not None else None

    async def remove(self, place: Place, *, admin: bool) -> bool:
        """Stop the channel's daily question (admins only); return whether there was one."""
        if not admin:
            raise UserError(NOT_ADMIN)
        return await self.store.delete_schedule(place)

    async def forget_workspace(self, platform: str, workspace: str) -> int:
        """Stop every daily question of a workspace the bot was removed from; return how many."""
        return await self.store.delete_schedules(platform, workspace)

    async def _view(self, schedule: Schedule) -> ScheduleView:
        now = self.clock()
        claimed = await self.store.last_claim(schedule.place, ClaimKind.POST)
        return ScheduleView(
            schedule=schedule,
            next_post=next_slot(schedule, now, after_key=claimed),
            next_digest=next_digest_slot(schedule, now),
        )
