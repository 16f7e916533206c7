"""The answering rules in one place: the points a right answer earns, what a second answer does,
and channel settings that store only what was changed."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from bot.engine import AnswerStatus, ChannelSettings, Place, QuizEngine
from bot.engine.model import Difficulty
from bot.engine.rules import points_for, second_answer
from bot.storage import SqlStore, open_store
from tests.conftest import FakeClock, SimpleBank, make_question

PLACE = Place("slack", "T1", "C1")


@pytest.mark.parametrize(
    ("difficulty", "correct", "points"),
    [
        (Difficulty.EASY, True, 1),
        (Difficulty.MEDIUM, True, 2),
        (Difficulty.HARD, True, 3),
        (Difficulty.HARD, False, 0),
        (Difficulty.EASY, False, 0),
    ],
)
def test_points_for(difficulty: Difficulty, correct: bool, points: int) -> None:
    assert points_for(make_question("q", difficulty=difficulty), correct) == points


@pytest.mark.parametrize(
    ("first", "again", "allow_change", "status"),
    [
        ("A", "B", False, AnswerStatus.ALREADY),
        ("A", "A", False, AnswerStatus.ALREADY),
        ("A", "B", True, AnswerStatus.CHANGED),
        ("A", "A", True, AnswerStatus.ALREADY),
    ],
)
def test_second_answer(first: str, again: str, allow_change: bool, status: AnswerStatus) -> None:
    assert second_answer(first, again, allow_change=allow_change) is status


@pytest.fixture
async def store(sqlite_url: str) -> AsyncIterator[SqlStore]:
    s = await open_store(sqlite_url)
    try:
        yield s
    finally:
        await s.close()


def engine_on(store: SqlStore, *, default_minutes: int) -> QuizEngine:
    bank = SimpleBank([make_question("q1", answer="A", difficulty=Difficulty.HARD)])
    return QuizEngine(
        store, bank, clock=FakeClock(), rng=random.Random(1), default_minutes=default_minutes
    )


async def test_the_points_stored_are_the_points_shown(store: SqlStore) -> None:
    engine = engine_on(store, default_minutes=10)
    card = await engine.start_round(PLACE)
    outcome = await engine.answer("slack", "T1", card.round_id, "U1", "A")
    (stored,) = await store.round_answers(card.round_id)
    assert outcome.points == stored.points == 3


async def test_a_channel_stores_only_the_options_changed(store: SqlStore) -> None:
    engine = engine_on(store, default_minutes=10)
    now = await engine.change_channel_settings(PLACE, allow_change=True)
    assert now == ChannelSettings(allow_change=True, round_minutes=10)
    # The round length was never set here: it is not pinned to today's default...
    assert await store.channel_settings(PLACE) == ChannelSettings(allow_change=True)
    # ...so a bot restarted with another QUIZBOT_ROUND_MINUTES uses the new one.
    later = engine_on(store, default_minutes=25)
    assert await later.channel_settings(PLACE) == ChannelSettings(True, 25)
    await later.change_channel_settings(PLACE, round_minutes=5)
    assert await store.channel_settings(PLACE) == ChannelSettings(True, 5)


async def test_changes_allowed_by_the_channel_let_a_second_answer_replace_the_first(
    store: SqlStore,
) -> None:
    engine = engine_on(store, default_minutes=10)
    await engine.change_channel_settings(PLACE, allow_change=True)
    card = await engine.start_round(PLACE)
    first = await engine.answer("slack", "T1", card.round_id, "U1", "B")
    second = await engine.answer("slack", "T1", card.round_id, "U1", "A")
    assert (first.status, second.status, second.points) == (
        AnswerStatus.ACCEPTED,
        AnswerStatus.CHANGED,
        3,
    )
    assert (await store.round_answers(card.round_id))[0].choice == "A"
