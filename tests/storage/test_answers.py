"""Recording an answer: every outcome in one round trip, the person's FSRS card reviewed with it
by the engine's own rule (SQLite always, PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from bot.engine import AnswerStatus, ChannelSettings, Place
from bot.engine.learning import CardKey, Memory, MemoryCard, Review, Study, new_card, rating_for
from bot.engine.model import AnswerRecord
from bot.storage import SqlStore, open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T1", "C1")


def answer(round_id: int, user: str, choice: str = "A", at: datetime = T0) -> AnswerRecord:
    correct = choice == "A"
    return AnswerRecord(round_id, user, choice, correct, 2 if correct else 0, at, 1500)


MEMORY = Memory()


def study(
    user: str, now: datetime = T0, question_id: str = "q1", *, correct: bool = False
) -> Study:
    """The review of ``user``'s card that an answer at ``now`` brings (a miss by default)."""
    review = Review(at=now, correct=correct, rating=rating_for(correct, None, 1500))
    return Study(CardKey("slack", "T1", user, question_id), review, MEMORY)


def reviewed(s: Study, prior: MemoryCard | None = None) -> MemoryCard:
    """The card ``s`` leaves when it reviews ``prior``, as the store reads it back."""
    version = 0 if prior is None else prior.version
    return replace(s.apply(prior), version=version + 1)


def key(user: str, question_id: str = "q1") -> CardKey:
    return CardKey("slack", "T1", user, question_id)


async def new_round(store: SqlStore, place: Place = PLACE) -> int:
    rnd = await store.create_round(place, "q1", opened_at=T0, closes_at=T0 + timedelta(minutes=10))
    return rnd.id


@pytest.fixture(params=["as configured", "in memory"])
async def any_store(request: pytest.FixtureRequest, store: SqlStore) -> AsyncIterator[SqlStore]:
    """The store under test, and for SQLite also an in-memory one, which has no writer thread
    and takes ``answer_steps`` statement by statement, as a racing PostgreSQL click does."""
    if request.param == "as configured":
        yield store
        return
    if store.dialect != "sqlite":
        pytest.skip("an in-memory database is SQLite's")
    memory = await open_store("sqlite+aiosqlite:///:memory:")
    try:
        yield memory
    finally:
        await memory.close()


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
        elif sql.split()[0].upper() not in ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"):
            self.raw_statements.append(sql)

    def reset(self) -> None:
        self.sqlalchemy, self.raw_calls, self.raw_statements = 0, 0, []


# What each outcome sends on SQLite, in order: the answer's upsert, then, for an answer that
# went in, its card's write. PostgreSQL sends one statement for every outcome. Both expect the
# card this store wrote last (or none): a card changed elsewhere costs a read and a second write
# (SQLite) or a second statement (PostgreSQL), tested below.
ANSWER, CARD = "INSERT INTO answers ", ["INSERT INTO cards "]
SQLITE_STATEMENTS = {
    "right": [ANSWER, *CARD],
    "first miss": [ANSWER, *CARD],
    "already, changes off": [ANSWER],
    "already, a miss": [ANSWER],
    "already, the same choice": [ANSWER],
    "changed to a miss": [ANSWER],
    "changed to right": [ANSWER],
    "closed": [ANSWER],
    "closed, a miss": [ANSWER],
    "no such round": [ANSWER],
    "repeat miss": [ANSWER, *CARD],
    "no card": [ANSWER],
}


async def test_every_outcome_is_one_round_trip(store: SqlStore):
    rid = await new_round(store)
    changing = Place("slack", "T1", "CCHANGE")
    await store.set_channel_settings(changing, ChannelSettings(allow_change=True))
    rchange = await new_round(store, changing)
    for user, choice in [("U7", "B"), ("U9", "A")]:
        await store.record_answer(answer(rchange, user, choice))
    await store.record_answer(answer(rchange, "U8", "C"), study=study("U8"))
    trips = Trips(store)

    async def check(name: str, record: AnswerRecord, s: Study | None, status: str, trips_: int = 1):
        trips.reset()
        assert (await store.record_answer(record, study=s))[0].value == status, name
        if store.dialect == "postgresql":
            assert (trips.sqlalchemy, trips.raw_calls) == (0, trips_), name
            assert len(trips.raw_statements) == trips_, (name, trips.raw_statements)
        else:
            assert (trips.sqlalchemy, trips.raw_calls) == (0, 1), name
            sent = [sql.lstrip() for sql in trips.raw_statements]
            want = SQLITE_STATEMENTS[name]
            assert len(sent) == len(want), (name, sent)
            assert all(map(str.startswith, sent, want)), (name, sent)

    await check("right", answer(rid, "U1"), study("U1", correct=True), "accepted")
    await check("first miss", answer(rid, "U2", "B"), study("U2"), "accepted")
    await check("already, changes off", answer(rid, "U1", "B"), study("U1"), "already")
    await check("already, a miss", answer(rid, "U2", "C"), study("U2"), "already")
    await check("already, the same choice", answer(rchange, "U7", "B"), None, "already")
    await check("changed to a miss", answer(rchange, "U9", "D"), study("U9"), "changed")
    await check(
        "changed to right", answer(rchange, "U8", "A"), study("U8", correct=True), "changed"
    )
    await store.close_round(rchange, T0 + timedelta(minutes=1))
    await check("closed", answer(rchange, "U8", "B"), None, "closed")
    await check("closed, a miss", answer(rchange, "U5", "B"), study("U5"), "closed")
    await check("no such round", answer(4242, "U5", "B"), study("U5"), "closed")
    await check("no card", answer(rid, "U6", "B"), None, "accepted")
    rnext = await new_round(store, changing)
    # U2 holds the card for q1 that this store wrote: it is expected, and reviewed in one go.
    await check("repeat miss", answer(rnext, "U2", "B"), study("U2"), "accepted")


async def test_a_card_changed_by_another_replica_is_read_again(store: SqlStore, database_url: str):
    replica = await open_store(database_url)
    try:
        first = await new_round(store)
        await store.record_answer(answer(first, "U1", "B"), study=study("U1"))
        # The other replica reviews the same card; this store's memory of it is now stale.
        second = await new_round(replica, Place("slack", "T1", "C2"))
        later = T0 + timedelta(days=1)
        await replica.record_answer(
            answer(second, "U1", "A", later), study=study("U1", later, correct=True)
        )
        third = await new_round(store, Place("slack", "T1", "C3"))
        trips = Trips(store)
        at = T0 + timedelta(days=3)
        status, _ = await store.record_answer(answer(third, "U1", "B", at), study=study("U1", at))
        assert status is AnswerStatus.ACCEPTED
        if store.dialect == "postgresql":
            assert trips.raw_calls == 2  # the stale guess, then the stored card
        else:
            sent = [sql.lstrip().split()[0] for sql in trips.raw_statements]
            assert sent == ["INSERT", "INSERT", "SELECT", "INSERT"], sent
        want = reviewed(study("U1"))
        want = reviewed(study("U1", later, correct=True), want)
        want = reviewed(study("U1", at), want)
        assert await store.card(key("U1")) == want
        assert (want.reps, want.lapses, want.version) == (3, 1, 3)
    finally:
        await replica.close()


def record(round_id: int, user: str, choice: str, minutes: int, ms: int) -> AnswerRecord:
    correct = choice == "A"
    at = T0 + timedelta(minutes=minutes)
    return AnswerRecord(round_id, user, choice, correct, 3 if correct else 0, at, ms)


@pytest.mark.parametrize(
    ("allow_change", "setting", "first", "again", "status"),
    [
        (None, True, "A", "B", AnswerStatus.CHANGED),
        (None, True, "B", "A", AnswerStatus.CHANGED),
        (None, True, "B", "B", AnswerStatus.ALREADY),
        (None, False, "A", "B", AnswerStatus.ALREADY),
        (None, None, "A", "B", AnswerStatus.ALREADY),
        (True, None, "B", "C", AnswerStatus.CHANGED),
        (True, True, "C", "C", AnswerStatus.ALREADY),
        (False, True, "B", "A", AnswerStatus.ALREADY),
    ],
)
async def test_a_second_answer_reports_the_whole_first_and_keeps_what_counts(
    any_store: SqlStore,
    allow_change: bool | None,
    setting: bool | None,
    first: str,
    again: str,
    status: AnswerStatus,
):
    if setting is not None:
        await any_store.set_channel_settings(PLACE, ChannelSettings(allow_change=setting))
    rid = await new_round(any_store)
    earlier, later = record(rid, "U1", first, 1, 1100), record(rid, "U1", again, 4, 4400)
    other = record(rid, "U2", "D", 2, 2200)
    assert await any_store.record_answer(earlier) == (AnswerStatus.ACCEPTED, None)
    assert await any_store.record_answer(other) == (AnswerStatus.ACCEPTED, None)
    got = await any_store.record_answer(
        later,
        allow_change=allow_change,
        study=study("U1", later.answered_at, correct=later.correct),
    )
    # CHANGED reports the answer replaced, ALREADY the one that still counts: all of it.
    assert got == (status, earlier)
    kept = later if status is AnswerStatus.CHANGED else earlier
    # A change takes the new answer's points, time and elapsed time; the other user's stays.
    assert await any_store.round_answers(rid) == sorted([kept, other], key=lambda a: a.answered_at)
    # The first answer went in without a card review; a second answer never reviews one.
    assert await any_store.card(key("U1")) is None


async def test_a_closed_round_keeps_its_answers_whatever_the_channel_allows(any_store: SqlStore):
    await any_store.set_channel_settings(PLACE, ChannelSettings(allow_change=True))
    rid = await new_round(any_store)
    first = record(rid, "U1", "A", 1, 1100)
    await any_store.record_answer(first)
    await any_store.close_round(rid, T0 + timedelta(minutes=2))
    for late in (record(rid, "U1", "B", 3, 3300), record(rid, "U2", "B", 3, 3300)):
        for allow_change in (None, True):
            got = await any_store.record_answer(
                late, allow_change=allow_change, study=study(late.user)
            )
            assert got == (AnswerStatus.CLOSED, None)
    assert await any_store.round_answers(rid) == [first]
    assert await any_store.cards("slack", "T1", "U1") == []
    assert await any_store.cards("slack", "T1", "U2") == []


@pytest.mark.parametrize("allow_change", [True, False])
async def test_two_clicks_of_one_user_at_once_count_once(
    store: SqlStore, database_url: str, allow_change: bool
):
    # Two clicks at the same time through the same store, then through two replicas' stores.
    replica = await open_store(database_url)
    try:
        for n, (one, two) in enumerate([(store, store), (store, replica)] * 5):
            rid = await new_round(store, Place("slack", "T1", f"CRACE{n}"))
            clicks = record(rid, "U1", "B", 1, 1100), record(rid, "U1", "C", 1, 1200)
            got = await asyncio.gather(
                *(
                    who.record_answer(
                        click, allow_change=allow_change, study=study("U1", click.answered_at)
                    )
                    for who, click in zip((one, two), clicks, strict=True)
                )
            )
            # One goes in; the other replaces it or is refused, and reports it either way.
            accepted = [g[0] is AnswerStatus.ACCEPTED for g in got]
            assert sorted(accepted) == [False, True], got
            first, second = (clicks, clicks[::-1])[accepted[1]]
            status, reported = got[accepted.index(False)]
            [row] = await store.round_answers(rid)
            assert reported == first
            if allow_change:
                assert (status, row) == (AnswerStatus.CHANGED, second)
            else:
                assert (status, row) == (AnswerStatus.ALREADY, first)
            await store.close_round(rid, T0)
        # Ten rounds, each reviewing the card once, whichever click went in.
        card = await store.card(key("U1"))
        assert card is not None and (card.reps, card.version) == (10, 10)
    finally:
        await replica.close()


async def test_a_close_racing_an_answer_decides_it_one_way_or_the_other(
    store: SqlStore, database_url: str
):
    await store.set_channel_settings(PLACE, ChannelSettings(allow_change=True))
    replica = await open_store(database_url)
    sent: list[asyncio.Task[Any]] = []
    answers: list[tuple[AnswerRecord, Study]] = []

    def on_close(_conn: Any, _cur: Any, sql: str, *_: Any) -> None:
        # The close's UPDATE has run and its transaction is not yet committed: answer now.
        if sql.lstrip().startswith("UPDATE rounds") and answers:
            sent.extend(asyncio.ensure_future(store.record_answer(a, study=m)) for a, m in answers)
            answers.clear()

    try:
        for closer in (store, replica):
            event.listen(closer.engine.sync_engine, "after_cursor_execute", on_close)
        for n in range(12):
            rid = await new_round(store)
            first = record(rid, "U1", "A", 1, 1100)
            await store.record_answer(first)
            user = f"V{n}"
            change, new = record(rid, "U1", "B", 2, 2200), record(rid, user, "C", 2, 2200)
            clicks = [(r, study(r.user, r.answered_at, f"q{n}")) for r in (change, new)]
            closer = (store, replica)[n % 2]
            if n % 4 < 2:
                # Sent together: the close and the answers race for the database.
                closed, *got = await asyncio.gather(
                    closer.close_round(rid, T0 + timedelta(minutes=2)),
                    *(store.record_answer(a, study=m) for a, m in clicks),
                )
            else:
                # Sent while the close holds the round: they must wait for it and find it closed.
                answers[:] = clicks
                closed = await closer.close_round(rid, T0 + timedelta(minutes=2))
                got = list(await asyncio.gather(*sent))
                sent.clear()
                assert got == [(AnswerStatus.CLOSED, None)] * 2, n
            assert closed
            got_change, got_new = got
            rows = {r.user: r for r in await store.round_answers(rid)}
            # Either the answer came before the close and counts, card and all, or it came
            # after and left nothing behind.
            if got_change[0] is AnswerStatus.CHANGED:
                assert got_change[1] == first and rows["U1"] == change
            else:
                assert got_change == (AnswerStatus.CLOSED, None) and rows["U1"] == first
            if got_new[0] is AnswerStatus.ACCEPTED:
                assert rows[user] == new
            else:
                assert got_new == (AnswerStatus.CLOSED, None) and user not in rows
            # A changed answer leaves the card alone (the round's first answer reviewed it).
            assert await store.card(key("U1", f"q{n}")) is None, n
            card = await store.card(key(user, f"q{n}"))
            assert (card is not None) == (got_new[0] is AnswerStatus.ACCEPTED), (n, user)
    finally:
        for closer in (store, replica):
            event.remove(closer.engine.sync_engine, "after_cursor_execute", on_close)
        await replica.close()


async def test_the_card_is_reviewed_with_the_answer_that_counts(store: SqlStore):
    rid = await new_round(store)
    status, _ = await store.record_answer(answer(rid, "U1", "B"), study=study("U1"))
    assert status is AnswerStatus.ACCEPTED
    stored = await store.card(key("U1"))
    assert stored == reviewed(study("U1"))
    # A second, refused click changes nothing, however late it comes.
    late = T0 + timedelta(hours=5)
    assert (await store.record_answer(answer(rid, "U1", "C", late), study=study("U1", late)))[
        0
    ] is AnswerStatus.ALREADY
    assert await store.card(key("U1")) == stored
    # Nor does an answer after the close.
    await store.close_round(rid, T0)
    await store.record_answer(answer(rid, "U2", "B"), study=study("U2"))
    assert await store.card(key("U2")) is None


async def test_a_change_leaves_the_card_as_the_first_answer_left_it(store: SqlStore):
    rid = await new_round(store)
    await store.record_answer(answer(rid, "U1", "A"), study=study("U1", correct=True))
    first = await store.card(key("U1"))
    later = T0 + timedelta(minutes=3)
    status, previous = await store.record_answer(
        answer(rid, "U1", "B", later), allow_change=True, study=study("U1", later)
    )
    assert status is AnswerStatus.CHANGED and previous is not None and previous.choice == "A"
    assert first is not None and await store.card(key("U1")) == first


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
    assert await store.record_answer(answer(4242, "U1", "B"), study=study("U1")) == (
        AnswerStatus.CLOSED,
        None,
    )
    assert await store.cards("slack", "T1", "U1") == []


# Stored cards of every kind: never reviewed right, lapsed, long-lived, due before or after now.
STORED_HISTORIES = [
    [False],
    [True],
    [False, False],
    [True, True, True],
    [False, True, True, False],
    [True, False, True],
]


async def test_a_round_answer_reviews_a_stored_card_exactly_as_the_engine_rule_says(
    any_store: SqlStore,
):
    rid = await new_round(any_store)
    now = T0 + timedelta(days=60)
    expected: dict[str, MemoryCard] = {}
    for n, (history, correct) in enumerate(itertools.product(STORED_HISTORIES, (False, True))):
        user = f"U{n}"
        card = new_card(key(user), T0)
        at = T0
        for right in history:
            card = study(user, at, correct=right).apply(card)
            at = card.due_at
        card = replace(card, version=3)
        assert await any_store.put_card(replace(card, version=0))
        async with any_store.write() as conn:
            await conn.execute(
                sa.text("UPDATE cards SET version = 3 WHERE user_id = :u"), {"u": user}
            )
        expected[user] = reviewed(study(user, now, correct=correct), card)
        status, _ = await any_store.record_answer(
            answer(rid, user, "A" if correct else "B", now),
            study=study(user, now, correct=correct),
        )
        assert status is AnswerStatus.ACCEPTED
    for user, want in expected.items():
        assert await any_store.card(key(user)) == want, user


async def test_a_round_answer_keeps_the_state_it_started_from(store: SqlStore):
    rid = await new_round(store)
    await store.record_answer(answer(rid, "U1", "B"), study=study("U1"))
    after_miss = await store.card(key("U1"))
    rnext = await new_round(store, Place("slack", "T1", "C2"))
    later = T0 + timedelta(days=1)
    await store.record_answer(
        answer(rnext, "U1", "A", later), study=study("U1", later, correct=True)
    )
    async with store.read() as conn:
        row = (
            await conn.execute(
                sa.text("SELECT rating, confidence, p_state, p_stability, p_lapses FROM cards")
            )
        ).one()
    assert after_miss is not None
    assert tuple(row) == (3, None, after_miss.state, after_miss.stability, after_miss.lapses)


async def test_a_card_belongs_to_the_answering_user(store: SqlStore):
    rid = await new_round(store)
    with pytest.raises(ValueError, match="its own user"):
        await store.record_answer(answer(rid, "U1", "B"), study=study("U2"))


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


async def test_an_answer_made_while_the_pool_holds_the_write_lock_waits_without_the_loop(
    store: SqlStore,
):
    # SQLAlchemy's transactions cross into their driver's thread a statement at a time, on
    # the loop: had the answer waited for the lock on the loop's thread, neither could go on.
    if store.dialect != "sqlite":
        pytest.skip("SQLite's write lock")
    rid = await new_round(store)
    async with store.write() as conn:
        await conn.execute(
            sa.text("UPDATE rounds SET message_ref = 'held' WHERE id = :id"), {"id": rid}
        )
        pending = asyncio.ensure_future(
            store.record_answer(answer(rid, "U1", "B"), study=study("U1"))
        )
        # The answer's group meets the lock and goes to the writer's thread, which waits.
        for _ in range(5):
            await asyncio.sleep(0)
        assert not pending.done()
        # The loop is free: this transaction goes on, and commits.
        await conn.execute(sa.text("SELECT 1"))
    assert await pending == (AnswerStatus.ACCEPTED, None)
    [stored_answer] = await store.round_answers(rid)
    assert stored_answer.choice == "B"
    assert await store.card(key("U1")) == reviewed(study("U1"))
