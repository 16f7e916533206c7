"""Daily question posts and weekly digests, in every process, exactly once between them.

Each schedule keeps the time it is next due. A tick leases the due schedules in batches (never
the others, so an idle tick costs one indexed read whatever the fleet), each replica its own,
and works on them concurrently: at most ``FanOut.concurrency`` at once in a process and
``FanOut.per_workspace`` in one workspace or server, in turn order, so every workspace's first
channel is served before any workspace's second. The platform's own limits are honoured by its
client library (slack_sdk's rate-limit retry handler, discord.py's buckets), which waits out each
``Retry-After``.

For each schedule, the slots that fell due since the last one claimed are found; a process
claims a slot in the database before it posts (one row per channel, kind and slot, so replicas
and restarts never post twice), then closes the channel's open round and publishes its reveal,
posts the week's digest when one is due, and posts the new question. After downtime the newest
missed slot is posted late, with a note on the card, if it was missed by less than the grace
period; older ones, and any missed by more, are skipped and logged once.

A lease runs out when its replica stops renewing it (it died): the schedule is then due for any
replica, which takes over the slot claim left unsettled, once, and finishes the post: a card
whose reference was stored is only recorded; one that may have reached the channel unheard is
looked for on the platform first (Slack: the card's message metadata in the channel's history;
Discord: the bot's messages there, and a nonce it deduplicates), and posted only if not found.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot import messages as M
from bot.engine import QuizEngine
from bot.engine.model import Place, Question, QuestionCard, Round
from bot.engine.ports import Clock, utc_now
from bot.errors import ConfigError, NotFound, UserError
from bot.observability.metrics import count_loop_pass
from bot.scheduler._digest import WEEK, build_digest, digest_text
from bot.scheduler._parse import (
    ZONE_EXAMPLES,
    ScheduleRequest,
    schedule_request,
)
from bot.scheduler._service import ScheduleService, ScheduleView, describe_schedule
from bot.scheduler._times import (
    Slot,
    due_digest_slots,
    due_slots,
    next_digest_slot,
    next_post_time,
    next_slot,
    slot_on,
)
from bot.scheduler._track_day import summary_text, unit_text
from bot.scheduler.port import ClaimKind, Publisher, Schedule, ScheduleState, ScheduleStore

log = logging.getLogger(__name__)

GRACE = timedelta(hours=2)
# A post this much after its time says so on the card; a tick or two of delay is just normal.
LATE_NOTE_AFTER = timedelta(minutes=5)
# How far back a tick looks for missed slots: bounds the work after a long outage.
LOOKBACK = timedelta(days=8)
# How long a leased schedule stays this replica's without a renewal; renewed every third of it.
LEASE = timedelta(seconds=60)
# Daily posts in flight at once in a process on Discord (see FanOut.for_platform).
DISCORD_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class FanOut:
    """How much of a tick's work one process runs at once, and how it leases it."""

    # Most of a post's time is waiting: on the platform, and out a Retry-After (a second on
    # Slack between the reveal's reply and the new card in one channel), so many can wait at once.
    concurrency: int = 200
    per_workspace: int = 4
    lease: timedelta = LEASE

    @classmethod
    def for_platform(cls, platform: str) -> FanOut:
        """Return the fan-out that fits a platform's limits.

        Discord allows a bot 50 requests a second in all. discord.py learns of that limit only
        from a 429 (then every request waits out its ``retry_after`` and goes again at once),
        and gives a request up after five of them: 200 posts in flight overran it until posts
        failed. Each post makes its requests one after another, so a few posts in flight keep
        the bot near its limit without a storm of 429s (Discord also bans, for an hour, a
        client that makes 10,000 refused requests in ten minutes).
        """
        if platform == "discord":
            return cls(concurrency=DISCORD_CONCURRENCY)
        return cls()

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.per_workspace < 1:
            raise ValueError("the fan-out needs at least one post at a time")
        if self.lease <= timedelta(0):
            raise ValueError("a lease must last")


__all__ = [
    "GRACE",
    "ZONE_EXAMPLES",
    "FanOut",
    "ScheduleRequest",
    "ScheduleService",
    "ScheduleView",
    "TickReport",
    "describe_schedule",
    "next_post_time",
    "next_slot",
    "post_due",
    "run_scheduler",
    "schedule_request",
    "schedule_store_of",
]


@dataclass(frozen=True, slots=True)
class TickReport:
    """What one pass over the schedules did in this process."""

    posted: int = 0
    late: int = 0
    skipped: int = 0
    digests: int = 0
    failed: int = 0

    def __add__(self, other: TickReport) -> TickReport:
        return TickReport(
            self.posted + other.posted,
            self.late + other.late,
            self.skipped + other.skipped,
            self.digests + other.digests,
            self.failed + other.failed,
        )


def schedule_store_of(engine: QuizEngine) -> ScheduleStore:
    """Return the engine's store as the keeper of schedules (ConfigError if it keeps none)."""
    store = engine.store
    if not isinstance(store, ScheduleStore):
        raise ConfigError("the configured store does not keep daily schedules")
    return store


def new_claimant() -> str:
    """Return an id for this process's claims, unique across hosts and restarts."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _where(schedule: Schedule) -> str:
    p = schedule.place
    return f"{p.platform}/{p.workspace}/{p.channel}"


def late_note(schedule: Schedule, slot: Slot) -> str:
    """Return the note on a card posted late after downtime."""
    local = slot.at.astimezone(ZoneInfo(schedule.zone))
    return M.LATE_NOTE.format(time=f"{local:%H:%M}", zone=schedule.zone)


class _Tick:
    """One pass over the schedules of a platform, at one instant."""

    def __init__(
        self,
        engine: QuizEngine,
        publisher: Publisher,
        store: ScheduleStore,
        *,
        now: datetime,
        grace: timedelta,
        claimant: str,
        clock: Clock | None = None,
    ) -> None:
        self.engine = engine
        self.publisher = publisher
        self.store = store
        self.now = now
        self.grace = grace
        self.claimant = claimant
        # Posts late in a long fan-out read the time they go out at, for the late note.
        self.clock = clock or (lambda: now)

    async def claim(self, schedule: Schedule, kind: ClaimKind, slot: Slot) -> bool:
        return await self.store.claim_slot(
            schedule.place,
            kind,
            slot.key,
            slot_at=slot.at,
            claimant=self.claimant,
            at=self.now,
            # This tick holds the schedule's lease: an unsettled claim of another claimant is
            # one whose lease ran out, so its replica is gone.
            stale_before=self.now,
        )

    async def pick(
        self, schedule: Schedule, kind: ClaimKind, slots: list[Slot]
    ) -> tuple[Slot | None, TickReport]:
        """Claim the newest due slot; return it if it is to be posted, and count what is skipped.

        Only the claimant logs the skipped slots, so each is logged once among the replicas.
        """
        if not slots or not await self.claim(schedule, kind, slots[-1]):
            return None, TickReport()
        newest = slots[-1]
        too_late = self.now - newest.at > self.grace
        skipped = slots if too_late else slots[:-1]
        if too_late:
            await self._settle(schedule, kind, newest, "skipped", None)
        if skipped:
            log.warning(
                "skipped %d %s slot(s) in %s, missed by more than %s: %s",
                len(skipped),
                kind.value,
                _where(schedule),
                self.grace,
                ", ".join(s.key for s in skipped),
            )
        return (None if too_late else newest), TickReport(skipped=len(skipped))

    def floor(self, schedule: Schedule, last_key: str | None) -> datetime:
        """Return the earliest instant a due slot can have: after the last one claimed."""
        floor = max(schedule.since or self.now, self.now - LOOKBACK)
        if last_key is not None:
            # Only later days count; starting there keeps each pass to a few days of maths.
            floor = max(floor, slot_on(schedule, date.fromisoformat(last_key)).at)
        return floor

    async def run(self, state: ScheduleState) -> TickReport:
        schedule = state.schedule
        since = self.floor(schedule, state.last_post)
        posts = [
            s
            for s in due_slots(schedule, self.now, since=since)
            if state.last_post is None or s.key > state.last_post
        ]
        since = self.floor(schedule, state.last_digest)
        digests = [
            s
            for s in due_digest_slots(schedule, self.now, since=since)
            if state.last_digest is None or s.key > state.last_digest
        ]
        post, report = await self.pick(schedule, ClaimKind.POST, posts)
        digest, skipped = await self.pick(schedule, ClaimKind.DIGEST, digests)
        report += skipped
        if post is not None:
            # One read serves both: a round of this slot to resume, or the one to close.
            rnd = await self.engine.open_round(schedule.place)
            resumed = await self.resume(schedule, post, rnd)
            if resumed is not None:
                report += resumed
                post = None
            elif rnd is not None and not (rnd.scheduled and rnd.slot == post.key):
                await self.close_previous(rnd)
        if digest is not None:
            report += await self.post_digest(schedule, digest)
        if post is not None:
            report += await self.post_card(schedule, post)
        return report

    def next_due(self, schedule: Schedule) -> datetime:
        """Return when the schedule next needs a tick: its next post or digest after now."""
        due = next_slot(schedule, self.now).at
        digest = next_digest_slot(schedule, self.now)
        return min(due, digest.at) if digest is not None else due

    async def resume(self, schedule: Schedule, slot: Slot, rnd: Round | None) -> TickReport | None:
        """Finish a taken-over slot whose round its dead claimant had already opened.

        None when it had opened none: the slot is posted from the start. With the card's
        reference stored, the card went out and the slot is only recorded. Without one, the
        card may still have reached the channel, the claimant dying before it heard back: the
        platform is asked for the round's card (``find_card``), and only if it has none is the
        same round's card posted (with the same idempotency key, which Discord deduplicates).
        """
        if rnd is None or not rnd.scheduled or rnd.slot != slot.key:
            return None
        if rnd.message_ref is not None:
            await self._settle(schedule, ClaimKind.POST, slot, "posted", rnd.id)
            return TickReport()
        try:
            question = await self.engine.question_of(rnd)
        except NotFound:
            # The bank changed under it: nobody can answer that card; post a new one.
            await self.engine.withdraw(rnd.id)
            return None
        late = self.clock() - slot.at > LATE_NOTE_AFTER
        card = QuestionCard(
            rnd,
            question,
            answered=await self.engine.answered_count(rnd.id),
            note=late_note(schedule, slot) if late else None,
        )
        try:
            ref = await self.publisher.find_card(card)
        except Exception:
            log.exception("could not look for round %s's card in %s", rnd.id, _where(schedule))
            ref = None
        if ref is not None:
            log.info("round %s's card was out already in %s; recorded", rnd.id, _where(schedule))
            await self.engine.attach_message(rnd.id, ref)
        elif not await self._send(card):
            await self.engine.withdraw(rnd.id)
            await self._settle(schedule, ClaimKind.POST, slot, "failed", rnd.id)
            return TickReport(failed=1)
        await self._settle(schedule, ClaimKind.POST, slot, "late" if late else "posted", rnd.id)
        return TickReport(posted=int(ref is None), late=int(late and ref is None))

    async def close_previous(self, rnd: Round) -> None:
        reveal = await self.engine.close(rnd.id)
        if reveal is None:
            return  # another process closed it and publishes its reveal
        try:
            await self.publisher.publish_reveal(reveal)
        except Exception:
            log.exception("could not publish the reveal of round %s", rnd.id)

    async def track_day(self, schedule: Schedule, slot: Slot) -> str | None:
        """Run the channel's learning track's day, if one runs: post the unit it opens (and
        return the question its round asks), or the track's end."""
        place = schedule.place
        day = await self.engine.tracks.day(
            place, slot.key, lambda: self.engine.store.question_counts(place)
        )
        if day is None:
            return None
        post = unit_text(day) if day.summary is None else summary_text(day.summary)
        try:
            await self.publisher.post_text(place, post)
        except Exception:
            log.exception("could not post the learning track's day in %s", _where(schedule))
        return day.question_id

    async def post_card(self, schedule: Schedule, slot: Slot) -> TickReport:
        late = self.clock() - slot.at > LATE_NOTE_AFTER
        duration = timedelta(minutes=schedule.close_minutes or 0)
        try:
            question_id = await self.track_day(schedule, slot)
            card = await self.engine.start_round(
                schedule.place,
                tag=schedule.tag,
                duration=duration,
                scheduled=True,
                slot=slot.key,
                note=late_note(schedule, slot) if late else None,
                question_id=question_id,
            )
        except UserError as exc:
            log.warning("daily question %s in %s not posted: %s", slot.key, _where(schedule), exc)
            await self._settle(schedule, ClaimKind.POST, slot, "failed", None)
            return TickReport(failed=1)
        if not await self._send(card):
            # Nobody saw it: take it back, so it neither blocks the channel nor breaks streaks.
            await self.engine.withdraw(card.round_id)
            await self._settle(schedule, ClaimKind.POST, slot, "failed", card.round_id)
            return TickReport(failed=1)
        await self._settle(
            schedule, ClaimKind.POST, slot, "late" if late else "posted", card.round_id
        )
        log.info("posted daily question %s in %s", slot.key, _where(schedule))
        return TickReport(posted=1, late=int(late))

    async def _send(self, card: QuestionCard) -> bool:
        try:
            ref = await self.publisher.post_card(card)
            await self.engine.attach_message(card.round_id, ref)
        except Exception:
            log.exception("could not post round %s in %s", card.round_id, card.round.place)
            return False
        return True

    async def post_digest(self, schedule: Schedule, slot: Slot) -> TickReport:
        place = schedule.place
        since = slot.at - WEEK
        bank = await self.engine.bank_for(place.platform, place.workspace)
        rounds = await self.store.channel_rounds(place, since, slot.at)
        # A computed question is named as the channel was asked it (bot.engine.instances).
        stored = await self.engine.computed_questions(
            place.platform, place.workspace, [r.question_id for r in rounds]
        )

        def question(question_id: str) -> Question | None:
            try:
                return stored.get(question_id) or bank.by_id(question_id)
            except KeyError:
                return None

        digest = build_digest(
            place,
            slot.at,
            schedule.zone,
            await self.store.channel_scores(place, since, slot.at),
            rounds,
            question,
        )
        if digest is None:
            await self._settle(schedule, ClaimKind.DIGEST, slot, "empty", None)
            return TickReport()
        try:
            await self.publisher.post_text(place, digest_text(digest))
        except Exception:
            log.exception("could not post the weekly digest in %s", _where(schedule))
            await self._settle(schedule, ClaimKind.DIGEST, slot, "failed", None)
            return TickReport(failed=1)
        await self._settle(schedule, ClaimKind.DIGEST, slot, "posted", None)
        return TickReport(digests=1)

    async def _settle(
        self, schedule: Schedule, kind: ClaimKind, slot: Slot, outcome: str, round_id: int | None
    ) -> None:
        await self.store.settle_claim(
            schedule.place, kind, slot.key, outcome=outcome, round_id=round_id
        )


async def post_due(
    engine: QuizEngine,
    publisher: Publisher,
    store: ScheduleStore,
    *,
    now: datetime,
    grace: timedelta = GRACE,
    claimant: str,
    fan_out: FanOut | None = None,
    clock: Clock | None = None,
) -> TickReport:
    """Post every slot of the publisher's platform that is due at ``now`` and not yet claimed."""
    tick = _Tick(engine, publisher, store, now=now, grace=grace, claimant=claimant, clock=clock)
    return await _FanOutRun(tick, fan_out or FanOut.for_platform(publisher.platform)).run()


class _FanOutRun:
    """One tick's due schedules, leased in batches and worked on concurrently within bounds."""

    def __init__(self, tick: _Tick, fan_out: FanOut) -> None:
        self.tick = tick
        self.fan_out = fan_out
        self.report = TickReport()
        self.held: dict[asyncio.Task[None], Place] = {}
        self.workspaces: dict[str, asyncio.Semaphore] = {}
        # Until when this process's leases are known to hold (the last renewal that answered).
        self.held_until = tick.now + fan_out.lease

    async def run(self) -> TickReport:
        tick, fan_out = self.tick, self.fan_out
        platform = tick.publisher.platform
        renewing: asyncio.Task[None] | None = None
        try:
            more = True
            # Top up whenever a quarter of the places is free: fewer, larger claims.
            refill = max(1, fan_out.concurrency // 4)
            while more or self.held:
                room = fan_out.concurrency - len(self.held)
                if more and (room >= refill or not self.held):
                    states = await tick.store.claim_due(
                        platform,
                        now=tick.now,
                        claimant=tick.claimant,
                        limit=room,
                        lease=fan_out.lease,
                    )
                    more = len(states) == room
                    if states and renewing is None:
                        renewing = asyncio.create_task(
                            self._renew(platform), name="quiz-lease-renewal"
                        )
                    for state in states:
                        task = asyncio.create_task(self._one(state))
                        self.held[task] = state.schedule.place
                    if more:
                        continue
                if self.held:
                    done, _ = await asyncio.wait(self.held, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        del self.held[task]
        finally:
            if renewing is not None:
                renewing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewing
        return self.report

    async def _one(self, state: ScheduleState) -> None:
        tick = self.tick
        schedule = state.schedule
        gate = self.workspaces.setdefault(
            schedule.place.workspace, asyncio.Semaphore(self.fan_out.per_workspace)
        )
        async with gate:
            if tick.clock() >= self.held_until:
                # The leases could not be renewed (the database is away): another replica may
                # hold this schedule by now, so leave it to whoever does.
                return
            try:
                done = await tick.run(state)
                self.report += done  # added after the await, so no concurrent sum is lost
            except Exception:
                # One broken channel (a zone removed from tzdata, a store hiccup) must not stop
                # the others.
                log.exception("daily question in %s failed", _where(schedule))
            try:
                due = tick.next_due(schedule)
                if not await tick.store.release_schedule(
                    schedule.place, claimant=tick.claimant, due_at=due
                ):
                    log.info("the schedule in %s changed while it was posted", _where(schedule))
            except Exception:
                # The lease runs out and the next tick (here or elsewhere) looks again.
                log.exception("could not release the schedule in %s", _where(schedule))

    async def _renew(self, platform: str) -> None:
        lease = self.fan_out.lease
        every = lease.total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            places = list(self.held.values())
            at = self.tick.clock()
            try:
                await self.tick.store.renew_leases(
                    platform, places, claimant=self.tick.claimant, until=at + lease
                )
            except Exception:
                log.exception("could not renew the daily schedules' leases")
                continue
            self.held_until = at + lease


async def run_scheduler(
    engine: QuizEngine,
    publisher: Publisher,
    store: ScheduleStore,
    *,
    clock: Clock = utc_now,
    interval: float = 20.0,
    stop: asyncio.Event | None = None,
    grace: timedelta = GRACE,
    claimant: str | None = None,
    fan_out: FanOut | None = None,
) -> None:
    """Post due daily questions and digests every ``interval`` seconds until ``stop`` is set."""
    stop = stop or asyncio.Event()
    claimant = claimant or new_claimant()
    while not stop.is_set():
        try:
            await post_due(
                engine,
                publisher,
                store,
                now=clock(),
                grace=grace,
                claimant=claimant,
                fan_out=fan_out,
                clock=clock,
            )
        except Exception:
            log.exception("the daily scheduler pass failed; will try again")
        count_loop_pass("scheduler")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)
