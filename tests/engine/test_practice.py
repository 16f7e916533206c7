"""Practice: a person's level, and the next practice question (due cards first, then new ones
near the level), through the engine and the store (SQLite always, PostgreSQL when configured)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import Period, Place, QuizEngine
from bot.engine.learning import (
    PRACTICE_TARGET,
    CardKey,
    PracticeKind,
    level,
    question_difficulty,
    success_chance,
)
from bot.engine.model import Difficulty
from bot.errors import NotFound, UserError
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
W = ("slack", "T07TEAM")


@pytest.mark.parametrize(
    ("results", "lower", "upper"),
    [
        ([], -1e-9, 1e-9),  # nothing known: the middle
        ([(True, 0.0)] * 3, 0.3, 2.0),
        ([(False, 0.0)] * 3, -2.0, -0.3),
        ([(True, 2.0)] * 20, 2.0, 6.0),  # right on hard questions: high
        ([(False, -2.0)] * 20, -6.0, -2.0),
        ([(True, 0.0), (False, 0.0)] * 10, -1e-6, 1e-6),  # half and half at difficulty 0
    ],
)
def test_level_is_a_rasch_estimate_near_zero_without_evidence(results, lower, upper):
    assert lower <= level(results) <= upper


def test_more_right_answers_never_lower_the_level():
    answers: list[tuple[bool, float]] = []
    previous = level(answers)
    for d in (-1.0, 0.0, 0.5, 1.0, 2.0):
        answers.append((True, d))
        now = level(answers)
        assert now > previous
        previous = now


@pytest.mark.parametrize(("rate", "sign"), [(0.9, -1), (0.5, 0), (0.2, 1)])
def test_difficulty_from_the_share_right(rate: float, sign: int):
    d = question_difficulty(rate)
    assert (d > 1e-9) - (d < -1e-9) == sign
    assert success_chance(0.0, d) == pytest.approx(rate)


def bank() -> SimpleBank:
    questions = []
    for topic, labels in {
        "01-links": [Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD],
        "02-collectives": [Difficulty.EASY, Difficulty.HARD],
    }.items():
        for i, label in enumerate(labels):
            q = make_question(f"{topic[:2]}-{label.value}", difficulty=label)
            questions.append(replace(q, source=f"questions/{topic}/{i}.yaml"))
    return SimpleBank(questions)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def engine(store: SqlStore, clock: FakeClock) -> QuizEngine:
    return QuizEngine(store, bank(), clock=clock, rng=random.Random(3))


async def test_a_newcomer_gets_the_question_nearest_the_target(engine: QuizEngine):
    item = await engine.next_practice(*W, "U07ABC123")
    assert item is not None and item.kind is PracticeKind.NEW
    # Level 0 and label priors (easy 85%, medium 60%, hard 30%): medium (60%) is nearest 70%.
    assert item.question.difficulty is Difficulty.MEDIUM
    assert item.chance == pytest.approx(0.6)
    assert abs(item.chance - PRACTICE_TARGET) < 0.15


async def test_due_cards_come_first_and_the_topic_and_session_filter(
    engine: QuizEngine, clock: FakeClock
):
    await engine.answer_practice(*W, "U07ABC123", "02-hard", "B")  # wrong: due in a day
    first = await engine.next_practice(*W, "U07ABC123")
    assert first is not None and first.kind is PracticeKind.NEW and first.question.id != "02-hard"
    clock.advance(days=1, minutes=1)
    due = await engine.next_practice(*W, "U07ABC123")
    assert due is not None and (due.kind, due.question.id) == (PracticeKind.DUE, "02-hard")
    # Another topic, or the card already asked in this session: a new question instead.
    other = await engine.next_practice(*W, "U07ABC123", topic="01-links")
    assert other is not None and other.kind is PracticeKind.NEW
    assert other.question.id.startswith("01-")
    later = await engine.next_practice(*W, "U07ABC123", avoid={"02-hard"})
    assert later is not None and later.question.id != "02-hard"


async def test_nothing_left_when_every_question_is_answered_and_none_due(engine: QuizEngine):
    for q in engine.topics():
        await engine.answer_practice(*W, "U07ABC123", q, "A")
    assert await engine.next_practice(*W, "U07ABC123") is None
    assert await engine.next_practice(*W, "U07ABC123", topic="no-such-topic") is None


async def test_a_stronger_player_is_offered_harder_questions(engine: QuizEngine):
    for q in ("01-hard", "02-hard"):
        await engine.answer_practice(*W, "U07STRONG", q, "A")
        await engine.answer_practice(*W, "U07WEAK", q, "B")
    strong, weak = await engine.level(*W, "U07STRONG"), await engine.level(*W, "U07WEAK")
    assert strong > 0.4 > -0.4 > weak
    hard_for_strong = await engine.next_practice(*W, "U07STRONG")
    easy_for_weak = await engine.next_practice(*W, "U07WEAK")
    assert hard_for_strong is not None and easy_for_weak is not None
    # Left: two easy questions and a medium one. The strong player's chance on the medium one
    # is nearest the target; the weak player's on an easy one.
    assert hard_for_strong.question.difficulty is Difficulty.MEDIUM
    assert easy_for_weak.question.difficulty is Difficulty.EASY
    for item in (hard_for_strong, easy_for_weak):
        assert item.chance is not None and abs(item.chance - PRACTICE_TARGET) < 0.12


async def test_practice_answers_review_cards_and_never_score(store: SqlStore, engine: QuizEngine):
    before = await engine.leaderboard(*W, Period.ALL, "U07ABC123")
    outcome = await engine.answer_practice(*W, "U07ABC123", "01-hard", "a", elapsed_ms=4000)
    assert (outcome.correct, outcome.counted) == (True, True)
    assert outcome.due_at is not None and outcome.due_at > T0 + timedelta(days=1)
    assert await engine.leaderboard(*W, Period.ALL, "U07ABC123") == before
    assert (await engine.stats(Place(*W, "C1"), "U07ABC123")).answered == 0
    card = await store.card(CardKey(*W, "U07ABC123", "01-hard"))
    assert card is not None and card.reps == 1


@pytest.mark.parametrize(
    ("question_id", "key", "error"),
    [("gone", "A", NotFound), ("01-hard", "Z", UserError)],
)
async def test_bad_practice_answers(engine: QuizEngine, question_id: str, key: str, error):
    with pytest.raises(error):
        await engine.answer_practice(*W, "U07ABC123", question_id, key)
