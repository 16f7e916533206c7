"""Practice sessions through the engine and the store: the order of questions, owed cards,
answers counted once, the answer time, and the session's pure rules (SQLite always, PostgreSQL
when QUIZBOT_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from bot.engine import QuizEngine
from bot.engine.learning import CardKey, Grade, PracticeKind
from bot.engine.model import Place
from bot.engine.practice import (
    PracticeSession,
    after_answer,
    find_topic,
    owed_next,
)
from bot.errors import UserError
from bot.storage import SqlStore
from bot.storage._schema import card_reviews
from tests.engine.test_practice import bank

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
W = ("slack", "T07TEAM")
ADA = "U07ADA"


@pytest.fixture
def engine(store: SqlStore, clock_t0: object) -> QuizEngine:
    return QuizEngine(store, bank(), clock=clock_t0, rng=random.Random(3))  # type: ignore[arg-type]


@pytest.fixture
def clock_t0():
    from tests.conftest import FakeClock

    return FakeClock(T0)


def session(**changes: object) -> PracticeSession:
    base = PracticeSession("slack", "T", "U", target=3, started_at=T0)
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "correct", "owed_before", "owed_after"),
    [
        (PracticeKind.DUE, False, (), ("q",)),  # a due card missed is owed
        (PracticeKind.DUE, True, ("q",), ()),  # answered right once: paid
        (PracticeKind.NEW, False, (), ()),  # a new question missed is not owed
        (PracticeKind.DUE, False, ("q",), ("q",)),  # missed again: still owed, once
    ],
)
def test_owed_cards_by_the_rule(kind, correct, owed_before, owed_after):
    after = after_answer(session(current="q", owed=owed_before), "q", correct, kind)
    assert after.owed == owed_after and after.answered == 1 and after.current is None


@pytest.mark.parametrize(
    ("answered", "asked", "owed", "expected"),
    [
        (0, (), (), None),
        (1, ("q",), ("q",), None),  # just missed: another question first
        (3, ("q",), ("q",), "q"),  # the count reached: at once
        (1, ("q", "r"), ("q",), "q"),  # one question in between: now
    ],
)
def test_an_owed_card_waits_one_question(answered, asked, owed, expected):
    assert owed_next(session(answered=answered, asked=asked, owed=owed)) == expected


@pytest.mark.parametrize(
    ("asked", "found"),
    [("02-collectives", "02-collectives"), ("Collectives", "02-collectives"), ("nope", None)],
)
def test_a_topic_is_found_with_or_without_its_number(asked, found):
    assert find_topic(asked, ["01-links", "02-collectives"]) == found


async def test_a_session_asks_due_then_new_and_owes_a_missed_due_card(engine: QuizEngine, clock_t0):
    await engine.answer_practice(*W, ADA, "02-hard", "B")  # wrong: due in a day
    clock_t0.advance(days=1, minutes=1)
    turn = await engine.start_practice(*W, ADA, count=2)
    assert turn.item is not None and (turn.item.kind, turn.item.question.id) == (
        PracticeKind.DUE,
        "02-hard",
    )
    clock_t0.advance(seconds=7)
    missed = await engine.answer_in_practice(*W, ADA, "02-hard", "B")
    assert not missed.outcome.correct and missed.owed_again
    assert missed.session.owed == ("02-hard",) and not missed.session.done
    # The answer's time is the time since the question was shown.
    async with engine.store.read() as conn:  # type: ignore[attr-defined]
        rows = await conn.execute(
            sa.select(card_reviews.c.source, card_reviews.c.elapsed_ms).order_by(card_reviews.c.id)
        )
        assert list(rows)[-1] == ("practice", 7000)
    second = await engine.practice_next(*W, ADA)
    assert second.item is not None and second.item.kind is PracticeKind.NEW
    assert second.number == 2
    right = second.item.question
    await engine.answer_in_practice(*W, ADA, right.id, right.answer)
    third = await engine.practice_next(*W, ADA)
    assert third.item is not None and third.item.question.id == "02-hard" and third.number == 3
    paid = await engine.answer_in_practice(*W, ADA, "02-hard", "A")
    assert paid.session.done and paid.session.right == 2 and paid.session.answered == 3
    end = await engine.practice_next(*W, ADA)
    assert end.item is None and end.session.done


async def test_next_twice_shows_the_same_question(engine: QuizEngine):
    first = await engine.start_practice(*W, ADA, count=3)
    again = await engine.practice_next(*W, ADA)
    assert first.item is not None and again.item is not None
    assert again.item.question.id == first.item.question.id


async def test_an_answer_counts_once_even_when_clicked_at_once(engine: QuizEngine):
    turn = await engine.start_practice(*W, ADA, count=3)
    assert turn.item is not None
    q = turn.item.question
    results = await asyncio.gather(
        *(engine.answer_in_practice(*W, ADA, q.id, q.answer) for _ in range(3)),
        return_exceptions=True,
    )
    counted = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, UserError)]
    assert len(counted) == 1 and len(refused) == 2
    card = await engine.store.card(CardKey(*W, ADA, q.id))
    assert card is not None and card.reps == 1
    stored = await engine.store.practice_session(*W, ADA)
    assert stored is not None and stored.answered == 1


async def test_stop_ends_the_session_and_its_buttons(engine: QuizEngine):
    turn = await engine.start_practice(*W, ADA, count=3)
    assert turn.item is not None
    stopped = await engine.stop_practice(*W, ADA)
    assert stopped is not None and stopped.answered == 0
    with pytest.raises(UserError):
        await engine.answer_in_practice(*W, ADA, turn.item.question.id, "A")
    with pytest.raises(UserError):
        await engine.practice_next(*W, ADA)
    assert await engine.stop_practice(*W, ADA) is None


@pytest.mark.parametrize(("topic", "count"), [("nope", 3), (None, 0), (None, 51)])
async def test_bad_sessions_are_refused_and_store_nothing(engine: QuizEngine, topic, count):
    with pytest.raises(UserError):
        await engine.start_practice(*W, ADA, topic=topic, count=count)
    assert await engine.store.practice_session(*W, ADA) is None


async def test_a_topic_keeps_the_session_to_its_questions(engine: QuizEngine):
    turn = await engine.start_practice(*W, ADA, topic="links", count=5)
    asked = []
    while turn.item is not None:
        q = turn.item.question
        asked.append(q.id)
        await engine.answer_in_practice(*W, ADA, q.id, q.answer)
        turn = await engine.practice_next(*W, ADA)
    assert sorted(asked) == ["01-easy", "01-hard", "01-medium"]
    assert turn.session.answered == 3 and not turn.session.done  # the topic ran out first


# ---------------------------------------------------------------- confidence


async def test_a_confidence_re_rates_a_practice_answer_by_its_time(engine: QuizEngine, clock_t0):
    turn = await engine.start_practice(*W, ADA, count=3)
    assert turn.item is not None
    q = turn.item.question
    clock_t0.advance(seconds=4)  # quick: sure and right is Easy
    await engine.answer_in_practice(*W, ADA, q.id, q.answer)
    good = await engine.store.card(CardKey(*W, ADA, q.id))
    rated = await engine.rate_confidence(*W, ADA, q.id, "sure")
    assert rated.correct and rated.rating is Grade.EASY and rated.due_at > good.due_at
    with pytest.raises(UserError):
        await engine.rate_confidence(*W, ADA, q.id, "guessed")


async def test_a_confidence_re_rates_a_round_answer(engine: QuizEngine, clock_t0):
    place = Place("slack", "T07TEAM", "C1")
    card = await engine.start_round(place)
    clock_t0.advance(seconds=4)  # quick: sure is Easy (with no time known it would be Good)
    q = card.question
    await engine.answer("slack", "T07TEAM", card.round_id, ADA, q.answer)
    rated = await engine.rate_confidence(*W, ADA, q.id, "sure")
    assert rated.correct and rated.rating is Grade.EASY


@pytest.mark.parametrize("late", [True, False])
async def test_a_confidence_is_refused_late_or_without_an_answer(
    engine: QuizEngine, clock_t0, late: bool
):
    if not late:
        with pytest.raises(UserError):
            await engine.rate_confidence(*W, ADA, "01-easy", "sure")
        return
    await engine.answer_practice(*W, ADA, "01-easy", "B")
    clock_t0.advance(minutes=31)
    with pytest.raises(UserError):
        await engine.rate_confidence(*W, ADA, "01-easy", "sure")
