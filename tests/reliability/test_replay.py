"""Replays and redeliveries across two replicas of the real Bolt app on one database.

Each replica is the assembled app served over HTTP on port 0, with its own engine and store on
the same SQLite file, talking to one Slack stand-in. A spy middleware added after the app's own
tells which requests got past the replay guard to the listeners; it runs before Bolt answers,
so nothing here waits for something not to happen.
"""

from __future__ import annotations

import json
import random
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import aiosqlite
import pytest
import sqlalchemy as sa
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.adapters.slack._replay import ReplayGuard
from bot.adapters.slack.app import assemble, start_http, web_client
from bot.chat import Charts
from bot.engine import Place, QuizEngine
from bot.engine.loader import load_bank
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
    passed: list[dict[str, Any]] = field(default_factory=list)

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
                runner, port = await start_http(bot.app, "127.0.0.1", 0)
                runners.append(runner)
                replica = Replica(f"http://127.0.0.1:{port}/slack/events", engine)
                bot.app.middleware(replica.spy)
                replicas.append(replica)
            yield Pair(replicas[0], replicas[1], standin, session)
    finally:
        for bot in bots:
            await bot.publisher.aclose()
        for runner in runners:
            await runner.cleanup()
        for store in stores:
            await store.close()
        await standin.stop()


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
