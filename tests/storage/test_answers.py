"""Recording an answer: every outcome in one round trip, a miss queued with it, the review rule
the engine's own (SQLite always, PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from bot.engine import AnswerStatus, ChannelSettings, Place
from bot.engine.model import AnswerRecord
from bot.engine.review import ReviewItem, after_round_miss
from bot.storage import SqlStore
from bot.storage._schema import review_items

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T1", "C1")


def answer(round_id: int, user: str, choice: str = "A", at: datetime = T0) -> AnswerRecord:
    correct = choice == "A"
    return AnswerRecord(round_id, user, choice, correct, 2 if correct else 0, at, 1500)


def miss(user: str, now: datetime = T0, question_id: str = "q1") -> ReviewItem:
    return after_round_miss(
        None, platform="slack", workspace="T1", user=user, question_id=question_id, now=now
    )


async def new_round(store: SqlStore, place: Place = PLACE) -> int:
    rnd = await store.create_round(place, "q1", opened_at=T0, closes_at=T0 + timedelta(minutes=10))
    return rnd.id


class Trips:
    """Count what reaches the database: SQLAlchemy's statements and the store's raw calls."""

    def __init__(self, store: SqlStore) -> None:
        self.sqlalchemy = 0
        self.raw_calls = 0
        self.raw_statements: list[str] = []

        def seen(*_: Any) -> None:
            self.sqlalchemy += 1

        event.listen(store.engine.sync_engine, "before_cursor_execute", seen)
        event.listen(store.engine.sync_engine, "commit", seen)
        store.trace_raw_statements(self._raw)

    def _raw(self, sql: str | None) -> None:
        if sql is None:
            self.raw_calls += 1
        elif sql.split()[0].upper() not in ("BEGIN", "COMMIT", "ROLLBACK"):
            self.raw_statements.append(sql)

    def reset(self) -> None:
        self.sqlalchemy, self.raw_calls, self.raw_statements = 0, 0, []


async def test_every_outcome_is_one_round_trip(store: SqlStore):
    rid = await new_round(store)
    changing = Place("slack", "T1", "CCHANGE")
    await store.set_channel_settings(changing, ChannelSettings(allow_change=True))
    rchange = await new_round(store, changing)
    await store.record_answer(answer(rchange, "U9"))
    await store.record_answer(answer(rchange, "U8", "C"), miss=miss("U8"))
    trips = Trips(store)
    cases = [
        ("right", answer(rid, "U1"), None, AnswerStatus.ACCEPTED),
        ("first miss", answer(rid, "U2", "B"), miss("U2"), AnswerStatus.ACCEPTED),
        ("already", answer(rid, "U2", "C"), miss("U2"), AnswerStatus.ALREADY),
        ("changed to a miss", answer(rchange, "U9", "D"), miss("U9"), AnswerStatus.CHANGED),
        ("changed to right", answer(rchange, "U8", "A"), None, AnswerStatus.CHANGED),
    ]
    most = {"right": 1, "first miss": 2, "already": 2}
    for name, record, queued, status in cases:
        trips.reset()
        assert (await store.record_answer(record, miss=queued))[0] is status, name
        assert (trips.sqlalchemy, trips.raw_calls) == (0, 1), name
        assert len(trips.raw_statements) <= most.get(name, 5), (name, trips.raw_statements)
    await store.close_round(rid, T0 + timedelta(minutes=1))
    rnext = await new_round(store)
    for name, record, status in [
        ("closed", answer(rid, "U3", "B"), AnswerStatus.CLOSED),
        ("repeat miss", answer(rnext, "U2", "B"), AnswerStatus.ACCEPTED),
    ]:
        trips.reset()
        assert (await store.record_answer(record, miss=miss(record.user)))[0] is status, name
        assert (trips.sqlalchemy, trips.raw_calls) == (0, 1), name


async def test_a_first_or_repeat_miss_is_at_most_two_statements(store: SqlStore):
    trips = Trips(store)
    for _ in range(2):
        rid = await new_round(store)
        trips.reset()
        await store.record_answer(answer(rid, "U1", "B"), miss=miss("U1"))
        assert len(trips.raw_statements) <= 2, trips.raw_statements
        await store.close_round(rid, T0)


async def test_a_miss_is_queued_with_the_answer_that_counts(store: SqlStore):
    rid = await new_round(store)
    status, _ = await store.record_answer(answer(rid, "U1", "B"), miss=miss("U1"))
    assert status is AnswerStatus.ACCEPTED
    stored = await store.review_item("slack", "T1", "U1", "q1")
    assert stored == replace(miss("U1"), version=1)
    # A second, refused click changes nothing, however late it comes.
    late = T0 + timedelta(hours=5)
    assert (await store.record_answer(answer(rid, "U1", "C", late), miss=miss("U1", late)))[
        0
    ] is AnswerStatus.ALREADY
    assert await store.review_item("slack", "T1", "U1", "q1") == stored
    # Nor does an answer after the close.
    await store.close_round(rid, T0)
    await store.record_answer(answer(rid, "U2", "B"), miss=miss("U2"))
    assert await store.review_item("slack", "T1", "U2", "q1") is None


async def test_a_change_to_a_wrong_choice_queues_the_question(store: SqlStore):
    rid = await new_round(store)
    await store.record_answer(answer(rid, "U1", "A"))
    status, previous = await store.record_answer(
        answer(rid, "U1", "B"), allow_change=True, miss=miss("U1")
    )
    assert status is AnswerStatus.CHANGED and previous is not None and previous.choice == "A"
    assert await store.review_item("slack", "T1", "U1", "q1") == replace(miss("U1"), version=1)


@pytest.mark.parametrize(
    ("allow_change", "setting", "status"),
    [
        (True, False, AnswerStatus.CHANGED),
        (False, True, AnswerStatus.ALREADY),
        (None, True, AnswerStatus.CHANGED),
        (None, False, AnswerStatus.ALREADY),
    ],
)
async def test_the_caller_may_decide_whether_an_answer_changes(
    store: SqlStore, allow_change: bool | None, setting: bool, status: AnswerStatus
):
    await store.set_channel_settings(PLACE, ChannelSettings(allow_change=setting))
    rid = await new_round(store)
    await store.record_answer(answer(rid, "U1", "A"))
    got, stored = await store.record_answer(answer(rid, "U1", "B"), allow_change=allow_change)
    assert got is status and stored is not None and stored.choice == "A"
    [row] = await store.round_answers(rid)
    assert row.choice == ("B" if status is AnswerStatus.CHANGED else "A")


async def test_the_same_choice_again_is_already_even_where_changes_are_allowed(store: SqlStore):
    rid = await new_round(store)
    await store.record_answer(answer(rid, "U1", "B"))
    status, stored = await store.record_answer(answer(rid, "U1", "B"), allow_change=True)
    assert status is AnswerStatus.ALREADY and stored is not None and stored.choice == "B"


async def test_an_answer_to_a_round_that_does_not_exist_is_closed(store: SqlStore):
    assert await store.record_answer(answer(4242, "U1", "B"), miss=miss("U1")) == (
        AnswerStatus.CLOSED,
        None,
    )
    assert await store.review_items("slack", "T1", "U1", include_done=True) == []


# Every branch of review.after_round_miss for a stored item: finished or not, a run of right
# answers or none, due before, at or after the new due time, an early or a late step.
STORED_STATES = list(itertools.product((False, True), (0, 1), (-2, 0, 3), (0, 2), (1, 4)))


async def test_a_miss_merges_into_a_stored_item_exactly_as_the_engine_rule_says(store: SqlStore):
    rid = await new_round(store)
    now = T0 + timedelta(minutes=1)
    expected: dict[str, ReviewItem] = {}
    async with store.write() as conn:
        for n, (done, right, due_days, step, version) in enumerate(STORED_STATES):
            user = f"U{n}"
            due = now + timedelta(days=1 + due_days)
            values = dict(
                platform="slack",
                workspace="T1",
                user_id=user,
                question_id="q1",
                step=step,
                right_in_row=right,
                due_at=due,
                done=done,
                version=version,
            )
            await conn.execute(sa.insert(review_items).values(**values))
            stored = ReviewItem("slack", "T1", user, "q1", step, right, due, done, version)
            new = after_round_miss(
                stored, platform="slack", workspace="T1", user=user, question_id="q1", now=now
            )
            # save_review_item raises the version of what it writes; nothing written, no raise.
            expected[user] = new if new == stored else replace(new, version=new.version + 1)
    for user in expected:
        status, _ = await store.record_answer(answer(rid, user, "B", now), miss=miss(user, now))
        assert status is AnswerStatus.ACCEPTED
    for user, want in expected.items():
        assert await store.review_item("slack", "T1", user, "q1") == want, user


async def test_a_review_item_belongs_to_the_answering_user(store: SqlStore):
    rid = await new_round(store)
    with pytest.raises(ValueError, match="its own user"):
        await store.record_answer(answer(rid, "U1", "B"), miss=miss("U2"))


async def test_the_newest_scheduled_results_are_the_tail_of_all(store: SqlStore):
    ids = []
    for day in range(6):
        rnd = await store.create_round(
            PLACE, "q1", opened_at=T0 + timedelta(days=day), closes_at=None, scheduled=True
        )
        ids.append(rnd.id)
        if day % 2 == 0:
            await store.record_answer(answer(rnd.id, "U1", "AB"[day % 4 // 2]))
        await store.close_round(rnd.id, T0 + timedelta(days=day, hours=1))
    every = await store.scheduled_results(PLACE, "U1")
    assert len(every) == 6
    for n in (1, 3, 6, 10):
        assert await store.scheduled_results(PLACE, "U1", newest=n) == every[-n:]


async def test_a_timestamp_on_the_second_compares_as_any_other(store: SqlStore):
    # SQLite keeps timestamps as text: every path must write them in one format, or an answer
    # given exactly at a period's start would fall out of that period's leaderboard.
    rid = await new_round(store)
    await store.record_answer(answer(rid, "U1", "A", at=T0))
    [row] = await store.score_rows("slack", "T1", since=T0)
    assert (row.user, row.answered) == ("U1", 1)
    assert await store.score_rows("slack", "T1", since=T0 + timedelta(microseconds=1)) == []
