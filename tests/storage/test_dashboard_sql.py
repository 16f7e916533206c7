"""The dashboard's SQL: streaks equal the engine's, daily activity, history, one-use links."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from bot.engine import Place
from bot.engine.engine import streaks
from bot.engine.model import AnswerRecord
from bot.storage import SqlStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def test_sql_streaks_equal_the_engine_on_random_histories(store: SqlStore):
    rng = random.Random(20261202)
    expected: dict[tuple[str, str], tuple[int, int]] = {}
    for case in range(30):
        channel = f"C{case}"
        place = Place("slack", "T1", channel)
        n = rng.randint(1, 9)
        last_open = rng.random() < 0.5
        history: dict[str, list[tuple[bool, bool | None]]] = {"U1": [], "U2": []}
        for i in range(n):
            at = T0 + timedelta(days=case * 20 + i)
            rnd = await store.create_round(
                place, f"q{i}", opened_at=at, closes_at=None, scheduled=True
            )
            closed = not (last_open and i == n - 1)
            for user, results in history.items():
                outcome = rng.choice(["right", "wrong", "none"])
                correct = None if outcome == "none" else outcome == "right"
                if correct is not None:
                    await store.record_answer(
                        AnswerRecord(rnd.id, user, "A" if correct else "B", correct, 1, at, 10)
                    )
                results.append((closed, correct))
            if closed:
                assert await store.close_round(rnd.id, at + timedelta(minutes=5))
        # A round posted by hand in the same channel never counts towards streaks.
        if not last_open:
            extra = await store.create_round(
                place, "hand", opened_at=T0 + timedelta(days=case * 20 + 15), closes_at=None
            )
            await store.record_answer(AnswerRecord(extra.id, "U1", "B", False, 0, T0, 10))
            await store.close_round(extra.id, T0 + timedelta(days=case * 20 + 16))
        for user, results in history.items():
            if any(c for _, c in results):
                expected[(channel, user)] = streaks(results)
    rows = await store.streak_rows("slack", "T1")
    got = {(r.channel, r.user): (r.current, r.best) for r in rows}
    assert got == expected
    only = await store.streak_rows("slack", "T1", user="U2")
    assert {r.user for r in only} <= {"U2"}
    assert {(r.channel, r.user): (r.current, r.best) for r in only} == {
        k: v for k, v in expected.items() if k[1] == "U2"
    }


async def test_daily_activity_per_utc_day(store: SqlStore):
    place = Place("slack", "T1", "C1")
    rnd = await store.create_round(place, "q", opened_at=T0, closes_at=None)
    late = T0.replace(hour=23, minute=59)
    rows = [("U1", T0, True), ("U2", late, False)]
    for user, at, right in rows:
        await store.record_answer(AnswerRecord(rnd.id, user, "A", right, 1, at, 10))
    rnd2 = await store.create_round(Place("slack", "T1", "C2"), "q", opened_at=T0, closes_at=None)
    await store.record_answer(
        AnswerRecord(rnd2.id, "U1", "A", True, 1, T0 + timedelta(days=1, minutes=1), 10)
    )
    other = await store.create_round(Place("slack", "T2", "C1"), "q", opened_at=T0, closes_at=None)
    await store.record_answer(AnswerRecord(other.id, "X", "A", True, 1, T0, 10))
    got = await store.daily_activity("slack", "T1", T0 - timedelta(days=7))
    assert [(d.day, d.answers, d.players, d.correct) for d in got] == [
        (date(2026, 3, 2), 2, 2, 1),
        (date(2026, 3, 3), 1, 1, 1),
    ]
    assert await store.daily_activity("slack", "T1", T0 + timedelta(days=2)) == []


async def test_user_history_and_channels(store: SqlStore):
    for i, channel in enumerate(["C2", "C1"]):
        rnd = await store.create_round(
            Place("slack", "T1", channel),
            f"q{i}",
            opened_at=T0 + timedelta(hours=i),
            closes_at=None,
        )
        await store.record_answer(
            AnswerRecord(rnd.id, "U1", "C", i == 1, 2 * i, T0 + timedelta(hours=i), 1000 + i)
        )
    history = await store.user_history("slack", "T1", "U1")
    assert [(h.channel, h.question_id, h.choice, h.correct, h.points) for h in history] == [
        ("C1", "q1", "C", True, 2),
        ("C2", "q0", "C", False, 0),
    ]
    assert await store.user_history("slack", "T2", "U1") == []
    assert await store.workspace_channels("slack", "T1") == ["C1", "C2"]


async def test_link_claims_once(store: SqlStore):
    exp = T0 + timedelta(minutes=15)
    assert await store.claim_link("n1", exp, T0)
    assert not await store.claim_link("n1", exp, T0)
    assert await store.claim_link("n2", exp, T0)


async def test_an_open_whose_commit_reply_was_lost_still_wins_its_link(store: SqlStore):
    # The review: the retry after a lost commit met its own row and told the person "already
    # used" for their first open.
    exp = T0 + timedelta(minutes=15)
    real_write = store.write
    lost = [True]

    @asynccontextmanager
    async def write_then_lose_the_reply() -> AsyncIterator[Any]:
        async with real_write() as conn:
            yield conn
        if lost and lost.pop():
            raise sa.exc.DBAPIError(
                "COMMIT", {}, ConnectionError("connection lost"), connection_invalidated=True
            )

    store.write = write_then_lose_the_reply  # type: ignore[method-assign]
    try:
        assert await store.claim_link("n-lost", exp, T0)
    finally:
        store.write = real_write  # type: ignore[method-assign]
    assert not lost  # the first attempt's commit landed and its reply was lost
    assert not await store.claim_link("n-lost", exp, T0)  # a second open is still refused
