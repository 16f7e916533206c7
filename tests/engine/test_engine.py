"""The engine's rules, table-driven, on a real SQLite store with a fake clock."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import bot.engine.engine as engine_module
from bot.engine import AnswerStatus, ChannelSettings, Period, Place, QuizEngine, streaks
from bot.engine.engine import period_start, pick_question, rank_rows
from bot.engine.model import Difficulty, ScoreRow
from bot.errors import NotFound, UserError
from bot.storage import SqlStore, open_store
from tests.conftest import FakeClock, SimpleBank, make_question

PLACE = Place("slack", "T1", "C1")


@pytest.fixture
async def sqlite_store(sqlite_url: str) -> SqlStore:
    s = await open_store(sqlite_url)
    yield s  # type: ignore[misc]
    await s.close()


def build(store: SqlStore, clock: FakeClock, questions: list | None = None) -> QuizEngine:
    bank = SimpleBank(
        questions
        or [
            make_question("q-easy", answer="A", difficulty=Difficulty.EASY, tags=("net",)),
            make_question("q-med", answer="B", tags=("net", "rdma")),
            make_question("q-hard", answer="C", difficulty=Difficulty.HARD, tags=("memory",)),
        ]
    )
    return QuizEngine(store, bank, clock=clock, rng=random.Random(7))


async def test_start_round_returns_a_persisted_card(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock)
    card = await engine.start_round(PLACE)
    assert card.round.place == PLACE
    assert card.round.opened_at == clock.now
    assert card.round.closes_at == clock.now + timedelta(minutes=10)
    stored = await engine.get_round(card.round_id)
    assert stored.question_id == card.question.id
    assert not stored.is_closed


async def test_selection_never_repeats_until_the_bank_is_used_up(
    sqlite_store: SqlStore, clock: FakeClock
):
    engine = build(sqlite_store, clock)
    asked = []
    for _ in range(6):
        card = await engine.start_round(PLACE)
        asked.append(card.question.id)
        await engine.close(card.round_id)
    assert len(set(asked[:3])) == 3
    assert len(set(asked[3:])) == 3
    assert Counter(asked) == {"q-easy": 2, "q-med": 2, "q-hard": 2}


async def test_selection_is_per_channel(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock)
    here = []
    for _ in range(2):
        card = await engine.start_round(PLACE)
        here.append(card.question.id)
        await engine.close(card.round_id)
    # Another channel has asked nothing yet: it starts at the bank's first question, although
    # this channel has asked it, and it then goes through the bank on its own count.
    other = Place("slack", "T1", "C2")
    there = []
    for _ in range(3):
        card = await engine.start_round(other)
        there.append(card.question.id)
        await engine.close(card.round_id)
    assert here[0] == there[0] == "q-easy"
    assert sorted(there) == ["q-easy", "q-hard", "q-med"]
    # And this channel's next question is the one it has not had, whatever the other asked.
    card = await engine.start_round(PLACE)
    assert card.question.id not in here


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("memory", {"q-hard"}), ("rdma", {"q-med"}), ("net", {"q-easy", "q-med"})],
)
async def test_tag_filter(sqlite_store: SqlStore, clock: FakeClock, tag: str, expected: set[str]):
    engine = build(sqlite_store, clock)
    seen = set()
    for _ in range(len(expected)):
        card = await engine.start_round(PLACE, tag=tag)
        seen.add(card.question.id)
        await engine.close(card.round_id)
    assert seen == expected


async def test_unknown_tag_is_a_user_error_and_changes_nothing(
    sqlite_store: SqlStore, clock: FakeClock
):
    engine = build(sqlite_store, clock)
    with pytest.raises(UserError, match="No question has the tag"):
        await engine.start_round(PLACE, tag="nope")
    assert await sqlite_store.open_round(PLACE) is None


async def test_one_open_round_per_channel(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock)
    await engine.start_round(PLACE)
    with pytest.raises(UserError, match="already open"):
        await engine.start_round(PLACE)


async def test_concurrent_starts_open_exactly_one_round(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock)
    results = await asyncio.gather(
        *(engine.start_round(PLACE) for _ in range(10)), return_exceptions=True
    )
    cards = [r for r in results if not isinstance(r, BaseException)]
    assert len(cards) == 1
    assert all(isinstance(r, UserError) for r in results if isinstance(r, BaseException))


@pytest.mark.parametrize(
    ("choice", "status", "correct", "points"),
    [
        ("B", AnswerStatus.ACCEPTED, True, 2),
        ("b", AnswerStatus.ACCEPTED, True, 2),
        ("A", AnswerStatus.ACCEPTED, False, 0),
    ],
)
async def test_answer_outcome(
    sqlite_store: SqlStore,
    clock: FakeClock,
    choice: str,
    status: AnswerStatus,
    correct: bool,
    points: int,
):
    engine = build(sqlite_store, clock, [make_question("q", answer="B")])
    card = await engine.start_round(PLACE)
    clock.advance(seconds=3)
    outcome = await engine.answer("slack", "T1", card.round_id, "U1", choice)
    assert outcome.status is status
    assert outcome.correct is correct
    assert outcome.points == points
    assert outcome.answer.key == "B"
    assert outcome.choice.key == choice.upper()
    assert outcome.short == "Short why for q."
    [stored] = await sqlite_store.round_answers(card.round_id)
    assert stored.elapsed_ms == 3000


async def test_second_answer_reports_the_first(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock, [make_question("q", answer="B")])
    card = await engine.start_round(PLACE)
    await engine.answer("slack", "T1", card.round_id, "U1", "A")
    again = await engine.answer("slack", "T1", card.round_id, "U1", "B")
    assert again.status is AnswerStatus.ALREADY
    assert again.choice.key == "A"
    assert again.correct is False
    [stored] = await sqlite_store.round_answers(card.round_id)
    assert stored.choice == "A"


async def test_channel_may_allow_changes_until_close(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock, [make_question("q", answer="B")])
    await engine.set_channel_settings(PLACE, ChannelSettings(allow_change=True, round_minutes=5))
    card = await engine.start_round(PLACE)
    assert card.round.closes_at == clock.now + timedelta(minutes=5)
    await engine.answer("slack", "T1", card.round_id, "U1", "A")
    changed = await engine.answer("slack", "T1", card.round_id, "U1", "B")
    assert changed.status is AnswerStatus.CHANGED
    assert changed.previous is not None and changed.previous.key == "A"
    [stored] = await sqlite_store.round_answers(card.round_id)
    assert (stored.choice, stored.correct, stored.points) == ("B", True, 2)
    await engine.close(card.round_id)
    late = await engine.answer("slack", "T1", card.round_id, "U1", "A")
    assert late.status is AnswerStatus.CLOSED


async def test_answers_after_close_or_after_time_are_closed(
    sqlite_store: SqlStore, clock: FakeClock
):
    engine = build(sqlite_store, clock)
    card = await engine.start_round(PLACE)
    clock.advance(minutes=10)
    timed_out = await engine.answer("slack", "T1", card.round_id, "U1", "A")
    assert timed_out.status is AnswerStatus.CLOSED
    await engine.close(card.round_id)
    closed = await engine.answer("slack", "T1", card.round_id, "U2", "A")
    assert closed.status is AnswerStatus.CLOSED
    assert await sqlite_store.round_answers(card.round_id) == []


@pytest.mark.parametrize(
    ("platform", "workspace", "round_id", "choice", "error"),
    [
        ("slack", "T2", None, "A", NotFound),
        ("discord", "T1", None, "A", NotFound),
        ("slack", "T1", 999, "A", NotFound),
        ("slack", "T1", None, "F", UserError),
        ("slack", "T1", None, "", UserError),
    ],
)
async def test_bad_answers_change_nothing(
    sqlite_store: SqlStore, clock: FakeClock, platform, workspace, round_id, choice, error
):
    engine = build(sqlite_store, clock)
    card = await engine.start_round(PLACE)
    with pytest.raises(error):
        await engine.answer(platform, workspace, round_id or card.round_id, "U1", choice)
    assert await sqlite_store.round_answers(card.round_id) == []


async def test_close_reveals_distribution_share_and_fastest(
    sqlite_store: SqlStore, clock: FakeClock
):
    engine = build(
        sqlite_store, clock, [make_question("q", answer="C", difficulty=Difficulty.HARD)]
    )
    card = await engine.start_round(PLACE)
    for user, seconds, choice in [
        ("U1", 9, "C"),
        ("U2", 2, "A"),
        ("U3", 4, "C"),
        ("U4", 6, "C"),
        ("U5", 5, "C"),
        ("U6", 1, "B"),
    ]:
        clock.now = card.round.opened_at + timedelta(seconds=seconds)
        await engine.answer("slack", "T1", card.round_id, user, choice)
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    assert reveal.answered == 6
    assert reveal.correct == 4
    assert reveal.percent_correct == pytest.approx(66.666, abs=0.01)
    assert [(t.choice.key, t.count, t.correct) for t in reveal.tallies] == [
        ("A", 1, False),
        ("B", 1, False),
        ("C", 4, True),
        ("D", 0, False),
    ]
    assert [(a.user, a.seconds) for a in reveal.fastest] == [("U3", 4), ("U5", 5), ("U4", 6)]
    assert reveal.round.is_closed


async def test_close_happens_once_even_when_raced(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock)
    card = await engine.start_round(PLACE)
    results = await asyncio.gather(*(engine.close(card.round_id) for _ in range(20)))
    assert sum(r is not None for r in results) == 1
    assert await engine.close(card.round_id) is None


async def test_close_in_channel_without_a_round(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock)
    with pytest.raises(UserError, match="no open question"):
        await engine.close_in_channel(PLACE)


async def test_close_due_takes_only_due_rounds_of_the_platform(
    sqlite_store: SqlStore, clock: FakeClock
):
    engine = build(sqlite_store, clock)
    early = await engine.start_round(PLACE, duration=timedelta(minutes=1))
    late = await engine.start_round(Place("slack", "T1", "C2"), duration=timedelta(minutes=30))
    other = await engine.start_round(Place("discord", "G1", "C1"), duration=timedelta(minutes=1))
    clock.advance(minutes=2)
    reveals = await engine.close_due("slack")
    assert [r.round.id for r in reveals] == [early.round_id]
    assert not (await engine.get_round(late.round_id)).is_closed
    assert not (await engine.get_round(other.round_id)).is_closed
    assert await engine.close_due("slack") == []


async def test_200_concurrent_answers_leave_one_row_per_user(
    sqlite_store: SqlStore, clock: FakeClock
):
    engine = build(sqlite_store, clock, [make_question("q", answer="A")])
    card = await engine.start_round(PLACE)
    users = [f"U{i}" for i in range(200)]
    # Every user clicks twice, concurrently, with different choices.
    calls = [engine.answer("slack", "T1", card.round_id, u, "A") for u in users] + [
        engine.answer("slack", "T1", card.round_id, u, "B") for u in users
    ]
    outcomes = await asyncio.gather(*calls)
    statuses = Counter(o.status for o in outcomes)
    assert statuses == {AnswerStatus.ACCEPTED: 200, AnswerStatus.ALREADY: 200}
    rows = await sqlite_store.round_answers(card.round_id)
    assert sorted(r.user for r in rows) == sorted(users)
    assert await engine.answered_count(card.round_id) == 200


async def test_leaderboard_periods_and_tie_break(sqlite_store: SqlStore, clock: FakeClock):
    questions = [make_question(f"q{i}", answer="A") for i in range(3)]
    engine = build(sqlite_store, clock, questions)
    clock.now = datetime(2026, 2, 20, 12, tzinfo=UTC)  # last month
    card = await engine.start_round(PLACE)
    clock.advance(seconds=1)
    await engine.answer("slack", "T1", card.round_id, "old", "A")
    await engine.close(card.round_id)
    clock.now = datetime(2026, 3, 2, 12, tzinfo=UTC)  # this week (Monday)
    card = await engine.start_round(PLACE)
    clock.advance(seconds=5)
    await engine.answer("slack", "T1", card.round_id, "slow", "A")
    clock.now = card.round.opened_at + timedelta(seconds=2)
    await engine.answer("slack", "T1", card.round_id, "fast", "A")
    await engine.answer("slack", "T1", card.round_id, "wrong", "B")
    await engine.close(card.round_id)
    other = Place("slack", "T2", "C1")
    card = await engine.start_round(other)
    await engine.answer("slack", "T2", card.round_id, "elsewhere", "A")

    week = await engine.leaderboard("slack", "T1", Period.WEEK, caller="wrong")
    assert [(e.rank, e.user, e.points) for e in week.entries] == [
        (1, "fast", 2),
        (2, "slow", 2),
        (3, "wrong", 0),
    ]
    assert week.caller is not None and week.caller.rank == 3
    everything = await engine.leaderboard("slack", "T1", Period.ALL, caller="nobody")
    assert {e.user for e in everything.entries} == {"fast", "slow", "wrong", "old"}
    assert everything.caller is None


async def test_leaderboard_shows_top_ten_and_the_caller(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock, [make_question("q", answer="A")])
    card = await engine.start_round(PLACE)
    for i in range(15):
        clock.advance(seconds=1)
        await engine.answer("slack", "T1", card.round_id, f"U{i:02d}", "A")
    board = await engine.leaderboard("slack", "T1", Period.ALL, caller="U14")
    assert len(board.entries) == 10
    assert board.entries[0].user == "U00"
    assert board.caller is not None and (board.caller.rank, board.caller.user) == (15, "U14")


async def test_stats_and_streaks_over_scheduled_rounds(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock, [make_question(f"q{i}", answer="A") for i in range(3)])
    plan = ["A", "A", None, "A", "A", "A", "B"]  # None: did not answer
    for choice in plan:
        card = await engine.start_round(PLACE, scheduled=True)
        if choice:
            outcome = await engine.answer("slack", "T1", card.round_id, "U1", choice)
        await engine.close(card.round_id)
        clock.advance(days=1)
    assert outcome.streak == 0
    stats = await engine.stats(PLACE, "U1")
    assert (stats.answered, stats.correct, stats.points) == (6, 5, 10)
    assert (stats.current_streak, stats.best_streak) == (0, 3)


@pytest.mark.parametrize(
    "windows", [(1,), (1, 2), (2, 3), (3, 6), (8, 64), engine_module.STREAK_WINDOWS]
)
async def test_a_right_answer_reports_the_streak_over_the_whole_history(
    sqlite_store: SqlStore,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    windows: tuple[int, ...],
):
    # The answer path reads only the newest rounds unless the run is longer than them.
    monkeypatch.setattr(engine_module, "STREAK_WINDOWS", windows)
    engine = build(sqlite_store, clock, [make_question(f"q{i}", answer="A") for i in range(3)])
    plan = ["A", "B", "A", None, "A", "A", "A", "A", "A"]
    reported = []
    for choice in plan:
        card = await engine.start_round(PLACE, scheduled=True)
        if choice:
            outcome = await engine.answer("slack", "T1", card.round_id, "U1", choice)
            reported.append(outcome.streak)
        await engine.close(card.round_id)
        clock.advance(days=1)
    assert reported == [1, 0, 1, 1, 2, 3, 4, 5]


async def test_the_streak_read_follows_the_run_not_the_history(
    sqlite_store: SqlStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    engine = build(sqlite_store, clock, [make_question(f"q{i}", answer="A") for i in range(3)])
    # 40 days: a miss on day 30, then a run of 10 right answers.
    plan = ["A"] * 29 + ["B"] + ["A"] * 10
    asked: list[int | None] = []
    read = sqlite_store.scheduled_results

    async def spy(place: Place, user: str, *, newest: int | None = None) -> Any:
        asked.append(newest)
        return await read(place, user, newest=newest)

    for day, choice in enumerate(plan):
        card = await engine.start_round(PLACE, scheduled=True)
        if day == len(plan) - 1:
            monkeypatch.setattr(sqlite_store, "scheduled_results", spy)
        outcome = await engine.answer("slack", "T1", card.round_id, "U1", choice)
        await engine.close(card.round_id)
        clock.advance(days=1)
    assert outcome.streak == 10
    # The run of 10 fills the 8 newest rounds, not the 16 newest: 24 rows read, not 40.
    assert asked == [8, 16]


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ([], (0, 0)),
        ([(True, True), (True, True)], (2, 2)),
        ([(True, True), (True, None), (True, True)], (1, 1)),
        ([(True, True), (True, False), (True, True), (True, True)], (2, 2)),
        ([(True, True), (False, None)], (1, 1)),  # open round not answered yet: no break
        ([(True, True), (True, True), (True, True), (True, None)], (0, 3)),
    ],
)
def test_streaks(results, expected):
    assert streaks(results) == expected


@pytest.mark.parametrize(
    ("period", "now", "start"),
    [
        (Period.WEEK, datetime(2026, 3, 4, 15, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC)),
        (Period.WEEK, datetime(2026, 3, 2, 0, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC)),
        (Period.MONTH, datetime(2026, 3, 31, 23, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)),
        (Period.ALL, datetime(2026, 3, 31, tzinfo=UTC), None),
    ],
)
def test_period_start(period, now, start):
    assert period_start(period, now) == start


def test_rank_rows_breaks_ties_by_total_time():
    rows = [ScoreRow("b", 5, 3, 2, 900), ScoreRow("a", 5, 3, 2, 1000), ScoreRow("c", 7, 4, 3, 5)]
    assert [e.user for e in rank_rows(rows)] == ["c", "b", "a"]


def test_pick_question_prefers_the_least_asked():
    qs = [make_question("a"), make_question("b"), make_question("c")]
    rng = random.Random(1)
    assert {pick_question(qs, {"a": 2, "b": 1, "c": 2}, rng).id for _ in range(20)} == {"b"}


async def test_clock_must_be_aware(sqlite_store: SqlStore):
    engine = QuizEngine(
        sqlite_store, SimpleBank([make_question("q")]), clock=lambda: datetime(2026, 1, 1)
    )
    with pytest.raises(ValueError, match="timezone-aware"):
        await engine.start_round(PLACE)


async def test_default_round_length_comes_from_the_engine(sqlite_store: SqlStore, clock: FakeClock):
    engine = QuizEngine(
        sqlite_store, SimpleBank([make_question("q")]), clock=clock, default_minutes=3
    )
    assert (await engine.channel_settings(PLACE)).round_minutes == 3
    card = await engine.start_round(PLACE)
    assert card.round.closes_at == clock.now + timedelta(minutes=3)
    await engine.set_channel_settings(PLACE, ChannelSettings(allow_change=True))
    assert await engine.channel_settings(PLACE) == ChannelSettings(True, 3)


async def test_withdrawn_round_is_forgotten(sqlite_store: SqlStore, clock: FakeClock):
    engine = build(sqlite_store, clock, [make_question("a"), make_question("b")])
    card = await engine.start_round(PLACE, scheduled=True)
    await engine.withdraw(card.round_id)
    with pytest.raises(NotFound):
        await engine.get_round(card.round_id)
    assert await sqlite_store.question_counts(PLACE) == {}
    assert await sqlite_store.scheduled_results(PLACE, "U1") == []
    # A round someone answered is closed instead, and keeps the answer.
    card = await engine.start_round(PLACE)
    await engine.answer("slack", "T1", card.round_id, "U1", "A")
    await engine.withdraw(card.round_id)
    assert (await engine.get_round(card.round_id)).is_closed
    assert len(await sqlite_store.round_answers(card.round_id)) == 1


def test_a_channels_first_question_is_the_banks_first():
    qs = [make_question("seed"), make_question("b"), make_question("c")]
    assert pick_question(qs, {}, random.Random(3)).id == "seed"
    assert pick_question(qs, {"other-channel-only": 4}, random.Random(3)).id == "seed"
    picked = {pick_question(qs, {"seed": 1}, random.Random(i)).id for i in range(30)}
    assert picked == {"b", "c"}


def counted(store: SqlStore, method: str) -> list[int]:
    """Count the calls of one of the store's methods: the one item of the list returned."""
    calls = [0]
    inner = getattr(store, method)

    async def counting(*args: Any) -> Any:
        calls[0] += 1
        return await inner(*args)

    setattr(store, method, counting)
    return calls


async def clicks_together(engine: QuizEngine, round_id: int, key: str, n: int = 10) -> None:
    """Answer a round with ``n`` clicks at once, each accepted."""
    outcomes = await asyncio.gather(
        *(engine.answer("slack", "T1", round_id, f"U{i}", key) for i in range(n))
    )
    assert all(o.status is AnswerStatus.ACCEPTED for o in outcomes)


@pytest.mark.parametrize(
    ("method", "kept"),
    [
        ("get_round", True),  # a round's place, question and times never change
        ("workspace_settings", False),  # the retention: read again once a minute
    ],
)
async def test_clicks_arriving_together_read_what_they_need_once(
    sqlite_store: SqlStore, clock: FakeClock, method: str, kept: bool
):
    card = await build(sqlite_store, clock).start_round(PLACE)
    cold = build(sqlite_store, clock)  # another process: nothing cached
    reads = counted(sqlite_store, method)
    await clicks_together(cold, card.round_id, card.question.answer)
    assert reads == [1]
    assert len(await sqlite_store.cards("slack", "T1", "U3")) == 1
    clock.advance(minutes=1)
    await cold.answer("slack", "T1", card.round_id, "U99", card.question.answer)
    assert reads == [1 if kept else 2]
