"""Spaced review of missed questions: the pure rules, table-driven, and the engine's calls."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import Period, Place, QuizEngine
from bot.engine.review import (
    ReviewItem,
    after_review,
    after_round_miss,
    interval,
    is_due,
)
from bot.errors import NotFound, UserError
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T1", "C1")
KEY = dict(platform="slack", workspace="T1", user="U1", question_id="q1")


def first_miss(now: datetime = T0) -> ReviewItem:
    return after_round_miss(None, now=now, **KEY)


@pytest.mark.parametrize(
    ("answers", "due_in_days", "done"),
    [
        ("", 1, False),  # the miss in a round: due after a day
        ("x", 3, False),  # missed again in review: 3 days
        ("xx", 7, False),
        ("xxx", 21, False),
        ("xxxx", 21, False),  # the longest interval repeats
        ("xxxxxxx", 21, False),
        ("o", 1, False),  # right once: the same interval again
        ("oo", None, True),  # right twice in a row: done
        ("ox", 3, False),  # the run is broken: one interval longer
        ("xo", 3, False),
        ("xoo", None, True),
        ("xxo", 7, False),
        ("xxxo", 21, False),
        ("oxoo", None, True),
        ("oxo", 3, False),
        ("xoxo", 7, False),
    ],
)
def test_review_intervals(answers: str, due_in_days: int | None, done: bool):
    item = first_miss()
    now = T0
    for mark in answers:
        now = item.due_at  # answered exactly when due
        item = after_review(item, correct=mark == "o", now=now)
    assert item.done is done
    if due_in_days is not None:
        assert item.due_at - now == timedelta(days=due_in_days)


@pytest.mark.parametrize(("step", "days"), [(0, 1), (1, 3), (2, 7), (3, 21), (4, 21), (-1, 1)])
def test_interval(step: int, days: int):
    assert interval(step) == timedelta(days=days)


def test_a_round_miss_of_a_waiting_question_brings_it_back_within_a_day():
    item = after_review(after_review(first_miss(), correct=False, now=T0), correct=True, now=T0)
    assert (item.step, item.right_in_row, item.due_at - T0) == (1, 1, timedelta(days=3))
    again = after_round_miss(item, now=T0 + timedelta(hours=1), **KEY)
    assert (again.step, again.right_in_row) == (1, 0)
    assert again.due_at == T0 + timedelta(days=1, hours=1)
    soon = after_round_miss(
        ReviewItem(**KEY, step=2, right_in_row=0, due_at=T0 + timedelta(hours=2)), now=T0, **KEY
    )
    assert soon.due_at == T0 + timedelta(hours=2)  # never pushed later


def test_a_round_miss_of_a_finished_question_starts_over():
    done = ReviewItem(**KEY, step=3, right_in_row=2, due_at=T0, done=True, version=5)
    again = after_round_miss(done, now=T0, **KEY)
    assert (again.step, again.right_in_row, again.done, again.version) == (0, 0, False, 5)
    assert again.due_at == T0 + timedelta(days=1)


@pytest.mark.parametrize(
    ("offset", "done", "due"),
    [
        (timedelta(0), False, True),
        (timedelta(seconds=-1), False, False),
        (timedelta(0), True, False),
    ],
)
def test_is_due(offset: timedelta, done: bool, due: bool):
    item = ReviewItem(**KEY, step=0, right_in_row=0, due_at=T0, done=done)
    assert is_due(item, T0 + offset) is due


# ------------------------------------------------------------------ through the engine


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def engine(store: SqlStore, clock: FakeClock) -> QuizEngine:
    bank = SimpleBank([make_question("q1", answer="A"), make_question("q2", answer="B")])
    return QuizEngine(store, bank, clock=clock, rng=random.Random(0))


async def miss(engine: QuizEngine, user: str = "U1", qid: str = "q1") -> None:
    card = await engine.start_round(PLACE)
    while card.question.id != qid:
        await engine.close(card.round_id)
        card = await engine.start_round(PLACE)
    wrong = next(k for k in card.question.keys if k != card.question.answer)
    await engine.answer("slack", "T1", card.round_id, user, wrong)
    await engine.close(card.round_id)


async def test_a_wrong_answer_comes_back_a_day_later(engine: QuizEngine, clock: FakeClock):
    await miss(engine)
    assert await engine.next_review("slack", "T1", "U1") is None
    queue = await engine.review_queue("slack", "T1", "U1")
    assert (queue.due, queue.pending, queue.next_due) == (0, 1, T0 + timedelta(days=1))
    clock.advance(days=1)
    question = await engine.next_review("slack", "T1", "U1")
    assert question is not None and question.id == "q1"
    # Other users and other workspaces see nothing.
    assert await engine.next_review("slack", "T1", "U2") is None
    assert await engine.next_review("slack", "T2", "U1") is None
    assert await engine.next_review("discord", "T1", "U1") is None


async def test_right_answers_in_rounds_are_not_reviewed(engine: QuizEngine, clock: FakeClock):
    card = await engine.start_round(PLACE)
    await engine.answer("slack", "T1", card.round_id, "U1", card.question.answer)
    clock.advance(days=30)
    assert await engine.next_review("slack", "T1", "U1") is None
    assert (await engine.review_queue("slack", "T1", "U1")).pending == 0


async def test_review_answers_space_out_and_finish(engine: QuizEngine, clock: FakeClock):
    await miss(engine)
    clock.advance(days=1)
    wrong = await engine.answer_review("slack", "T1", "U1", "q1", "b")
    assert (wrong.correct, wrong.done, wrong.counted) == (False, False, True)
    assert (wrong.choice.key, wrong.answer.key, wrong.short) == ("B", "A", "Short why for q1.")
    assert wrong.due_at == clock() + timedelta(days=3)
    assert await engine.next_review("slack", "T1", "U1") is None
    clock.advance(days=3)
    right = await engine.answer_review("slack", "T1", "U1", "q1", "A")
    assert (right.correct, right.done, right.due_at) == (True, False, clock() + timedelta(days=3))
    clock.advance(days=3)
    last = await engine.answer_review("slack", "T1", "U1", "q1", "A")
    assert (last.correct, last.done, last.due_at) == (True, True, None)
    clock.advance(days=100)
    assert await engine.next_review("slack", "T1", "U1") is None
    assert (await engine.review_queue("slack", "T1", "U1")).pending == 0


async def test_review_never_changes_scores(engine: QuizEngine, clock: FakeClock):
    await miss(engine)
    before_board = await engine.leaderboard("slack", "T1", Period.ALL, caller="U1")
    before_stats = await engine.stats(PLACE, "U1")
    clock.advance(days=1)
    await engine.answer_review("slack", "T1", "U1", "q1", "A")
    assert await engine.leaderboard("slack", "T1", Period.ALL, caller="U1") == before_board
    assert await engine.stats(PLACE, "U1") == before_stats


async def test_a_second_click_counts_once(engine: QuizEngine, clock: FakeClock):
    await miss(engine)
    clock.advance(days=1)
    outcomes = await asyncio.gather(
        *(engine.answer_review("slack", "T1", "U1", "q1", "A") for _ in range(5))
    )
    assert sum(o.counted for o in outcomes) == 1
    assert all(o.due_at == clock() + timedelta(days=1) and not o.done for o in outcomes)
    later = await engine.answer_review("slack", "T1", "U1", "q1", "A")
    assert not later.counted and not later.done  # not due yet: nothing changed


async def test_missing_again_in_a_round_resets_the_run(engine: QuizEngine, clock: FakeClock):
    await miss(engine)
    clock.advance(days=1)
    await engine.answer_review("slack", "T1", "U1", "q1", "A")  # one right, due in a day
    await miss(engine)  # wrong again in a channel round
    clock.advance(days=1)
    await engine.answer_review("slack", "T1", "U1", "q1", "A")
    assert (await engine.review_queue("slack", "T1", "U1")).pending == 1  # one right, not two


@pytest.mark.parametrize(
    ("question_id", "key", "error", "message"),
    [
        ("q2", "B", NotFound, "not in your review list"),
        ("gone", "A", NotFound, "no longer in the bank"),
        ("q1", "Z", UserError, "is not a choice"),
    ],
)
async def test_bad_review_answers(
    engine: QuizEngine, clock: FakeClock, question_id, key, error, message
):
    await miss(engine)
    clock.advance(days=1)
    with pytest.raises(error, match=message):
        await engine.answer_review("slack", "T1", "U1", question_id, key)
    assert (await engine.review_queue("slack", "T1", "U1")).due == 1


async def test_questions_removed_from_the_bank_are_not_asked(
    store: SqlStore, engine: QuizEngine, clock: FakeClock
):
    await miss(engine, qid="q2")
    clock.advance(days=1)
    smaller = QuizEngine(store, SimpleBank([make_question("q1")]), clock=clock)
    assert await smaller.next_review("slack", "T1", "U1") is None
    assert (await smaller.review_queue("slack", "T1", "U1")).pending == 0
