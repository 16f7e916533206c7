"""Mastery computed in SQL equals its Python definition, on random histories
(SQLite always, PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import QuizEngine
from bot.engine.learning import (
    CardKey,
    Grade,
    Review,
    Source,
    Study,
    mastery,
    team_mastery,
)
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TOPICS = {"01-interconnects": 3, "03-collectives": 4, "13-power-cooling": 2}


def bank() -> SimpleBank:
    questions = []
    for topic, n in TOPICS.items():
        for i in range(n):
            q = make_question(f"{topic[:2]}-q{i}")
            questions.append(replace(q, source=f"questions/{topic}/{i:02d}-q.yaml"))
    return SimpleBank(questions)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
async def test_mastery_in_sql_equals_the_python_definition(store: SqlStore, seed: int):
    rng = random.Random(seed)
    clock = FakeClock(T0)
    engine = QuizEngine(store, bank(), clock=clock)
    ids = list(engine.topics())
    users = ["U07ABC123", "U07DEF456", "U07GHI789"]
    for _ in range(rng.randint(5, 40)):
        user, qid = rng.choice(users), rng.choice([*ids, "retired-question"])
        at = T0 + timedelta(seconds=rng.randint(0, 40 * 86_400))
        rating = rng.choice(list(Grade))
        review = Review(
            at=at, correct=rating is not Grade.AGAIN, rating=rating, source=Source.PRACTICE
        )
        key = CardKey("slack", "T07TEAM", user, qid)
        # Answers out of time order are possible here; the store reviews whatever it holds.
        await store.study(Study(key, review, engine.memory), choice="A")
    clock.now = T0 + timedelta(days=rng.randint(0, 90), seconds=rng.randint(0, 86_399))
    got = await engine.mastery("slack", "T07TEAM")
    assert got, "every seed answers something"
    for person in got:
        cards = await store.cards("slack", "T07TEAM", person.user)
        want = mastery(cards, engine.topics(), engine.memory, clock())
        assert [t.topic for t in person.topics] == list(TOPICS)
        for t in person.topics:
            assert t.mastery == pytest.approx(want[t.topic], rel=1e-9, abs=1e-12), t
            assert t.questions == TOPICS[t.topic]
            assert 0.0 <= t.mastery <= 1.0
    team = team_mastery(got)
    for i, topic in enumerate(team):
        assert topic.mastery == pytest.approx(sum(p.topics[i].mastery for p in got) / len(got))
    # One person's own view is the same as their row in the whole team's.
    mine = await engine.mastery("slack", "T07TEAM", got[0].user)
    assert mine == [got[0]]


async def test_nobody_has_mastery_before_answering(store: SqlStore):
    engine = QuizEngine(store, bank(), clock=FakeClock(T0))
    assert await engine.mastery("slack", "T07TEAM") == []
    assert team_mastery([]) == ()
