"""A daily card the platform accepted just before its replica died is not posted again.

The replica that takes the slot over finds the round its predecessor opened without a message
reference; the platform is asked for that round's card (Slack: its message metadata in the
channel's history; Discord: the bot's messages, and the nonce it deduplicates), and only a card
it does not have is posted. The process tests run a replica as a process of its own, against a
stand-in that makes the card and never answers, and kill it with SIGKILL there.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import discord
import pytest

from bot.adapters.discord.app import configure_endpoints
from bot.adapters.discord.handlers import DiscordPort, card_nonce
from bot.adapters.slack.app import web_client
from bot.adapters.slack.handlers import CARD_EVENT, SlackPort
from bot.bank.loader import load_bank
from bot.chat import Publisher
from bot.engine import Place, QuizEngine
from bot.engine.model import QuestionCard
from bot.scheduler.daily import post_due
from bot.scheduler.port import ClaimKind, Schedule
from bot.storage import SqlStore, open_store
from tests.adapters.slack.conftest import BANK, make_settings
from tests.conftest import FakeClock
from tests.scheduler.conftest import RecordingPublisher
from tests.standins.discord_api import DiscordStandIn
from tests.standins.slack_api import SlackApiStandIn

ROOT = Path(__file__).resolve().parents[2]
MONDAY = datetime(2026, 3, 2, tzinfo=UTC)
NINE = MONDAY + timedelta(hours=9)
AFTER_THE_LEASE = NINE + timedelta(seconds=61)
SLOT = "2026-03-02"
WITHIN = 60.0  # seconds a process may take to start and post, on a busy machine


def engine_for(store: SqlStore, clock: FakeClock) -> QuizEngine:
    return QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(5))


async def dead_claimant(store: SqlStore, engine: QuizEngine, where: Place) -> int:
    """Lease the schedule, claim today's slot and open its round, as a replica does; return it."""
    await store.put_schedule(Schedule(where, 9, 0, "UTC", since=MONDAY))
    await store.claim_due(
        where.platform, now=NINE, claimant="dead", limit=5, lease=timedelta(seconds=60)
    )
    assert await store.claim_slot(
        where, ClaimKind.POST, SLOT, slot_at=NINE, claimant="dead", at=NINE
    )
    card = await engine.start_round(where, scheduled=True, slot=SLOT)
    return card.round_id


async def card_of(engine: QuizEngine, round_id: int) -> QuestionCard:
    rnd = await engine.get_round(round_id)
    return QuestionCard(rnd, await engine.question_of(rnd))


# ---------------------------------------------------------------- the tick's part


async def test_a_card_out_before_its_claimant_died_is_found_and_recorded(store: SqlStore) -> None:
    clock = FakeClock(NINE)
    engine = engine_for(store, clock)
    where = Place("slack", "T1", "C1")
    round_id = await dead_claimant(store, engine, where)
    publisher = RecordingPublisher()
    # The card reached the channel; its claimant died before it stored the reference.
    await publisher.post_card(await card_of(engine, round_id))
    clock.now = AFTER_THE_LEASE
    report = await post_due(engine, publisher, store, now=clock(), claimant="b")
    assert len(publisher.cards) == 1
    assert ("find", round_id) in publisher.events
    assert report.failed == 0
    rnd = await engine.open_round(where)
    assert rnd is not None and (rnd.id, rnd.message_ref) == (round_id, f"msg-{round_id}")
    assert await store.last_claim(where, ClaimKind.POST) == SLOT
    # Settled: the day is not posted again by anyone.
    again = await post_due(engine, publisher, store, now=clock(), claimant="c")
    assert again.posted == 0 and len(publisher.cards) == 1


async def test_a_card_that_never_went_out_is_posted_once_under_its_round(store: SqlStore) -> None:
    clock = FakeClock(NINE)
    engine = engine_for(store, clock)
    where = Place("slack", "T1", "C1")
    round_id = await dead_claimant(store, engine, where)
    clock.now = AFTER_THE_LEASE
    publisher = RecordingPublisher()
    report = await post_due(engine, publisher, store, now=clock(), claimant="b")
    assert report.posted == 1
    assert [c.round_id for c in publisher.cards] == [round_id]
    rnd = await engine.open_round(where)
    assert rnd is not None and rnd.message_ref == f"msg-{round_id}"


# ---------------------------------------------------------------- a replica killed mid-post


async def start_replica(platform: str, url: str, db: str, token: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.scheduler.replica",
        "--platform",
        platform,
        "--url",
        url,
        "--db",
        db,
        "--now",
        NINE.isoformat(),
        "--token",
        token,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(ROOT),
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), WITHIN)
    assert line.strip() == b"started", line
    return proc


async def kill(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGKILL)
    assert await asyncio.wait_for(proc.wait(), WITHIN) == -signal.SIGKILL


@contextlib.asynccontextmanager
async def killing(proc: asyncio.subprocess.Process) -> AsyncIterator[None]:
    try:
        yield
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_slack_a_replica_killed_after_its_card_was_made_leaves_one_card(
    database_url: str, tmp_path: Path
) -> None:
    standin = SlackApiStandIn()
    await standin.start()
    store = await open_store(database_url)
    where = Place("slack", "T0TEAM", "C0DAILY")
    try:
        await store.put_schedule(Schedule(where, 9, 0, "UTC", since=MONDAY))
        standin.lose_answer("chat.postMessage")
        proc = await start_replica("slack", standin.url, database_url, "xoxb-test")
        async with killing(proc):
            await standin.wait_calls("chat.postMessage", 1, within=WITHIN)
            await kill(proc)
        (made,) = standin.history[where.channel]
        assert made["metadata"]["event_type"] == CARD_EVENT
        rnd = await store.open_round(where)
        assert rnd is not None and rnd.message_ref is None  # the answer never reached it

        clock = FakeClock(AFTER_THE_LEASE)
        async with aiohttp.ClientSession() as http:
            port = SlackPort(web_client(make_settings(tmp_path, standin), http))
            publisher = Publisher(engine_for(store, clock), port)
            report = await post_due(publisher.engine, publisher, store, now=clock(), claimant="b")
        assert (report.posted, report.failed) == (0, 0)
    finally:
        await store.close()
        await standin.stop()
    # One card in the channel, found through the history with its metadata.
    assert [m["ts"] for m in standin.history[where.channel]] == [made["ts"]]
    (looked,) = standin.of("conversations.history")
    assert looked.params["channel"] == where.channel
    assert str(looked.params["include_all_metadata"]).lower() in ("1", "true")
    store = await open_store(database_url)
    try:
        rnd = await store.open_round(where)
        assert rnd is not None and rnd.message_ref == made["ts"]
        assert await store.last_claim(where, ClaimKind.POST) == SLOT
    finally:
        await store.close()


async def test_slack_without_the_history_scope_the_card_is_posted_again(tmp_path: Path) -> None:
    # An install from before channels:history: the look is refused, and the card goes out again
    # (the one case left where a channel can get the day's card twice), with a warning.
    standin = SlackApiStandIn(granted={"chat:write", "channels:join"})
    await standin.start()
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    where = Place("slack", "T0TEAM", "C0DAILY")
    try:
        clock = FakeClock(NINE)
        async with aiohttp.ClientSession() as http:
            port = SlackPort(web_client(make_settings(tmp_path, standin), http))
            publisher = Publisher(engine_for(store, clock), port)
            round_id = await dead_claimant(store, publisher.engine, where)
            clock.now = AFTER_THE_LEASE
            report = await post_due(publisher.engine, publisher, store, now=clock(), claimant="b")
    finally:
        await store.close()
        await standin.stop()
    assert report.posted == 1
    assert standin.refused == [("conversations.history", "missing_scope")]
    (card,) = [c for c in standin.of("chat.postMessage") if c.ok]
    assert card.params["metadata"]["event_payload"]["round"] == round_id


async def test_discord_a_replica_killed_after_its_card_was_made_leaves_one_card(
    database_url: str,
) -> None:
    async with DiscordStandIn() as api:
        store = await open_store(database_url)
        where = Place("discord", str(api.guild_id), str(api.channel_ids()[0]))
        try:
            await store.put_schedule(Schedule(where, 9, 0, "UTC", since=MONDAY))
            api.lose_answer("POST", r"^/channels/\d+/messages$")
            proc = await start_replica("discord", api.api_url, database_url, api.token)
            async with killing(proc):
                await api.wait_for(
                    lambda c: c.method == "POST" and c.path.endswith("/messages"), within=WITHIN
                )
                await kill(proc)
            (made,) = api.messages_in(int(where.channel))
            rnd = await store.open_round(where)
            assert rnd is not None and rnd.message_ref is None
            assert made["nonce"] == card_nonce(rnd.id)

            configure_endpoints(api.api_url, api.gateway_url)
            client = discord.Client(intents=discord.Intents.none())
            try:
                await client.login(api.token)
                clock = FakeClock(AFTER_THE_LEASE)
                publisher = Publisher(engine_for(store, clock), DiscordPort(client))
                report = await post_due(
                    publisher.engine, publisher, store, now=clock(), claimant="b"
                )
            finally:
                await client.close()
            assert (report.posted, report.failed) == (0, 0)
            rnd = await store.open_round(where)
            assert rnd is not None and rnd.message_ref == made["id"]
            assert await store.last_claim(where, ClaimKind.POST) == SLOT
        finally:
            await store.close()
        assert [m["id"] for m in api.messages_in(int(where.channel))] == [made["id"]]
        (looked,) = api.find("GET", r"^/channels/\d+/messages$")
        assert int(looked.query["after"]) > 0


@pytest.mark.parametrize("history", [True, False])
async def test_discord_a_card_made_again_with_its_nonce_is_the_first_one(
    tmp_path: Path, history: bool
) -> None:
    # Without Read Message History the look finds nothing; the card is created again with the
    # same nonce, and Discord answers with the message it made the first time.
    async with DiscordStandIn() as api:
        store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
        where = Place("discord", str(api.guild_id), str(api.channel_ids()[0]))
        if not history:
            api.refuse("GET", r"^/channels/\d+/messages$", status=403, code=50013)
        configure_endpoints(api.api_url, api.gateway_url)
        client = discord.Client(intents=discord.Intents.none())
        try:
            await client.login(api.token)
            clock = FakeClock(NINE)
            publisher = Publisher(engine_for(store, clock), DiscordPort(client))
            round_id = await dead_claimant(store, publisher.engine, where)
            card = await card_of(publisher.engine, round_id)
            first = await publisher.post_card(card)  # out, and its answer lost
            clock.now = AFTER_THE_LEASE
            report = await post_due(publisher.engine, publisher, store, now=clock(), claimant="b")
        finally:
            await client.close()
            await store.close()
        assert report.failed == 0
        assert [m["id"] for m in api.messages_in(int(where.channel))] == [first]
        created = api.find("POST", r"^/channels/\d+/messages$")
        assert len(created) == (1 if history else 2)
        assert {c.body["nonce"] for c in created} == {card_nonce(round_id)}
        assert all(c.body["enforce_nonce"] is True for c in created)
