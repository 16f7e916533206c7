"""Review through the engine: every answer reviews the person's FSRS card (bot.engine.learning)."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import Period, Place, QuizEngine
from bot.engine.learning import CardKey, Grade, Memory, Review, Study
from bot.errors import NotFound, UserError
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T1", "C1")
KEY = CardKey("slack", "T1", "U1", "q1")


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


async def test_right_answers_in_rounds_come_back_later(engine: QuizEngine, clock: FakeClock):
    card = await engine.start_round(PLACE)
    await engine.answer("slack", "T1", card.round_id, "U1", card.question.answer)
    # A right answer is reviewed too: it returns, later than a miss would.
    queue = await engine.review_queue("slack", "T1", "U1")
    assert queue.due == 0 and queue.pending == 1
    assert queue.next_due is not None and queue.next_due > T0 + timedelta(days=1)
    clock.advance(days=30)
    question = await engine.next_review("slack", "T1", "U1")
    assert question is not None and question.id == card.question.id


async def test_review_answers_follow_fsrs(store: SqlStore, engine: QuizEngine, clock: FakeClock):
    memory = Memory()
    await miss(engine)
    expected = Study(KEY, Review(at=T0, correct=False, rating=Grade.AGAIN), memory).apply(None)
    clock.advance(days=1)
    wrong = await engine.answer_review("slack", "T1", "U1", "q1", "b")
    assert (wrong.correct, wrong.counted) == (False, True)
    assert (wrong.choice.key, wrong.answer.key, wrong.short) == ("B", "A", "Short why for q1.")
    expected = Study(KEY, Review(at=clock(), correct=False, rating=Grade.AGAIN), memory).apply(
        expected
    )
    assert wrong.due_at == expected.due_at
    assert await engine.next_review("slack", "T1", "U1") is None
    clock.advance(days=(wrong.due_at - clock()).days)
    right = await engine.answer_review("slack", "T1", "U1", "q1", "A")
    expected = Study(KEY, Review(at=clock(), correct=True, rating=Grade.GOOD), memory).apply(
        expected
    )
    assert (right.correct, right.counted, right.due_at) == (True, True, expected.due_at)
    stored = await store.card(KEY)
    assert stored is not None
    assert (stored.stability, stored.difficulty, stored.reps, stored.lapses) == (
        expected.stability,
        expected.difficulty,
        3,
        1,
    )


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
    first = next(o for o in outcomes if o.counted)
    assert all(o.due_at == first.due_at for o in outcomes)
    later = await engine.answer_review("slack", "T1", "U1", "q1", "A")
    assert not later.counted and later.due_at == first.due_at  # not due yet: nothing changed


async def test_a_round_answer_reviews_a_card_already_held(
    store: SqlStore, engine: QuizEngine, clock: FakeClock
):
    await miss(engine)
    clock.advance(days=1)
    await engine.answer_review("slack", "T1", "U1", "q1", "A")
    before = await store.card(KEY)
    await miss(engine)  # wrong again in a channel round: the stored card is reviewed
    after = await store.card(KEY)
    assert before is not None and after is not None
    assert (after.reps, after.lapses, after.version) == (3, 1, before.version + 1)
    assert after.due_at == clock() + timedelta(days=1)


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


async def test_a_workspace_sets_its_desired_retention(
    store: SqlStore, engine: QuizEngine, clock: FakeClock
):
    default = await engine.memory_for("slack", "T1")
    assert default.retention == 0.9
    await engine.set_retention("slack", "T1", 0.8)
    await engine.answer_practice("slack", "T1", "U1", "q1", "A")
    relaxed = await store.card(KEY)
    assert relaxed is not None
    want = Study(KEY, Review(at=clock(), correct=True, rating=Grade.GOOD), Memory(0.8)).apply(None)
    assert relaxed.due_at == want.due_at
    # Another workspace keeps the default; another replica sees the change within a minute.
    assert (await engine.memory_for("slack", "T2")).retention == 0.9
    replica = QuizEngine(store, engine.bank, clock=clock)
    assert (await replica.memory_for("slack", "T1")).retention == 0.8
    await engine.set_retention("slack", "T1", None)
    assert (await replica.memory_for("slack", "T1")).retention == 0.8  # cached for a minute
    clock.advance(minutes=1)
    assert (await replica.memory_for("slack", "T1")).retention == 0.9


@pytest.mark.parametrize("retention", [0.5, 0.99, 1.5])
async def test_a_retention_out_of_range_is_refused_and_changes_nothing(
    store: SqlStore, engine: QuizEngine, retention: float
):
    with pytest.raises(UserError, match="not a desired retention"):
        await engine.set_retention("slack", "T1", retention)
    assert (await store.workspace_settings("slack", "T1")).retention is None
