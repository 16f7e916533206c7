"""Learning tracks on the daily schedule: a real engine and store (SQLite, and PostgreSQL when
QUIZBOT_TEST_DATABASE_URL is set), an injected clock, days in several zones."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

from bot.engine import Place, QuizEngine
from bot.engine.tracks import Track, TrackRun, Unit, UnitDone
from bot.scheduler.daily import post_due
from bot.scheduler.port import Days, Schedule
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question
from tests.scheduler.conftest import RecordingPublisher

PLACE = Place("slack", "T1", "C1")
MONDAY = datetime(2026, 3, 2, tzinfo=UTC)
TRACK = Track(
    "three",
    "Three units",
    (
        Unit(("q1", "q2"), "Links come first.", "Links"),
        Unit(("q3",), "", "Storage"),
        Unit(("q4",), "Last one.", ""),
    ),
)


def engine_for(store: SqlStore, clock: FakeClock) -> QuizEngine:
    bank = SimpleBank([make_question(f"q{i}", answer="A") for i in range(8)])
    return QuizEngine(store, bank, clock=clock, rng=random.Random(3), tracks={TRACK.name: TRACK})


async def tick(
    engine: QuizEngine, publisher: RecordingPublisher, store: SqlStore, clock: FakeClock
):
    return await post_due(engine, publisher, store, now=clock(), claimant="test")


async def start(engine: QuizEngine, store: SqlStore, schedule: Schedule) -> TrackRun:
    await store.put_schedule(schedule)
    _, run = await engine.tracks.start(PLACE, "three", "admin")
    return run


async def test_a_track_in_tokyo_opens_a_unit_each_local_day_then_ends(store: SqlStore) -> None:
    # 09:00 in Tokyo is 00:00 UTC: the local date, not UTC's, names each day.
    clock = FakeClock(MONDAY - timedelta(hours=1))  # Sunday 23:00 UTC, Monday 08:00 in Tokyo
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await start(engine, store, Schedule(PLACE, 9, 0, "Asia/Tokyo", since=clock(), set_by="a"))

    asked = []
    for day in range(3):
        clock.now = MONDAY + timedelta(days=day, minutes=1)
        await tick(engine, publisher, store, clock)
        card = publisher.cards[-1]
        asked.append(card.question.id)
        assert card.round.slot == f"2026-03-0{2 + day}"
        text = publisher.texts[-1][1]
        assert f"unit {day + 1} of 3" in text
        # ada answers every day's round right; bob answers only the first day, wrongly.
        await engine.answer("slack", "T1", card.round_id, "ada", "A")
        if day == 0:
            await engine.answer("slack", "T1", card.round_id, "bob", "B")
    assert asked == ["q1", "q3", "q4"]
    assert "Links come first." in publisher.texts[0][1]
    assert "This unit has 2 questions" in publisher.texts[0][1]
    assert "Last one." in publisher.texts[2][1]

    # ada has not answered q2 (unit 1's second question): unit 1 is not done for her yet.
    progress = await engine.tracks.progress(PLACE, "ada")
    assert progress is not None
    assert progress.mine == frozenset({1, 2}) and progress.next_question == "q2"
    outcome = await engine.answer_practice("slack", "T1", "ada", "q2", "A")
    assert outcome.correct
    progress = await engine.tracks.progress(PLACE, "ada")
    assert progress is not None and progress.mine == frozenset({0, 1, 2})
    assert progress.done[0] == frozenset({"ada"})
    bob = await engine.tracks.progress(PLACE, "bob")
    # bob missed q1 on Monday: by Wednesday its card is due again, so it is his next question.
    assert bob is not None and bob.mine == frozenset() and bob.next_question == "q1"

    # Day four: the summary, then an ordinary daily question.
    clock.now = MONDAY + timedelta(days=3, minutes=1)
    await tick(engine, publisher, store, clock)
    summary = publisher.texts[-1][1]
    assert "is complete: 3 units." in summary and "<@ada>" in summary
    assert "Units done, one count per unit: 1, 1, 1." in summary
    assert len(publisher.cards) == 4
    run = await store.track_run(PLACE)
    assert run is not None and run.finished and run.opened == 3
    # Nothing more from the track after its end.
    clock.now = MONDAY + timedelta(days=4, minutes=1)
    await tick(engine, publisher, store, clock)
    assert len(publisher.texts) == 4 and len(publisher.cards) == 5


async def test_weekdays_in_los_angeles_skip_the_weekend(store: SqlStore) -> None:
    friday = MONDAY + timedelta(days=4)
    clock = FakeClock(friday + timedelta(hours=16))  # Friday 08:00 in Los Angeles (UTC-8)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    schedule = Schedule(PLACE, 9, 0, "America/Los_Angeles", Days.WEEKDAYS, since=clock())
    await start(engine, store, schedule)
    opened = []
    for hours in (17, 17 + 24, 17 + 48, 17 + 72):  # Friday to Monday, 09:00 local
        clock.now = friday + timedelta(hours=hours, minutes=1)
        await tick(engine, publisher, store, clock)
        run = await store.track_run(PLACE)
        assert run is not None
        opened.append(run.opened)
    assert opened == [1, 1, 1, 2]  # Saturday and Sunday open nothing
    assert [c.round.slot for c in publisher.cards] == ["2026-03-06", "2026-03-09"]


async def test_a_slot_tried_again_opens_the_same_unit(store: SqlStore) -> None:
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    await start(engine, store, Schedule(PLACE, 9, 0, "UTC", since=clock()))

    async def nothing_asked() -> dict[str, int]:
        return {}

    first = await engine.tracks.day(PLACE, "2026-03-02", nothing_asked)
    again = await engine.tracks.day(PLACE, "2026-03-02", nothing_asked)
    assert first is not None and again is not None
    assert (first.unit, again.unit) == (0, 0)
    run = await store.track_run(PLACE)
    assert run is not None and run.opened == 1
    nxt = await engine.tracks.day(PLACE, "2026-03-03", nothing_asked)
    assert nxt is not None and nxt.unit == 1


async def test_one_running_track_a_channel_whatever_the_race(store: SqlStore) -> None:
    run = TrackRun(PLACE, "three", MONDAY, "admin")
    results = await asyncio.gather(*(store.start_track(run) for _ in range(4)))
    assert sum(r is not None for r in results) == 1
    running = await store.track_run(PLACE)
    assert running is not None
    # Another channel is free to run one.
    assert await store.start_track(TrackRun(Place("slack", "T1", "C2"), "three", MONDAY, "a"))
    # Units are recorded once per person, whatever repeats.
    done = [UnitDone("ada", 0, MONDAY), UnitDone("ada", 0, MONDAY + timedelta(hours=1))]
    await store.record_units(running.id, done)
    await store.record_units(running.id, done[:1])
    assert await store.units_done(running.id) == [UnitDone("ada", 0, MONDAY)]
    # A stopped track frees the channel and keeps its history.
    stopped = await store.stop_track(PLACE, MONDAY + timedelta(days=1))
    assert stopped is not None and stopped.finished
    assert await store.stop_track(PLACE, MONDAY) is None
    again = await store.start_track(run)
    assert again is not None and again.id != running.id
    assert await store.units_done(again.id) == []


async def test_my_tracks_are_those_i_answered_in(store: SqlStore) -> None:
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    await start(engine, store, Schedule(PLACE, 9, 0, "UTC", since=clock()))
    clock.now = MONDAY + timedelta(hours=9, minutes=1)
    await tick(engine, publisher, store, clock)
    card = publisher.cards[-1]
    await engine.answer("slack", "T1", card.round_id, "ada", "A")
    mine = await engine.tracks.mine("slack", "T1", "ada")
    assert [(m.track.name, m.done, m.opened) for m in mine] == [("three", 0, 1)]
    assert await engine.tracks.mine("slack", "T1", "bob") == []
    await engine.answer_practice("slack", "T1", "ada", "q2", "A")
    mine = await engine.tracks.mine("slack", "T1", "ada")
    assert [(m.done, m.opened) for m in mine] == [(1, 1)]


async def test_a_run_whose_track_file_is_gone_posts_ordinary_days(store: SqlStore) -> None:
    clock = FakeClock(MONDAY + timedelta(hours=9, minutes=1))
    await start(engine_for(store, clock), store, Schedule(PLACE, 9, 0, "UTC", since=MONDAY))
    bank = SimpleBank([make_question(f"q{i}", answer="A") for i in range(8)])
    without = QuizEngine(store, bank, clock=clock, rng=random.Random(3), tracks={})
    assert await without.tracks.progress(PLACE, "ada") is None
    publisher = RecordingPublisher()
    await tick(without, publisher, store, clock)
    assert len(publisher.cards) == 1 and publisher.texts == []
    run = await store.track_run(PLACE)
    assert run is not None and run.opened == 0 and not run.finished
    assert await without.tracks.stop(PLACE) is not None
