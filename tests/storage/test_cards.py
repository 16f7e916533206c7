"""Cards in the store: the ladder's migration, review outside rounds, and a confidence's re-rating
(SQLite always, PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from bot.engine.learning import (
    CardKey,
    Confidence,
    Grade,
    Memory,
    Review,
    Source,
    Study,
    from_ladder,
    rating_for,
)
from bot.storage import SqlStore, make_engine, open_store
from bot.storage._schema import (
    MIGRATIONS,
    _ladder_to_cards,
    metadata,
    review_answers,
    review_items,
    schema_version,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MEMORY = Memory()
KEY = CardKey("slack", "T07TEAM", "U07ABC123", "q1")

LADDER = [
    # user, question, step, right in a row, due in days from T0, done
    ("U07ABC123", "q1", 0, 0, 1, False),
    ("U07ABC123", "q2", 2, 1, -3, False),
    ("U07DEF456", "q1", 3, 2, -10, True),
]


def _upgrade_before_cards(conn: sa.Connection) -> None:
    ladder = next(v for v, _, step in MIGRATIONS if step is _ladder_to_cards)
    metadata.create_all(conn, tables=[schema_version])
    for version, description, step in MIGRATIONS:
        if version >= ladder:
            break
        step(conn)
        conn.execute(
            schema_version.insert().values(version=version, description=description, applied_at=T0)
        )


async def test_ladder_items_become_cards_by_the_documented_rule(database_url: str):
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_upgrade_before_cards)
            for user, qid, step, right, due_days, done in LADDER:
                await conn.execute(
                    review_items.insert().values(
                        platform="slack",
                        workspace="T07TEAM",
                        user_id=user,
                        question_id=qid,
                        step=step,
                        right_in_row=right,
                        due_at=T0 + timedelta(days=due_days),
                        done=done,
                        version=4,
                    )
                )
            await conn.execute(
                review_answers.insert().values(
                    platform="slack",
                    workspace="T07TEAM",
                    user_id="U07ABC123",
                    question_id="q2",
                    choice="C",
                    correct=True,
                    answered_at=T0 - timedelta(days=4),
                )
            )
    finally:
        await engine.dispose()
    store = await open_store(database_url)
    try:
        for user, qid, step, right, due_days, done in LADDER:
            key = CardKey("slack", "T07TEAM", user, qid)
            want = from_ladder(
                key,
                step=step,
                right_in_row=right,
                due_at=T0 + timedelta(days=due_days),
                done=done,
                memory=MEMORY,
            )
            card = await store.card(key)
            assert card is not None and card.version == 1
            assert replace(card, version=0) == want
        async with store.read() as conn:
            history = (
                await conn.execute(
                    sa.text(
                        "SELECT user_id, question_id, source, choice, correct, rating "
                        "FROM card_reviews"
                    )
                )
            ).all()
            tables = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        assert [tuple(h) for h in history] == [
            ("U07ABC123", "q2", "review", "C", True, int(Grade.GOOD))
        ]
        assert "review_items" not in tables and "review_answers" not in tables
    finally:
        await store.close()


def study_at(at: datetime, correct: bool, source: Source = Source.PRACTICE) -> Study:
    return Study(
        KEY,
        Review(at=at, correct=correct, rating=rating_for(correct, None, None), source=source),
        MEMORY,
    )


async def test_study_reviews_once_per_due_card(store: SqlStore):
    card, counted = await store.study(study_at(T0, False), choice="B")
    assert counted and card.version == 1 and card.due_at == T0 + timedelta(days=1)
    # Not due yet: a second answer with due_only leaves it alone.
    again, counted = await store.study(
        study_at(T0 + timedelta(hours=1), True), choice="A", due_only=True
    )
    assert not counted and again == card
    later = T0 + timedelta(days=1)
    clicks = await asyncio.gather(
        *(store.study(study_at(later, True), choice="A", due_only=True) for _ in range(4))
    )
    assert sum(c for _, c in clicks) == 1
    stored = await store.card(KEY)
    assert stored is not None and (stored.reps, stored.version) == (2, 2)


async def test_a_confidence_re_rates_the_latest_review(store: SqlStore):
    await store.study(study_at(T0, True), choice="A")
    guessed = await store.rate_last(KEY, Confidence.GUESSED, MEMORY, Grade.HARD)
    want = MEMORY.replay(KEY, [Review(at=T0, correct=True, rating=Grade.HARD)])
    assert guessed is not None
    assert (guessed.stability, guessed.due_at, guessed.reps) == (want.stability, want.due_at, 1)
    # Saying "sure" afterwards re-rates the same review, not a second one.
    sure = await store.rate_last(KEY, Confidence.SURE, MEMORY, Grade.EASY)
    easy = MEMORY.replay(KEY, [Review(at=T0, correct=True, rating=Grade.EASY)])
    assert sure is not None and (sure.stability, sure.due_at, sure.reps) == (
        easy.stability,
        easy.due_at,
        1,
    )
    async with store.read() as conn:
        rows = (await conn.execute(sa.text("SELECT confidence, rating FROM cards"))).all()
    assert [tuple(r) for r in rows] == [("sure", int(Grade.EASY))]


async def test_a_confidence_re_rates_a_later_review_from_its_own_start(store: SqlStore):
    await store.study(study_at(T0, False), choice="B")
    later = T0 + timedelta(days=1)
    await store.study(study_at(later, True), choice="A")
    sure = await store.rate_last(KEY, Confidence.SURE, MEMORY, Grade.EASY)
    want = MEMORY.replay(
        KEY,
        [
            Review(at=T0, correct=False, rating=Grade.AGAIN),
            Review(at=later, correct=True, rating=Grade.EASY),
        ],
    )
    assert sure is not None
    assert (sure.stability, sure.difficulty, sure.due_at, sure.reps, sure.lapses) == (
        want.stability,
        want.difficulty,
        want.due_at,
        2,
        0,
    )
    assert await store.card(KEY) == sure


async def test_nothing_to_re_rate_without_a_review(store: SqlStore):
    assert await store.rate_last(KEY, Confidence.SURE, MEMORY, Grade.EASY) is None
