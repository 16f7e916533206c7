"""A channel that picks for its players' level, on a real store (SQLite, and PostgreSQL when
QUIZBOT_TEST_DATABASE_URL is set): strong recent players get a hard question, weak ones an easy
one, nobody a medium one."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from bot.engine import ChannelSettings, Place, QuizEngine
from bot.engine.model import Difficulty, DifficultyMode
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

PLACE = Place("slack", "T1", "C1")
BANK = SimpleBank(
    [make_question("first")]
    + [make_question(f"e{i}", difficulty=Difficulty.EASY) for i in range(3)]
    + [make_question(f"m{i}") for i in range(3)]
    + [make_question(f"h{i}", difficulty=Difficulty.HARD) for i in range(8)]
)


async def level_channel(store: SqlStore, clock: FakeClock) -> QuizEngine:
    engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(5))
    await engine.set_channel_settings(PLACE, ChannelSettings(difficulty=DifficultyMode.LEVEL))
    return engine


async def first_round(engine: QuizEngine, players: dict[str, str]) -> None:
    """Ask the channel's first question (always the bank's first) and let players answer it."""
    card = await engine.start_round(PLACE)
    assert card.question.id == "first"
    for user, key in players.items():
        await engine.answer("slack", "T1", card.round_id, user, key)
    await engine.close(card.round_id)


@pytest.mark.parametrize(
    ("right", "expected"),
    [(True, Difficulty.HARD), (False, Difficulty.EASY)],
)
async def test_the_next_question_suits_the_recent_players(
    store: SqlStore, right: bool, expected: Difficulty
) -> None:
    clock = FakeClock()
    engine = await level_channel(store, clock)
    # Their level comes from all their answers: here, practice on six hard questions.
    for user in ("ada", "bob"):
        for i in range(6):
            await engine.answer_practice("slack", "T1", user, f"h{i}", "A" if right else "B")
    await first_round(engine, {"ada": "A" if right else "B", "bob": "A" if right else "B"})
    level = await engine.channel_level(PLACE)
    assert (level > 0.5) if right else (level < -0.5)
    card = await engine.start_round(PLACE)
    assert card.question.difficulty is expected


async def test_with_no_recent_players_the_level_is_a_newcomers(store: SqlStore) -> None:
    clock = FakeClock()
    engine = await level_channel(store, clock)
    for i in range(6):
        await engine.answer_practice("slack", "T1", "ada", f"h{i}", "A")
    await first_round(engine, {"ada": "A"})
    # A month and more later ada no longer counts as a recent player here.
    clock.advance(days=31)
    assert await engine.channel_level(PLACE) == 0.0
    card = await engine.start_round(PLACE)
    assert card.question.difficulty is Difficulty.MEDIUM  # 60% is nearest 70% at level 0


async def test_recent_players_are_the_latest_in_this_channel_only(store: SqlStore) -> None:
    clock = FakeClock()
    engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(5))
    for user in ("ada", "bob", "cy"):
        card = await engine.start_round(PLACE)
        await engine.answer("slack", "T1", card.round_id, user, "A")
        await engine.close(card.round_id)
        clock.advance(minutes=1)
    elsewhere = Place("slack", "T1", "C2")
    card = await engine.start_round(elsewhere)
    await engine.answer("slack", "T1", card.round_id, "dee", "A")
    since = clock() - timedelta(days=30)
    assert await store.recent_players(PLACE, since, 10) == ["cy", "bob", "ada"]
    assert await store.recent_players(PLACE, since, 2) == ["cy", "bob"]
    assert await store.recent_players(PLACE, clock() - timedelta(seconds=90), 10) == ["cy"]
