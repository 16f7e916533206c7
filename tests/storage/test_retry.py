"""A lost database connection is retried, and never stores an answer twice or loses a close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from bot.engine import AnswerStatus, Place
from bot.engine.model import AnswerRecord
from bot.observability.metrics import DB_RETRIES
from bot.storage import SqlStore, open_store
from bot.storage._retry import ATTEMPTS, MAX_DELAY, is_transient, run_with_retries
from tests.conftest import PG_URL
from tests.storage.tcp_proxy import CuttingProxy

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T1", "C1")


class Coded(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def dbapi(orig: Exception, *, invalidated: bool = False) -> DBAPIError:
    return DBAPIError("SELECT 1", {}, orig, connection_invalidated=invalidated)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (dbapi(Exception("server closed the connection"), invalidated=True), True),
        (dbapi(Coded("57P01")), True),  # admin shutdown: pg_terminate_backend
        (dbapi(Coded("08006")), True),  # connection failure
        (dbapi(Coded("40001")), True),  # serialization failure: rolled back whole
        (dbapi(Coded("40P01")), True),  # deadlock: rolled back whole
        (ConnectionRefusedError(111, "refused"), True),
        (ConnectionResetError(104, "reset"), True),
        (IntegrityError("INSERT", {}, Coded("23505")), False),  # a constraint said no
        (OperationalError("SELECT", {}, Coded("42P01")), False),  # missing table: a bug
        (dbapi(Exception("syntax")), False),
        (ValueError("naive datetime"), False),
    ],
)
def test_which_errors_are_transient(error: BaseException, transient: bool):
    assert is_transient(error) is transient


async def test_retries_are_bounded_with_growing_delays():
    delays: list[float] = []
    flags: list[bool] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    async def attempt(retrying: bool) -> int:
        flags.append(retrying)
        raise ConnectionResetError(104, "reset")

    before = DB_RETRIES.labels(operation="op")._value.get()
    with pytest.raises(ConnectionResetError):
        await run_with_retries("op", attempt, sleep=sleep)
    assert flags == [False] + [True] * (ATTEMPTS - 1)
    assert len(delays) == ATTEMPTS - 1
    assert all(0 < d <= MAX_DELAY for d in delays)
    assert delays[-1] > delays[0]
    assert DB_RETRIES.labels(operation="op")._value.get() - before == ATTEMPTS - 1


async def test_a_permanent_error_is_not_retried():
    calls = 0

    async def attempt(retrying: bool) -> int:
        nonlocal calls
        calls += 1
        raise IntegrityError("INSERT", {}, Coded("23505"))

    with pytest.raises(IntegrityError):
        await run_with_retries("op", attempt, sleep=lambda s: asyncio.sleep(0))
    assert calls == 1


async def test_a_transient_error_then_success_returns_the_result():
    outcomes = iter([OSError("reset"), 7])

    async def attempt(retrying: bool) -> int:
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    assert await run_with_retries("op", attempt, sleep=lambda s: asyncio.sleep(0)) == 7


# ---------------------------------------------------------------- PostgreSQL, real drops

needs_pg = pytest.mark.skipif(not PG_URL, reason="QUIZBOT_TEST_DATABASE_URL is not set")


@pytest.fixture
async def pg_url(database_url: str) -> str:
    if not database_url.startswith("postgresql"):
        pytest.skip("connection drops are a PostgreSQL matter")
    return database_url


@pytest.fixture
async def proxy(pg_url: str) -> AsyncIterator[CuttingProxy]:
    url = make_url(pg_url)
    p = CuttingProxy(url.host or "127.0.0.1", url.port or 5432)
    await p.start()
    try:
        yield p
    finally:
        await p.stop()


@pytest.fixture
async def proxied(pg_url: str, proxy: CuttingProxy) -> AsyncIterator[SqlStore]:
    # Unprepared statements put the SQL text on the wire each time, for the proxy to spot.
    url = (
        make_url(pg_url)
        .set(port=proxy.port, query={"prepared_statement_cache_size": "0"})
        .render_as_string(hide_password=False)
    )
    store = await open_store(url)
    try:
        yield store
    finally:
        await store.close()


async def new_round(store: SqlStore) -> int:
    rnd = await store.create_round(PLACE, "q1", opened_at=T0, closes_at=T0 + timedelta(minutes=10))
    return rnd.id


def answer(round_id: int, user: str, choice: str = "A") -> AnswerRecord:
    return AnswerRecord(round_id, user, choice, choice == "A", 2 if choice == "A" else 0, T0, 900)


@needs_pg
async def test_backend_terminated_between_calls_keeps_one_answer(pg_url: str):
    import asyncpg

    store = await open_store(pg_url)
    admin = await asyncpg.connect(pg_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        rid = await new_round(store)
        killed = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert killed >= 1  # the store's pooled connection is gone
        assert await store.record_answer(answer(rid, "U1")) == (AnswerStatus.ACCEPTED, None)
        await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        status, stored = await store.record_answer(answer(rid, "U1", "B"))
        assert status is AnswerStatus.ALREADY and stored is not None and stored.choice == "A"
        assert await store.count_answers(rid) == 1
    finally:
        await admin.close()
        await store.close()


@needs_pg
async def test_answer_whose_commit_reply_was_lost_is_accepted_once(
    proxied: SqlStore, proxy: CuttingProxy
):
    rid = await new_round(proxied)
    # An answer is one autocommitted statement: the message that carries its values (the user
    # id among them) executes and commits it, and its reply is the one lost.
    proxy.cut_after(b"ULOSTREPLY")
    assert await proxied.record_answer(answer(rid, "ULOSTREPLY")) == (AnswerStatus.ACCEPTED, None)
    assert proxy.cuts == 1
    [row] = await proxied.round_answers(rid)
    assert (row.user, row.choice) == ("ULOSTREPLY", "A")
    # A real second click is still told it already answered.
    status, stored = await proxied.record_answer(answer(rid, "ULOSTREPLY", "B"))
    assert status is AnswerStatus.ALREADY and stored is not None and stored.choice == "A"


@needs_pg
async def test_answer_cut_before_it_reached_the_server_is_stored_by_the_retry(
    proxied: SqlStore, proxy: CuttingProxy
):
    rid = await new_round(proxied)
    proxy.cut_before(b"INSERT INTO answers")
    assert await proxied.record_answer(answer(rid, "U2", "C")) == (AnswerStatus.ACCEPTED, None)
    assert proxy.cuts == 1
    assert [(a.user, a.choice) for a in await proxied.round_answers(rid)] == [("U2", "C")]


@needs_pg
async def test_close_whose_commit_reply_was_lost_is_still_won_once(
    proxied: SqlStore, proxy: CuttingProxy
):
    rid = await new_round(proxied)
    proxy.cut_after(b"COMMIT")
    closed = await proxied.close_round(rid, T0 + timedelta(minutes=10))
    assert closed is not None and closed.id == rid
    assert proxy.cuts == 1
    assert await proxied.close_round(rid, T0 + timedelta(minutes=11)) is None
    rnd = await proxied.get_round(rid)
    assert rnd is not None and rnd.closed_at == T0 + timedelta(minutes=10)


@needs_pg
async def test_round_whose_commit_reply_was_lost_is_returned_not_refused(
    proxied: SqlStore, proxy: CuttingProxy
):
    proxy.cut_after(b"COMMIT")
    rnd = await proxied.create_round(PLACE, "q7", opened_at=T0, closes_at=None)
    assert proxy.cuts == 1
    stored = await proxied.open_round(PLACE)
    assert stored is not None and (stored.id, stored.question_id) == (rnd.id, "q7")


@needs_pg
async def test_deleting_an_unseen_round_whose_commit_reply_was_lost_reports_the_delete(
    proxied: SqlStore, proxy: CuttingProxy
):
    rid = await new_round(proxied)
    proxy.cut_after(b"COMMIT")
    assert await proxied.delete_unseen_round(rid) is True
    assert proxy.cuts == 1
    assert await proxied.get_round(rid) is None


@needs_pg
async def test_a_claim_whose_commit_reply_was_lost_is_still_held(
    proxied: SqlStore, proxy: CuttingProxy
):
    from bot.scheduler.port import ClaimKind

    # A slot's first claim is one statement in autocommit: its reply is the commit's.
    proxy.cut_after(b"INSERT INTO slot_claims")
    won = await proxied.claim_slot(
        PLACE, ClaimKind.POST, "2026-03-02", slot_at=T0, claimant="replica-a", at=T0
    )
    assert won is True and proxy.cuts == 1
    lost = await proxied.claim_slot(
        PLACE, ClaimKind.POST, "2026-03-02", slot_at=T0, claimant="replica-b", at=T0
    )
    assert lost is False
