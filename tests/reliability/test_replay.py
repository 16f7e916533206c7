"""Replays and redeliveries across two replicas of the real Bolt app on one database.

Each replica is the assembled app served over HTTP on port 0, with its own engine and store on
the same SQLite file, talking to one Slack stand-in. A spy middleware added after the app's own
tells which requests got past the replay guard to the listeners; it runs before Bolt answers,
so nothing here waits for something not to happen.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import aiosqlite
import pytest
import sqlalchemy as sa
from aiohttp import web
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.adapters.slack._replay import EVENT_LEASE, ReplayGuard
from bot.adapters.slack.app import SlackBot, assemble, start_http, web_client
from bot.bank.loader import load_bank
from bot.chat import Charts
from bot.engine import Place, QuizEngine
from bot.storage import RequestClaims, SqlStore, open_store
from bot.storage._schema import answers
from tests.adapters.slack.conftest import (
    BANK,
    CHANNEL,
    TEAM,
    block_actions,
    event_callback,
    make_settings,
    reaction,
    signed_headers,
)
from tests.conftest import FakeClock
from tests.standins.slack_api import SlackApiStandIn

FORM = "application/x-www-form-urlencoded"
PLACE = Place("slack", TEAM, CHANNEL)
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}


@dataclass
class Replica:
    """One served app, and the requests its guard let through."""

    url: str
    engine: QuizEngine
    bot: SlackBot
    passed: list[dict[str, Any]] = field(default_factory=list)
    # What happened, in order: "responded" as each HTTP answer starts out (and what Gate adds).
    order: list[str] = field(default_factory=list)

    def record_responses(self, app: web.Application) -> None:
        async def responded(_request: web.Request, _response: web.StreamResponse) -> None:
            self.order.append("responded")

        app.on_response_prepare.append(responded)

    async def spy(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        self.passed.append(req.body)
        return await next()


@dataclass
class Pair:
    a: Replica
    b: Replica
    standin: SlackApiStandIn
    session: aiohttp.ClientSession

    async def send(self, to: Replica, body: str, headers: dict[str, str]) -> int:
        async with self.session.post(
            to.url, data=body.encode(), headers=headers, timeout=aiohttp.ClientTimeout(10)
        ) as resp:
            await resp.read()
            return resp.status

    async def open_card(self) -> tuple[int, str]:
        """Open a round on replica a, posted as a card; return its id and message ts."""
        card = await self.a.engine.start_round(PLACE)
        ts = f"1700000000.{card.round_id:06d}"
        await self.a.engine.attach_message(card.round_id, ts)
        return card.round_id, ts

    async def stored(self) -> int:
        store = self.a.engine.store
        assert isinstance(store, SqlStore)
        async with store.read() as conn:
            return int(
                (await conn.execute(sa.select(sa.func.count()).select_from(answers))).scalar_one()
            )


@pytest.fixture
async def pair(tmp_path: Path, clock: FakeClock) -> AsyncIterator[Pair]:
    standin = SlackApiStandIn(team_id=TEAM, admins=[])
    await standin.start()
    stores: list[SqlStore] = []
    runners = []
    bots = []
    try:
        async with aiohttp.ClientSession() as session:
            replicas = []
            for _ in range(2):
                settings = make_settings(tmp_path, standin)
                store = await open_store(settings.database_url)
                stores.append(store)
                engine = QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(0))
                bot = assemble(
                    settings,
                    engine,
                    web_client(settings, session),
                    charts=Charts.load(),
                    refresh_every=0.05,
                )
                bots.append(bot)
                replica = Replica("", engine, bot)
                runner, port = await start_http(
                    bot.app, "127.0.0.1", 0, extra=replica.record_responses
                )
                runners.append(runner)
                replica.url = f"http://127.0.0.1:{port}/slack/events"
                bot.app.middleware(replica.spy)
                replicas.append(replica)
            yield Pair(replicas[0], replicas[1], standin, session)
    finally:
        for bot in bots:
            # A flow still running (a close's thread reply) would otherwise be cancelled when
            # the loop ends: in the middle of a store call, that leaves its connection unclosed.
            assert await bot.chat.drain.wait(10), "a handler was still running after 10 s"
        for runner in runners:
            await runner.cleanup()
        for bot in bots:
            await bot.settle()
        for store in stores:
            await store.close()
        await standin.stop()


class Gate:
    """Hold a replica's answer commits: each waits at the gate, shut until ``open``.

    It records "entered" when an answer reaches the store and "committed" when the store
    returns, in the replica's order beside its HTTP answers.
    """

    def __init__(self, replica: Replica, *, fail: int = 0) -> None:
        store = replica.engine.store
        assert isinstance(store, SqlStore)
        real = store.record_answer
        self.entered = asyncio.Event()
        self.committed = asyncio.Event()
        self._open = asyncio.Event()
        self.failures = fail

        async def gated(*args: Any, **kwargs: Any) -> Any:
            replica.order.append("entered")
            self.entered.set()
            await self._open.wait()
            if self.failures:
                self.failures -= 1
                raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))
            result = await real(*args, **kwargs)
            replica.order.append("committed")
            self.committed.set()
            return result

        store.record_answer = gated  # type: ignore[method-assign]

    def open(self) -> None:
        self._open.set()


async def settled(replica: Replica) -> None:
    """Wait until the replica's guard has written what it remembers of its events."""
    guard = replica.bot.guard
    assert guard is not None
    await guard.settle()


def redelivery(body: str, n: int) -> dict[str, str]:
    """Return the headers of Slack's n-th redelivery of an event: signed afresh, marked."""
    return {
        "Content-Type": "application/json",
        **signed_headers(body, timestamp=int(time.time()) + n),
        **RETRY,
    }


def click(round_id: int, user: str) -> str:
    return urllib.parse.urlencode({"payload": json.dumps(block_actions(round_id, "A", user=user))})


async def test_a_click_replayed_to_the_other_replica_is_refused(pair: Pair):
    round_id, _ts = await pair.open_card()
    body = click(round_id, "U1")
    headers = {"Content-Type": FORM, **signed_headers(body)}
    assert await pair.send(pair.a, body, headers) == 200
    await pair.standin.wait_calls("chat.postEphemeral")
    assert await pair.send(pair.b, body, headers) == 401
    # The header Slack puts on its redeliveries is not signed: adding it changes nothing.
    assert await pair.send(pair.b, body, {**headers, **RETRY}) == 401
    assert await pair.send(pair.a, body, {**headers, **RETRY}) == 401
    assert (len(pair.a.passed), len(pair.b.passed)) == (1, 0)
    assert await pair.stored() == 1
    assert len(pair.standin.of("chat.postEphemeral")) == 1


async def test_a_command_replayed_to_the_other_replica_cannot_close_a_newer_round(pair: Pair):
    first, _ts = await pair.open_card()
    form = {
        "team_id": TEAM,
        "channel_id": CHANNEL,
        "user_id": "U1",
        "command": "/quiz",
        "text": "close",
        "response_url": pair.standin.response_url("close"),
        "trigger_id": "t",
    }
    body = urllib.parse.urlencode(form)
    headers = {"Content-Type": FORM, **signed_headers(body)}
    assert await pair.send(pair.a, body, headers) == 200
    await pair.standin.wait_calls("chat.update")  # the card shows the reveal
    assert (await pair.a.engine.get_round(first)).is_closed
    newer, _ts = await pair.open_card()
    assert await pair.send(pair.b, body, headers) == 401
    assert not (await pair.b.engine.get_round(newer)).is_closed
    assert len(pair.b.passed) == 0


async def test_a_redelivered_event_is_counted_once_whichever_replica_gets_it(pair: Pair):
    _round_id, ts = await pair.open_card()
    body = json.dumps(event_callback(reaction("U5", "one", ts), event_id="EvTwice"))
    first = {"Content-Type": "application/json", **signed_headers(body)}
    assert await pair.send(pair.a, body, first) == 200
    await pair.standin.wait_calls("chat.postEphemeral")
    await settled(pair.a)
    # Slack signs each delivery afresh; a redelivery has its own timestamp and signature.
    for n, replica in enumerate((pair.b, pair.a), start=1):
        again = signed_headers(body, timestamp=int(time.time()) + n)
        assert again["X-Slack-Signature"] != first["X-Slack-Signature"]
        headers = {"Content-Type": "application/json", **again, **RETRY}
        assert await pair.send(replica, body, headers) == 200
    assert (len(pair.a.passed), len(pair.b.passed)) == (1, 0)
    assert await pair.stored() == 1
    assert len(pair.standin.of("chat.postEphemeral")) == 1


async def test_a_captured_event_replayed_with_the_retry_header_is_refused(pair: Pair):
    _round_id, ts = await pair.open_card()
    body = json.dumps(event_callback(reaction("U6", "two", ts), event_id="EvCaptured"))
    headers = {"Content-Type": "application/json", **signed_headers(body)}
    assert await pair.send(pair.a, body, headers) == 200
    await pair.standin.wait_calls("chat.postEphemeral")
    for replica in (pair.a, pair.b):
        assert await pair.send(replica, body, {**headers, **RETRY}) == 401
    assert (len(pair.a.passed), len(pair.b.passed)) == (1, 0)
    assert await pair.stored() == 1


async def test_a_different_event_from_the_same_user_is_handled(pair: Pair):
    # Two events are two events: only the same event_id is a redelivery.
    _round_id, ts = await pair.open_card()
    for n, (replica, name) in enumerate(((pair.a, "one"), (pair.b, "two")), start=1):
        body = json.dumps(event_callback(reaction("U7", name, ts), event_id=f"EvOwn{n}"))
        headers = {"Content-Type": "application/json", **signed_headers(body)}
        assert await pair.send(replica, body, headers) == 200
    assert (len(pair.a.passed), len(pair.b.passed)) == (1, 1)
    # The second is a second answer of the same user: told "already answered".
    await pair.standin.wait_calls("chat.postEphemeral", 2)
    assert await pair.stored() == 1


async def test_a_check_too_slow_refuses_the_request_and_gives_its_keys_back(
    tmp_path: Path, clock: FakeClock
):
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'slow.db'}")
    try:
        guard = ReplayGuard(RequestClaims(store), claim_deadline=0.05, utc_clock=clock)
        body = json.dumps(event_callback(reaction("U1", "one", "1.2"), event_id="EvSlow"))
        handled: list[str] = []

        async def listeners() -> BoltResponse:
            handled.append("handled")
            return BoltResponse(status=200, body="")

        def delivery(n: int) -> AsyncBoltRequest:
            headers = signed_headers(body, timestamp=int(time.time()) + n)
            return AsyncBoltRequest(body=body, headers=headers, mode="http")

        async with aiosqlite.connect(tmp_path / "slow.db") as db:
            await db.execute("BEGIN IMMEDIATE")  # the database stalls past the deadline
            response = await guard.middleware(delivery(0), listeners)
            assert response.status == 503 and handled == []
            await db.rollback()
        await guard.settle()
        # Slack redelivers the refused event: it was never handled, so now it is.
        response = await guard.middleware(delivery(1), listeners)
        assert response.status == 200 and handled == ["handled"]
    finally:
        await store.close()


class SlowLeaseRead(RequestClaims):
    """Claims whose read of another replica's lease waits for ``release``: a stalled database."""

    def __init__(self, store: SqlStore) -> None:
        super().__init__(store)
        self.release = asyncio.Event()
        self.done = asyncio.Event()
        self.read: list[datetime | None] = []

    async def held_until(self, key: str) -> datetime | None:
        await self.release.wait()
        until = await super().held_until(key)
        self.read.append(until)
        self.done.set()
        return until


async def test_a_lease_read_too_slow_is_told_to_come_back_and_is_not_cancelled(
    tmp_path: Path, clock: FakeClock
):
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'lease.db'}")
    try:
        body = json.dumps(event_callback(reaction("U1", "one", "1.2"), event_id="EvHeld"))
        # Another replica holds the event's lease: it is handling it now.
        held = clock() + timedelta(seconds=EVENT_LEASE)
        assert await RequestClaims(store).claim({"event:A0APP:EvHeld": held}, now=clock())
        claims = SlowLeaseRead(store)
        guard = ReplayGuard(claims, claim_deadline=0.05, utc_clock=clock)
        handled: list[str] = []

        async def listeners() -> BoltResponse:
            handled.append("handled")
            return BoltResponse(status=200, body="")

        headers = signed_headers(body, timestamp=int(time.time()))
        request = AsyncBoltRequest(body=body, headers=headers, mode="http")
        response = await guard.middleware(request, listeners)
        assert response.status == 503 and handled == []  # come back later
        # The read given up on still finishes, and its connection goes back to the pool.
        claims.release.set()
        await asyncio.wait_for(claims.done.wait(), 10)
        assert claims.read == [held]
        assert store.engine.pool.checkedout() == 0
    finally:
        await store.close()


async def test_a_reaction_is_acknowledged_only_once_its_answer_is_committed(pair: Pair):
    _round_id, ts = await pair.open_card()
    gate = Gate(pair.a)
    body = json.dumps(event_callback(reaction("U8", "one", ts), event_id="EvDurable"))
    headers = {"Content-Type": "application/json", **signed_headers(body)}
    sending = asyncio.create_task(pair.send(pair.a, body, headers))
    await gate.entered.wait()  # the answer is at the store, held
    gate.open()
    assert await sending == 200
    # The event's HTTP answer started only after the commit.
    assert pair.a.order == ["entered", "committed", "responded"]
    assert await pair.stored() == 1
    (told,) = await pair.standin.wait_calls("chat.postEphemeral")
    assert told.params["user"] == "U8"


async def test_a_reaction_committed_late_is_redelivered_and_counted_once(pair: Pair):
    _round_id, ts = await pair.open_card()
    pair.a.bot.handlers.answer_deadline = 0.05
    gate = Gate(pair.a)
    body = json.dumps(event_callback(reaction("U9", "two", ts), event_id="EvLate"))
    headers = {"Content-Type": "application/json", **signed_headers(body)}
    # Past the deadline with the answer still held: not acknowledged, so Slack redelivers.
    assert await pair.send(pair.a, body, headers) == 503
    # The answer reaches the store (on a loaded machine, after the 503) and is held there.
    await asyncio.wait_for(gate.entered.wait(), 10)
    assert not gate.committed.is_set()
    # Redeliveries while it is still being handled are told to come back, on either replica.
    assert await pair.send(pair.b, body, redelivery(body, 1)) == 503
    assert await pair.send(pair.a, body, redelivery(body, 2)) == 503
    gate.open()
    await gate.committed.wait()
    (told,) = await pair.standin.wait_calls("chat.postEphemeral")
    assert told.params["user"] == "U9"
    await settled(pair.a)
    # Settled now: the next redelivery is acknowledged and not handled again, on either.
    assert await pair.send(pair.b, body, redelivery(body, 3)) == 200
    assert await pair.send(pair.a, body, redelivery(body, 4)) == 200
    assert (len(pair.a.passed), len(pair.b.passed)) == (1, 0)
    assert await pair.stored() == 1
    assert len(pair.standin.of("chat.postEphemeral")) == 1


async def test_a_reaction_whose_commit_failed_is_handled_when_redelivered(pair: Pair):
    _round_id, ts = await pair.open_card()
    gate = Gate(pair.a, fail=1)
    gate.open()
    body = json.dumps(event_callback(reaction("U10", "one", ts), event_id="EvFailed"))
    headers = {"Content-Type": "application/json", **signed_headers(body)}
    assert await pair.send(pair.a, body, headers) == 503
    assert await pair.stored() == 0
    (apology,) = await pair.standin.wait_calls("chat.postEphemeral")
    assert "went wrong" in apology.params["text"].lower()
    await settled(pair.a)  # the failed event's id is given back
    assert await pair.send(pair.b, body, redelivery(body, 1)) == 200
    assert len(pair.b.passed) == 1
    assert await pair.stored() == 1
    await pair.standin.wait_calls("chat.postEphemeral", 2)


async def test_an_event_whose_replica_died_is_handled_once_its_lease_ends(
    pair: Pair, clock: FakeClock
):
    _round_id, ts = await pair.open_card()
    body = json.dumps(event_callback(reaction("U11", "one", ts), event_id="EvOrphan"))
    store = pair.b.engine.store
    assert isinstance(store, SqlStore)
    # A replica took the event's lease and died before settling it.
    key = f"event:{json.loads(body)['api_app_id']}:EvOrphan"
    lease = timedelta(seconds=EVENT_LEASE)
    assert await RequestClaims(store).claim({key: clock() + lease}, now=clock()) == {key}
    assert await pair.send(pair.b, body, redelivery(body, 1)) == 503
    clock.advance(seconds=EVENT_LEASE + 1)
    assert await pair.send(pair.b, body, redelivery(body, 2)) == 200
    assert len(pair.b.passed) == 1
    assert await pair.stored() == 1


async def test_a_click_is_acknowledged_without_waiting_for_its_feedback(pair: Pair):
    round_id, _ts = await pair.open_card()
    release = pair.standin.hold("chat.postEphemeral")
    body = click(round_id, "U12")
    try:
        # The ack follows the commit; the feedback, held at Slack, comes after it.
        assert await pair.send(pair.a, body, {"Content-Type": FORM, **signed_headers(body)}) == 200
        assert await pair.stored() == 1
        await pair.standin.wait_arrived("chat.postEphemeral")
        assert pair.standin.of("chat.postEphemeral") == []
    finally:
        release.set()
    (told,) = await pair.standin.wait_calls("chat.postEphemeral")
    assert told.params["user"] == "U12"
