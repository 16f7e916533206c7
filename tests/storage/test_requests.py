"""Request keys claimed once across replicas, each until it expires (SQLite, and PostgreSQL when
QUIZBOT_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from bot.storage import RequestClaims, SqlStore, open_store
from bot.storage._requests import PURGE_EVERY
from bot.storage._schema import request_claims
from tests.storage.tcp_proxy import CuttingProxy

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(minutes=5)


@pytest.fixture
async def other(database_url: str, store: SqlStore) -> AsyncIterator[SqlStore]:
    """A second replica's store on the same database."""
    s = await open_store(database_url)
    try:
        yield s
    finally:
        await s.close()


async def rows(store: SqlStore) -> list[str]:
    async with store.read() as conn:
        return sorted((await conn.execute(sa.select(request_claims.c.request_key))).scalars())


async def test_a_key_is_won_by_one_replica_only(store: SqlStore, other: SqlStore):
    a, b = RequestClaims(store), RequestClaims(other)
    assert await a.claim({"sig:1": LATER}, now=T0) == {"sig:1"}
    assert await b.claim({"sig:1": LATER}, now=T0) == set()
    assert await a.claim({"sig:1": LATER}, now=T0) == set()


async def test_each_key_of_a_claim_is_won_on_its_own(store: SqlStore, other: SqlStore):
    a, b = RequestClaims(store), RequestClaims(other)
    assert await a.claim({"sig:1": LATER, "event:E1": LATER}, now=T0) == {"sig:1", "event:E1"}
    # A redelivery: new signature, same event.
    assert await b.claim({"sig:2": LATER, "event:E1": LATER}, now=T0) == {"sig:2"}


async def test_replicas_claiming_at_once_win_each_key_once(store: SqlStore, other: SqlStore):
    claimers = [RequestClaims(s) for s in (store, other) for _ in range(5)]
    results = await asyncio.gather(
        *(
            c.claim({"sig:same": LATER, f"sig:own{i}": LATER}, now=T0)
            for i, c in enumerate(claimers)
        )
    )
    assert sum("sig:same" in won for won in results) == 1
    assert all(f"sig:own{i}" in won for i, won in enumerate(results))


async def test_an_expired_key_can_be_claimed_again(store: SqlStore, other: SqlStore):
    a, b = RequestClaims(store), RequestClaims(other)
    assert await a.claim({"sig:1": LATER}, now=T0) == {"sig:1"}
    assert (
        await b.claim({"sig:1": LATER + timedelta(minutes=5)}, now=LATER - timedelta(seconds=1))
        == set()
    )
    assert await b.claim({"sig:1": LATER + timedelta(minutes=5)}, now=LATER) == {"sig:1"}
    assert await a.claim({"sig:1": LATER + timedelta(minutes=9)}, now=LATER) == set()


async def test_expired_keys_are_deleted_as_time_goes_by(store: SqlStore):
    claims = RequestClaims(store)
    await claims.claim({"sig:old": T0 + timedelta(seconds=30)}, now=T0)
    await claims.claim({"sig:new": T0 + PURGE_EVERY * 10}, now=T0 + timedelta(seconds=40))
    assert await rows(store) == ["sig:new", "sig:old"]  # the purge waits its turn
    await claims.claim({"sig:newer": T0 + PURGE_EVERY * 10}, now=T0 + PURGE_EVERY * 2)
    await claims.idle()  # the purge runs beside the claims, not in their way
    assert await rows(store) == ["sig:new", "sig:newer"]


async def test_no_keys_claim_nothing(store: SqlStore):
    assert await RequestClaims(store).claim({}, now=T0) == set()


@pytest.fixture
async def proxied(database_url: str) -> AsyncIterator[tuple[SqlStore, CuttingProxy]]:
    if not database_url.startswith("postgresql"):
        pytest.skip("connection drops are a PostgreSQL matter")
    url = make_url(database_url)
    proxy = CuttingProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.start()
    store = await open_store(url.set(port=proxy.port).render_as_string(hide_password=False))
    try:
        yield store, proxy
    finally:
        await store.close()
        await proxy.stop()


async def test_a_claim_whose_reply_was_lost_still_wins_its_keys(
    proxied: tuple[SqlStore, CuttingProxy],
):
    store, proxy = proxied
    claims = RequestClaims(store)
    # The message carrying the key runs the (autocommitted) claim; its reply is the one lost.
    proxy.cut_after(b"sig:LOSTREPLY")
    assert await claims.claim({"sig:LOSTREPLY": LATER}, now=T0) == {"sig:LOSTREPLY"}
    assert proxy.cuts == 1
    assert await RequestClaims(store).claim({"sig:LOSTREPLY": LATER}, now=T0) == set()


async def test_claims_waiting_together_share_one_statement(store: SqlStore):
    claims = RequestClaims(store)
    # Forty requests arrive at once: they go together.
    results = await asyncio.gather(*(claims.claim({f"sig:{i}": LATER}, now=T0) for i in range(40)))
    assert results == [{f"sig:{i}"} for i in range(40)]
    assert claims.claims == 40 and claims.statements == 1
    # One arriving while a statement is in flight waits for the next.
    first = asyncio.ensure_future(claims.claim({"sig:a": LATER}, now=T0))
    await asyncio.sleep(0)  # its statement is under way
    second = await asyncio.gather(*(claims.claim({f"sig:b{i}": LATER}, now=T0) for i in range(5)))
    assert await first == {"sig:a"} and second == [{f"sig:b{i}"} for i in range(5)]
    assert claims.statements == 3
    assert len(await rows(store)) == 46


async def test_a_batch_larger_than_a_statement_is_split(store: SqlStore):
    claims = RequestClaims(store, batch_keys=8)
    results = await asyncio.gather(
        *(claims.claim({f"sig:{i}": LATER, f"event:{i}": LATER}, now=T0) for i in range(12))
    )
    assert results == [{f"sig:{i}", f"event:{i}"} for i in range(12)]
    # Four requests (8 keys) to a statement.
    assert claims.statements == 3


async def test_the_same_key_twice_in_one_batch_goes_to_the_first_asker(store: SqlStore):
    claims = RequestClaims(store)
    first, second, third = await asyncio.gather(
        claims.claim({"sig:other": LATER}, now=T0),
        claims.claim({"sig:twice": LATER, "sig:a": LATER}, now=T0),
        claims.claim({"sig:twice": LATER, "sig:b": LATER}, now=T0),
    )
    assert claims.statements == 1
    assert (first, second, third) == ({"sig:other"}, {"sig:twice", "sig:a"}, {"sig:b"})


async def test_a_failed_batch_fails_its_askers_and_the_next_claims_work(store: SqlStore):
    claims = RequestClaims(store)
    real = claims._claim
    failing = [True]

    async def broken(*args: object) -> set[str]:
        if failing.pop() if failing else False:
            raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))
        return await real(*args)  # type: ignore[arg-type]

    claims._claim = broken  # type: ignore[method-assign]
    with pytest.raises(sa.exc.OperationalError):
        await claims.claim({"sig:lost": LATER}, now=T0)
    assert await claims.claim({"sig:lost": LATER}, now=T0) == {"sig:lost"}


async def test_a_held_key_reports_until_when_and_can_be_extended(store: SqlStore):
    claims = RequestClaims(store)
    assert await claims.held_until("event:E") is None
    won = await claims.claim({"event:E": T0 + timedelta(seconds=30)}, now=T0)
    assert await claims.held_until("event:E") == T0 + timedelta(seconds=30)
    await claims.extend("event:E", LATER, won.token)
    assert await claims.held_until("event:E") == LATER
    assert (
        await RequestClaims(store).claim({"event:E": LATER}, now=T0 + timedelta(minutes=1)) == set()
    )


async def test_a_replica_whose_lease_ran_out_leaves_the_new_claim_alone(
    store: SqlStore, other: SqlStore
):
    # The review's reproduction (on PostgreSQL): A won, B won after A's lease, and A's forget
    # then deleted B's claim.
    a, b = RequestClaims(store), RequestClaims(other)
    lease = T0 + timedelta(seconds=30)
    a_won = await a.claim({"event:E": lease}, now=T0)
    b_won = await b.claim({"event:E": LATER}, now=lease)
    assert a_won == b_won == {"event:E"} and a_won.token != b_won.token
    await a.forget(a_won)
    assert await b.held_until("event:E") == LATER
    await a.extend("event:E", LATER + timedelta(hours=1), a_won.token)
    assert await b.held_until("event:E") == LATER
    await b.extend("event:E", LATER + timedelta(minutes=10), b_won.token)
    assert await a.held_until("event:E") == LATER + timedelta(minutes=10)
    await b.forget(b_won)
    assert await a.held_until("event:E") is None


async def test_the_purge_does_not_hold_up_a_claim(store: SqlStore):
    claims = RequestClaims(store)
    await claims.claim({"sig:old": T0 + timedelta(seconds=30)}, now=T0)
    gate = asyncio.Event()
    real_purge = claims._purge

    async def slow_purge(now: datetime) -> None:
        await gate.wait()
        await real_purge(now)

    claims._purge = slow_purge  # type: ignore[method-assign]
    won = await asyncio.wait_for(
        claims.claim({"sig:new": T0 + PURGE_EVERY * 10}, now=T0 + PURGE_EVERY * 2), 10
    )
    assert won == {"sig:new"}  # answered while the purge waits
    assert "sig:old" in await rows(store)
    gate.set()
    await claims.idle()
    assert await rows(store) == ["sig:new"]
