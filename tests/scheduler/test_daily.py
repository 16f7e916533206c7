"""The daily scheduler on a real engine and store, with a fake clock and a recording publisher."""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import Place, QuizEngine
from bot.errors import ConfigError
from bot.scheduler import run_scheduler, schedule_store_of
from bot.scheduler.daily import post_due
from bot.scheduler.port import ClaimKind, Days, Schedule
from bot.scheduler.timers import close_due_rounds
from bot.storage import SqlStore
from tests.conftest import ClockReads, FakeClock, SimpleBank, make_question
from tests.scheduler.conftest import RecordingPublisher

PLACE = Place("slack", "T1", "C1")
MONDAY = datetime(2026, 3, 2, tzinfo=UTC)


def engine_for(store: SqlStore, clock: FakeClock, n: int = 10, **kw) -> QuizEngine:
    bank = SimpleBank([make_question(f"q{i}", answer="A", **kw) for i in range(n)])
    return QuizEngine(store, bank, clock=clock, rng=random.Random(3))


async def tick(engine, publisher, store, clock, claimant="test"):
    return await post_due(engine, publisher, store, now=clock(), claimant=claimant)


async def test_a_simulated_week(store: SqlStore):
    """Seven daily posts at 09:00 Berlin, six reveals, streaks, and Sunday's digest."""
    clock = FakeClock(MONDAY + timedelta(hours=7))  # Monday 08:00 in Berlin
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await store.put_schedule(
        Schedule(PLACE, 9, 0, "Europe/Berlin", digest_weekday=6, since=clock(), set_by="admin")
    )
    # Who answers what each day (Monday first); None: no answer.
    plan = {
        "U1": ["A", "A", "A", "A", "A", "A", "A"],
        "U2": ["A", "A", None, "A", "A", "A", "B"],
        "U3": ["B", None, None, None, None, None, None],
    }
    streak_seen: dict[str, list[int]] = {u: [] for u in plan}
    day = -1
    end = MONDAY + timedelta(days=7)
    while clock() < end:
        before = len(publisher.cards)
        await tick(engine, publisher, store, clock)
        if len(publisher.cards) > before:
            day += 1
            card = publisher.cards[-1]
            assert card.round.opened_at == clock()
            for user, choices in plan.items():
                if choices[day] is not None:
                    clock.now = card.round.opened_at + timedelta(minutes=5)
                    outcome = await engine.answer("slack", "T1", card.round_id, user, choices[day])
                    streak_seen[user].append(outcome.streak)
            clock.now = card.round.opened_at
        clock.advance(minutes=30)

    cards, reveals, texts = publisher.cards, publisher.reveals, publisher.texts
    assert len(cards) == 7
    assert len(reveals) == 6
    assert [c.round.opened_at.astimezone(UTC).hour for c in cards] == [8] * 7  # 09:00 CET
    assert [c.round.slot for c in cards] == [f"2026-03-0{d}" for d in range(2, 9)]
    assert len({c.question.id for c in cards}) == 7  # no repeats before the bank is used up
    assert all(c.note is None and c.round.scheduled and c.round.closes_at is None for c in cards)
    assert [r.round.id for r in reveals] == [c.round_id for c in cards[:6]]
    assert [r.answered for r in reveals] == [3, 2, 1, 2, 2, 2]
    assert not (await engine.get_round(cards[6].round_id)).is_closed

    assert streak_seen["U1"] == [1, 2, 3, 4, 5, 6, 7]
    assert streak_seen["U2"] == [1, 2, 1, 2, 3, 0]
    expected = {"U1": (7, 7, 7), "U2": (0, 3, 6), "U3": (0, 0, 1)}
    for user, (current, best, answered) in expected.items():
        stats = await engine.stats(PLACE, user)
        assert (stats.current_streak, stats.best_streak, stats.answered) == (
            current,
            best,
            answered,
        )

    # Sunday: Saturday's reveal, then the digest, then Sunday's question.
    kinds = [k for k, _ in publisher.events]
    assert kinds[-3:] == ["reveal", "text", "card"]
    [(where, digest)] = texts
    assert where == PLACE
    lines = digest.splitlines()
    assert lines[0] == "Weekly digest, Sun 1 Mar to Sun 8 Mar: 6 questions in this channel."
    assert "1. <@U1>: 12 points (6 of 6 right)" in lines
    assert "2. <@U2>: 10 points (5 of 5 right)" in lines
    assert "3. <@U3>: 0 points (0 of 1 right)" in lines
    monday = cards[0].question
    assert f"Hardest question of the week (67% right, 2 of 3): {monday.text}" in digest
    assert "Answer: A) choice A of" in digest

    # Running the same instant again (a restart, another replica) posts nothing more.
    again = await tick(engine, publisher, store, clock, claimant="restarted")
    assert (again.posted, again.digests) == (0, 0)
    assert len(publisher.events) == len(kinds)


async def test_downtime_posts_a_recent_slot_late_and_skips_older_ones(
    store: SqlStore, caplog: pytest.LogCaptureFixture
):
    clock = FakeClock(MONDAY + timedelta(hours=8))
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", since=clock()))
    clock.now = MONDAY + timedelta(hours=9)
    assert (await tick(engine, publisher, store, clock)).posted == 1

    clock.now = MONDAY + timedelta(days=1, hours=10, minutes=30)  # Tuesday's slot, 90 min late
    report = await tick(engine, publisher, store, clock)
    assert (report.posted, report.late, report.skipped) == (1, 1, 0)
    late = publisher.cards[-1]
    assert (
        late.note
        == "Posted late: this daily question was due at 09:00 UTC while the bot was offline."
    )
    assert late.round.slot == "2026-03-03"
    assert len(publisher.reveals) == 1

    caplog.set_level(logging.WARNING, logger="bot.scheduler.daily")
    clock.now = MONDAY + timedelta(days=3, hours=12)  # Thursday: Wednesday's and Thursday's missed
    report = await tick(engine, publisher, store, clock)
    assert (report.posted, report.skipped) == (0, 2)
    assert "skipped 2 post slot(s) in slack/T1/C1" in caplog.text
    assert "2026-03-04, 2026-03-05" in caplog.text
    assert len(publisher.cards) == 2
    assert await store.last_claim(PLACE, ClaimKind.POST) == "2026-03-05"

    caplog.clear()
    assert (await tick(engine, publisher, store, clock, claimant="other")).skipped == 0
    assert "skipped" not in caplog.text  # logged once, by the claimant

    clock.now = MONDAY + timedelta(days=4, hours=9)  # Friday on time
    report = await tick(engine, publisher, store, clock)
    assert (report.posted, report.late) == (1, 0)
    assert publisher.cards[-1].note is None
    assert [r.round.id for r in publisher.reveals] == [c.round_id for c in publisher.cards[:2]]


async def test_close_after_a_duration_and_no_second_reveal(store: SqlStore):
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", close_minutes=90, since=clock()))
    clock.now = MONDAY + timedelta(hours=9)
    await tick(engine, publisher, store, clock)
    card = publisher.cards[0]
    assert card.round.closes_at == clock() + timedelta(minutes=90)
    clock.advance(minutes=90)
    assert await close_due_rounds(engine, publisher) == 1
    clock.now = MONDAY + timedelta(days=1, hours=9)
    await tick(engine, publisher, store, clock)
    assert [r.round.id for r in publisher.reveals] == [card.round_id]
    assert len(publisher.cards) == 2


async def test_weekdays_only_and_tag(store: SqlStore):
    clock = FakeClock(MONDAY + timedelta(days=4))  # Friday 00:00
    bank = SimpleBank(
        [make_question(f"n{i}", tags=("net",)) for i in range(3)]
        + [make_question(f"m{i}", tags=("mem",)) for i in range(3)]
    )
    engine = QuizEngine(store, bank, clock=clock, rng=random.Random(1))
    publisher = RecordingPublisher()
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", Days.WEEKDAYS, tag="net", since=clock()))
    while clock() < MONDAY + timedelta(days=11):  # to Friday 13 March, 00:00
        await tick(engine, publisher, store, clock)
        clock.advance(hours=1)
    assert [c.round.slot for c in publisher.cards] == [
        "2026-03-06",
        "2026-03-09",
        "2026-03-10",
        "2026-03-11",
        "2026-03-12",
    ]
    assert all(c.question.id.startswith("n") for c in publisher.cards)
    # three "net" questions: all asked once before any is asked again
    assert {c.question.id for c in publisher.cards[:3]} == {"n0", "n1", "n2"}


async def test_one_broken_channel_does_not_stop_the_others(store: SqlStore):
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    broken = Place("slack", "T1", "C-broken")
    await store.put_schedule(Schedule(broken, 9, 0, "UTC", tag="gone", since=clock()))
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", since=clock()))
    clock.now = MONDAY + timedelta(hours=9)
    report = await tick(engine, publisher, store, clock)
    assert (report.posted, report.failed) == (1, 1)
    assert [c.round.place for c in publisher.cards] == [PLACE]


async def test_a_card_that_cannot_be_posted_is_closed_quietly(store: SqlStore):
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher(fail_cards=True)
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", since=clock()))
    clock.now = MONDAY + timedelta(hours=9)
    report = await tick(engine, publisher, store, clock)
    assert (report.posted, report.failed) == (0, 1)
    assert await engine.open_round(PLACE) is None
    assert publisher.events == []


async def test_a_manual_round_open_at_post_time_is_revealed_first(store: SqlStore):
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", since=clock()))
    clock.now = MONDAY + timedelta(hours=8, minutes=55)
    manual = await engine.start_round(PLACE, duration=timedelta(hours=1))
    clock.now = MONDAY + timedelta(hours=9)
    await tick(engine, publisher, store, clock)
    assert [k for k, _ in publisher.events] == ["reveal", "card"]
    assert publisher.reveals[0].round.id == manual.round_id


async def test_an_empty_week_posts_no_digest(store: SqlStore):
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", digest_weekday=0, since=clock()))
    clock.now = MONDAY + timedelta(hours=9)
    report = await tick(engine, publisher, store, clock)
    assert (report.posted, report.digests) == (1, 0)
    assert publisher.texts == []
    assert await store.last_claim(PLACE, ClaimKind.DIGEST) == "2026-03-02"


async def test_run_scheduler_loops_until_stopped(store: SqlStore):
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await store.put_schedule(Schedule(PLACE, 9, 0, "UTC", since=clock()))
    clock.now = MONDAY + timedelta(hours=9, seconds=10)
    stop = asyncio.Event()
    reads = ClockReads(clock)
    task = asyncio.create_task(
        run_scheduler(engine, publisher, store, clock=reads, interval=0.01, stop=stop)
    )
    await asyncio.wait_for(publisher.card_posted.wait(), timeout=10)
    await reads.passes(3)  # several more passes at the same instant
    stop.set()
    await asyncio.wait_for(task, timeout=5)
    assert len(publisher.cards) == 1


async def test_the_schedule_store_is_the_engine_store(store: SqlStore):
    engine = engine_for(store, FakeClock(MONDAY))
    assert schedule_store_of(engine) is store

    class RoundsOnly:
        """A store that keeps rounds but no schedules."""

    engine.store = RoundsOnly()  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="does not keep daily schedules"):
        schedule_store_of(engine)
