"""One storage suite: on SQLite always, on PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from bot.engine import AnswerStatus, ChannelSettings, Place, RoundAlreadyOpen
from bot.engine.model import AnswerRecord
from bot.errors import ConfigError
from bot.storage import SqlStore, latest_version, make_engine, open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T1", "C1")


def answer(round_id: int, user: str, choice: str = "A", correct: bool = True) -> AnswerRecord:
    return AnswerRecord(round_id, user, choice, correct, 2 if correct else 0, T0, 1500)


async def new_round(store: SqlStore, place: Place = PLACE, **kw) -> int:
    rnd = await store.create_round(
        place, kw.pop("question_id", "q1"), opened_at=T0, closes_at=T0 + timedelta(minutes=10), **kw
    )
    return rnd.id


async def test_migrations_are_versioned_and_idempotent(store: SqlStore, database_url: str):
    assert await store.schema_version() == latest_version()
    assert await store.upgrade() == []
    again = await open_store(database_url)
    try:
        assert await again.schema_version() == latest_version()
    finally:
        await again.close()


async def test_round_round_trip_keeps_aware_utc(store: SqlStore):
    rid = await new_round(store, scheduled=True, slot="2026-03-02T09:00")
    await store.set_message_ref(rid, "1700000000.000100")
    rnd = await store.get_round(rid)
    assert rnd is not None
    assert rnd.opened_at == T0 and rnd.opened_at.tzinfo is not None
    assert rnd.closes_at == T0 + timedelta(minutes=10)
    assert (rnd.message_ref, rnd.scheduled, rnd.slot, rnd.closed_at) == (
        "1700000000.000100",
        True,
        "2026-03-02T09:00",
        None,
    )
    assert await store.get_round(rid + 1000) is None


async def test_one_open_round_per_channel_is_a_constraint(store: SqlStore):
    rid = await new_round(store)
    with pytest.raises(RoundAlreadyOpen):
        await new_round(store)
    await new_round(store, Place("slack", "T1", "C2"))
    await new_round(store, Place("slack", "T2", "C1"))
    assert await store.close_round(rid, T0)
    await new_round(store)


async def test_answers_are_unique_per_round_and_user(store: SqlStore):
    rid = await new_round(store)
    assert await store.record_answer(answer(rid, "U1")) == (
        AnswerStatus.ACCEPTED,
        None,
    )
    status, existing = await store.record_answer(answer(rid, "U1", "B", False))
    assert status is AnswerStatus.ALREADY and existing is not None and existing.choice == "A"
    await store.set_channel_settings(PLACE, ChannelSettings(allow_change=True, round_minutes=10))
    status, previous = await store.record_answer(answer(rid, "U1", "B", False))
    assert status is AnswerStatus.CHANGED and previous is not None and previous.choice == "A"
    [row] = await store.round_answers(rid)
    assert (row.choice, row.correct, row.points) == ("B", False, 0)
    assert await store.count_answers(rid) == 1


async def test_concurrent_answers_one_row_each(store: SqlStore):
    rid = await new_round(store)
    records = [answer(rid, f"U{i % 50}", "AB"[i % 2]) for i in range(150)]
    results = await asyncio.gather(*(store.record_answer(r) for r in records))
    assert sum(s is AnswerStatus.ACCEPTED for s, _ in results) == 50
    assert await store.count_answers(rid) == 50


async def test_close_is_once_and_blocks_answers(store: SqlStore):
    rid = await new_round(store)
    results = await asyncio.gather(*(store.close_round(rid, T0) for _ in range(10)))
    won = [r for r in results if r is not None]
    assert len(won) == 1 and won[0].id == rid and won[0].closed_at == T0
    assert await store.record_answer(answer(rid, "U1")) == (
        AnswerStatus.CLOSED,
        None,
    )
    assert await store.count_answers(rid) == 0


async def test_due_rounds(store: SqlStore):
    due = await new_round(store)
    await store.create_round(
        Place("slack", "T1", "C2"), "q1", opened_at=T0, closes_at=T0 + timedelta(hours=1)
    )
    await store.create_round(Place("slack", "T1", "C3"), "q1", opened_at=T0, closes_at=None)
    now = T0 + timedelta(minutes=11)
    assert [r.id for r in await store.due_rounds("slack", now)] == [due]
    assert await store.due_rounds("discord", now) == []


async def test_open_rounds_of_a_workspace_whatever_their_closing_time(store: SqlStore):
    first = await new_round(store)
    endless = await store.create_round(
        Place("slack", "T1", "C2"), "q1", opened_at=T0, closes_at=None
    )
    closed = await new_round(store, Place("slack", "T1", "C3"))
    assert await store.close_round(closed, T0 + timedelta(minutes=1))
    await new_round(store, Place("slack", "T2", "C1"))
    await new_round(store, Place("discord", "T1", "C1"))
    assert [r.id for r in await store.open_rounds("slack", "T1")] == [first, endless.id]
    assert await store.open_rounds("slack", "T9") == []


async def test_scores_are_isolated_by_workspace(store: SqlStore):
    r1 = await new_round(store)
    r2 = await new_round(store, Place("slack", "T2", "C1"))
    r3 = await new_round(store, Place("discord", "T1", "C1"))
    await store.record_answer(answer(r1, "U1"))
    await store.record_answer(answer(r2, "U1"))
    await store.record_answer(answer(r2, "U2"))
    await store.record_answer(answer(r3, "U3"))
    rows = await store.score_rows("slack", "T1", None)
    assert [(r.user, r.points, r.answered, r.correct) for r in rows] == [("U1", 2, 1, 1)]
    assert {r.user for r in await store.score_rows("slack", "T2", None)} == {"U1", "U2"}
    assert await store.score_rows("slack", "T1", T0 + timedelta(seconds=1)) == []
    assert [r.user for r in await store.score_rows("slack", "T2", None, user="U2")] == ["U2"]


async def test_question_counts_and_stats(store: SqlStore):
    for qid in ["q1", "q2", "q1"]:
        rid = await new_round(store, question_id=qid)
        await store.record_answer(answer(rid, "U1", correct=qid == "q1"))
        await store.close_round(rid, T0)
    assert await store.question_counts(PLACE) == {"q1": 2, "q2": 1}
    stats = await store.question_stats("slack", "T1", "q1")
    assert (stats.rounds, stats.answered, stats.correct) == (2, 2, 2)


async def test_channel_settings_round_trip(store: SqlStore):
    assert await store.channel_settings(PLACE) == ChannelSettings()
    await store.set_channel_settings(PLACE, ChannelSettings(allow_change=True, round_minutes=3))
    await store.set_channel_settings(PLACE, ChannelSettings(allow_change=True, round_minutes=4))
    assert await store.channel_settings(PLACE) == ChannelSettings(True, 4)
    assert await store.channel_settings(Place("slack", "T2", "C1")) == ChannelSettings()


async def test_scheduled_results(store: SqlStore):
    first = await new_round(store, scheduled=True)
    await store.record_answer(answer(first, "U1"))
    await store.close_round(first, T0)
    second = await new_round(store, scheduled=True)
    await store.close_round(second, T0)
    third = await new_round(store, scheduled=False)
    await store.close_round(third, T0)
    await new_round(store, scheduled=True)
    assert await store.scheduled_results(PLACE, "U1") == [(True, True), (True, None), (False, None)]


@pytest.mark.parametrize(
    "url", ["mysql://x/y", "not a url", "sqlite:///sync-driver.db", "postgresql://sync/driver"]
)
def test_bad_database_urls_are_config_errors(url: str):
    with pytest.raises(ConfigError, match="QUIZBOT_DATABASE_URL"):
        make_engine(url)


async def test_a_channel_settings_row_from_before_the_computed_share_reads_as_none(
    database_url: str,
):
    # A database at version 13: channel_settings without computed_percent, a row in it.
    store = await open_store(database_url)
    await store.close()
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(sa.text("ALTER TABLE channel_settings DROP COLUMN computed_percent"))
            await conn.execute(sa.text("DELETE FROM schema_version WHERE version = 14"))
            await conn.execute(
                sa.text(
                    "INSERT INTO channel_settings (platform, workspace, channel, allow_change,"
                    " round_minutes, difficulty) VALUES ('slack', 'T1', 'C1', true, 5, 'hard')"
                )
            )
    finally:
        await engine.dispose()
    upgraded = await open_store(database_url)
    try:
        assert await upgraded.schema_version() == latest_version()
        before = await upgraded.channel_settings(PLACE)
        assert before.computed_percent == 0 and before.round_minutes == 5
        await upgraded.set_channel_settings(PLACE, replace(before, computed_percent=35))
        assert await upgraded.channel_settings(PLACE) == replace(before, computed_percent=35)
    finally:
        await upgraded.close()
