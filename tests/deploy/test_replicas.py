"""Two real ``quizbot slack`` replicas on one PostgreSQL database, with nothing else shared.

Clicks, double clicks, closes and timers are spread over both processes at once; every state
change must still happen exactly once. The second test kills one replica with SIGKILL in the
middle of the load: every answer whose feedback reached the user is stored, and the survivor
closes the rounds whose timers the dead one would have run.

Run with ``-s`` to see the figures (the README quotes them).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import statistics
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
import sqlalchemy as sa

from bot.engine import Place
from bot.scheduler.port import Schedule
from bot.storage import SqlStore, open_store
from bot.storage._schema import answers, rounds, slot_claims
from tests.adapters.slack.conftest import BANK, SECRET, TEAM, Sender, round_of
from tests.conftest import PG_URL, _create_pg_database, _drop_pg_database
from tests.deploy.processes import SlackProcess, bot_env
from tests.reliability.harness import handlers_in_flight, loop_passes, passes_done
from tests.standins.slack_api import SlackApiStandIn

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(
        not PG_URL, reason="QUIZBOT_TEST_DATABASE_URL is not set: replicas need PostgreSQL"
    ),
]

CHANNELS = [f"C0REP{n:02d}" for n in range(6)]
USERS = [f"U{n:03d}" for n in range(50)]
CONCURRENCY = 24


@dataclass
class Load:
    """Clicks sent and what came back."""

    acks: list[float] = field(default_factory=list)
    acked: set[tuple[str, str]] = field(default_factory=set)
    per_replica: Counter[str] = field(default_factory=Counter)
    refused: int = 0

    def figures(self) -> dict[str, float]:
        ordered = sorted(self.acks)
        return {
            "acked": len(ordered),
            "p50_ms": round(1000 * statistics.median(ordered), 1),
            "p99_ms": round(1000 * ordered[int(0.99 * (len(ordered) - 1))], 1),
            "max_ms": round(1000 * ordered[-1], 1),
        }


@pytest.fixture
async def pg_database() -> AsyncIterator[str]:
    assert PG_URL is not None
    name, url = await _create_pg_database(PG_URL)
    try:
        yield url
    finally:
        await _drop_pg_database(PG_URL, name)


@pytest.fixture
async def standin() -> AsyncIterator[SlackApiStandIn]:
    s = SlackApiStandIn()
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


def replica_env(pg_database: str, standin: SlackApiStandIn) -> dict[str, str]:
    return bot_env(
        SLACK_BOT_TOKEN="xoxb-replicas",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=standin.url,
        QUIZBOT_DATABASE_URL=pg_database,
        QUIZBOT_QUESTIONS=str(BANK),
        QUIZBOT_DB_POOL_SIZE="4",
        QUIZBOT_DB_MAX_OVERFLOW="4",
    )


@pytest.fixture
async def replicas(pg_database: str, standin: SlackApiStandIn) -> AsyncIterator[list[SlackProcess]]:
    env = replica_env(pg_database, standin)
    procs = [SlackProcess(env, name="replica-a"), SlackProcess(env, name="replica-b")]
    try:
        # Both start at once: their migrations race and the advisory lock lets one through.
        await asyncio.gather(*(p.start() for p in procs))
        yield procs
    finally:
        for p in procs:
            await p.close()


@pytest.fixture
async def db(pg_database: str, replicas: list[SlackProcess]) -> AsyncIterator[SqlStore]:
    store = await open_store(pg_database, migrate=False)
    try:
        yield store
    finally:
        await store.close()


async def open_rounds(senders: list[Sender], standin: SlackApiStandIn) -> dict[str, int]:
    """Post one question per channel, alternating replicas; return channel -> round id."""
    found: dict[str, int] = {}
    for n, channel in enumerate(CHANNELS):
        before = len(standin.of("chat.postMessage"))
        reply = await senders[n % 2].command("next", channel=channel, respond_to=f"next-{channel}")
        assert reply.status == 200
        calls = await standin.wait_calls("chat.postMessage", before + 1, within=15)
        card = calls[before]
        assert card.params["channel"] == channel
        found[channel] = round_of(card.params["blocks"])
    return found


async def click_all(
    senders: list[Sender],
    clicks: list[tuple[str, int, str, str]],
    load: Load,
    *,
    on_progress: asyncio.Event | None = None,
) -> None:
    """Send every click, spread over the replicas, a bounded number at a time."""
    gate = asyncio.Semaphore(CONCURRENCY)
    sent = itertools.count(1)

    async def one(index: int, channel: str, round_id: int, user: str, key: str) -> None:
        target = senders[index % 2]
        async with gate:
            started = time.perf_counter()
            try:
                reply = await target.click(
                    round_id, key, user=user, channel=channel, respond_to=f"{channel}-{user}"
                )
            except aiohttp.ClientError:
                load.refused += 1  # the replica is gone: this click was never acknowledged
                return
            finally:
                if on_progress is not None and next(sent) == len(clicks) // 2:
                    on_progress.set()
            if reply.status == 200:
                load.acks.append(time.perf_counter() - started)
                load.acked.add((channel, user))
                load.per_replica[target.url] += 1
            else:
                load.refused += 1

    await asyncio.gather(*(one(i, *c) for i, c in enumerate(clicks)))


def feedback(standin: SlackApiStandIn) -> dict[tuple[str, str], list[str]]:
    """Return the private replies, by (channel, user), in the order they arrived."""
    told: dict[tuple[str, str], list[str]] = {}
    for call in standin.of("chat.postEphemeral"):
        key = (str(call.params["channel"]), str(call.params["user"]))
        told.setdefault(key, []).append(str(call.params["text"]))
    return told


def reveals(standin: SlackApiStandIn) -> Counter[str]:
    """Return how many thread replies (reveals) each channel got."""
    return Counter(
        str(c.params["channel"])
        for c in standin.of("chat.postMessage")
        if c.params.get("thread_ts")
    )


async def stored(db: SqlStore) -> dict[int, dict[str, str]]:
    async with db.read() as conn:
        rows = await conn.execute(
            sa.select(answers.c.round_id, answers.c.user_id, answers.c.choice)
        )
        out: dict[int, dict[str, str]] = {}
        for rid, user, choice in rows:
            assert user not in out.setdefault(rid, {}), "two answers for one (round, user)"
            out[rid][user] = choice
    return out


async def expire(db: SqlStore, round_ids: list[int], *, after: timedelta) -> None:
    """Move these rounds' timers to ``after`` from now (a short round, without waiting minutes)."""
    async with db.write() as conn:
        await conn.execute(
            rounds.update()
            .where(rounds.c.id.in_(round_ids))
            .values(closes_at=datetime.now(UTC) + after)
        )


async def settled(session: aiohttp.ClientSession, procs: list[SlackProcess]) -> None:
    """Wait for a whole timer pass more on each replica, then for no handler in flight.

    A handler keeps working after its ack (the feedback, the card update): once none is left
    in either process and the timers passed once more, nothing more can reach the stand-in.
    """
    await asyncio.gather(*(loop_passes(session, p, "timers", 1) for p in procs))
    async with asyncio.timeout(60):
        for p in procs:
            while True:
                if await handlers_in_flight(session, p) == 0:
                    break
                await asyncio.sleep(0.05)


async def test_two_replicas_share_one_database_exactly_once(
    replicas: list[SlackProcess], standin: SlackApiStandIn, db: SqlStore
):
    rng = random.Random(4)
    async with aiohttp.ClientSession() as session:
        senders = [Sender(standin=standin, session=session, url=p.events_url) for p in replicas]
        opened = await open_rounds(senders, standin)

        # Every user clicks twice in every channel, the two clicks on different replicas at once.
        clicks = [
            (channel, rid, user, rng.choice("ABC"))
            for channel, rid in opened.items()
            for user in USERS
            for _ in range(2)
        ]
        load = Load()
        started = time.perf_counter()
        await click_all(senders, clicks, load)
        seconds = time.perf_counter() - started
        assert load.refused == 0 and len(load.acks) == len(clicks)
        try:
            await standin.wait_calls("chat.postEphemeral", len(clicks), within=60)
        except TimeoutError:
            raise AssertionError(
                f"{standin.counts} refused={load.refused}\n"
                + "\n".join(p.log()[-3000:] for p in replicas)
            ) from None

        # Half the rounds are closed by hand on both replicas at once; the other half by the
        # timers of both replicas, which race for the same due rounds.
        by_hand, by_timer = CHANNELS[::2], CHANNELS[1::2]
        await expire(db, [opened[c] for c in by_timer], after=timedelta(seconds=-1))
        closes = [
            s.command("close", channel=c, respond_to=f"close-{c}-{i}")
            for c in by_hand
            for i, s in enumerate(senders)
        ]
        assert {r.status for r in await asyncio.gather(*closes)} == {200}
        await standin.wait_for(lambda: sum(reveals(standin).values()) >= len(CHANNELS), within=30)
        # A whole timer pass more on each replica (the race for due rounds, and any reveal left
        # unposted), and no handler still sending: any second reveal or reply would be here now.
        await settled(session, replicas)

    # Exactly one answer per (round, user), the first of the two clicks to commit.
    saved = await stored(db)
    assert {rid: set(users) for rid, users in saved.items()} == {
        rid: set(USERS) for rid in opened.values()
    }
    # Each user heard once that the answer counted and once that it was already in.
    told = feedback(standin)
    for channel, rid in opened.items():
        for user in USERS:
            texts = told[(channel, user)]
            assert len(texts) == 2
            already = [t for t in texts if "already answered" in t]
            assert len(already) == 1, texts
            assert f"*{saved[rid][user]}" in already[0]
    # One reveal per round, whoever closed it; every round closed once.
    assert reveals(standin) == Counter(dict.fromkeys(CHANNELS, 1))
    async with db.read() as conn:
        closed = (await conn.execute(sa.select(rounds.c.id, rounds.c.closed_at))).all()
    assert len(closed) == len(CHANNELS) and all(at is not None for _, at in closed)
    # Both replicas took their share of the clicks.
    assert sorted(load.per_replica.values()) == [len(clicks) // 2] * 2

    figures = {
        "replicas": 2,
        "channels": len(CHANNELS),
        "users": len(USERS),
        "clicks": len(clicks),
        "seconds": round(seconds, 2),
        "clicks_per_s": round(len(clicks) / seconds, 1),
        **load.figures(),
        "answers_stored": sum(len(u) for u in saved.values()),
        "reveals": sum(reveals(standin).values()),
    }
    print("\nreplica test:", json.dumps(figures))


async def test_a_replica_killed_mid_load_loses_no_acknowledged_feedback(
    replicas: list[SlackProcess], standin: SlackApiStandIn, db: SqlStore
):
    rng = random.Random(9)
    victim, survivor = replicas
    async with aiohttp.ClientSession() as session:
        senders = [Sender(standin=standin, session=session, url=p.events_url) for p in replicas]
        opened = await open_rounds(senders, standin)
        # Short rounds: their timers fall due a few seconds after the victim is gone.
        await expire(db, list(opened.values()), after=timedelta(seconds=8))
        clicks = [
            (channel, rid, user, rng.choice("ABC"))
            for channel, rid in opened.items()
            for user in USERS
        ]
        load = Load()
        halfway = asyncio.Event()
        clicking = asyncio.create_task(click_all(senders, clicks, load, on_progress=halfway))
        await asyncio.wait_for(halfway.wait(), 60)
        assert await victim.kill() == -9
        await asyncio.wait_for(clicking, 60)
        await standin.wait_for(lambda: sum(reveals(standin).values()) >= len(CHANNELS), within=30)
        # The survivor's last feedback is out and a whole timer pass more found nothing to reveal.
        await settled(session, [survivor])

    saved = await stored(db)
    told = feedback(standin)
    # Feedback on a stored answer (not "already answered", not "this question is closed").
    counted = {
        (channel, user): text
        for (channel, user), texts in told.items()
        for text in texts
        if "*Right!*" in text or "*Not this time.*" in text
    }
    # Every answer whose feedback was sent is in the database, with the choice it named.
    for channel, rid in opened.items():
        for user in USERS:
            text = counted.get((channel, user))
            if text is not None:
                assert user in saved.get(rid, {}), (channel, user)
                assert f"*{saved[rid][user]}" in text, (saved[rid][user], text)
    # The clicks the survivor acknowledged all got their feedback.
    assert len(counted) >= load.per_replica[senders[1].url]
    # The survivor closed every round, the dead replica's included, each once.
    assert reveals(standin) == Counter(dict.fromkeys(CHANNELS, 1))
    assert await survivor.terminate() == 0, survivor.log()
    print(
        "\nkill -9 test:",
        json.dumps(
            {
                "clicks": len(clicks),
                "acked": len(load.acks),
                "refused_after_kill": load.refused,
                "feedback_sent": len(counted),
                "acked_and_stored": sum(
                    user in saved.get(opened[channel], {}) for channel, user in load.acked
                ),
                "answers_stored": sum(len(u) for u in saved.values()),
                "reveals": sum(reveals(standin).values()),
            }
        ),
    )


async def test_a_scheduled_slot_is_posted_once_by_two_replicas(
    pg_database: str, standin: SlackApiStandIn
):
    # The schedule exists before the replicas start, so their first scheduler passes, made at
    # start-up within moments of each other, race for today's slot (missed 10 minutes ago).
    store = await open_store(pg_database)
    place = Place("slack", TEAM, "C0SCHED")
    slot_at = datetime.now(UTC) - timedelta(minutes=10)
    await store.put_schedule(
        Schedule(
            place=place,
            hour=slot_at.hour,
            minute=slot_at.minute,
            zone="UTC",
            since=slot_at - timedelta(days=1),
            set_by="UADMIN",
        )
    )
    env = replica_env(pg_database, standin)
    procs = [SlackProcess(env, name="replica-a"), SlackProcess(env, name="replica-b")]
    try:
        await asyncio.gather(*(p.start() for p in procs))

        def cards() -> list:
            return [
                c
                for c in standin.of("chat.postMessage")
                if c.params["channel"] == place.channel and not c.params.get("thread_ts")
            ]

        await standin.wait_for(lambda: len(cards()) >= 1, within=30)
        # Both first passes, the racing ones, are over (each awaits its post): a second is in.
        async with aiohttp.ClientSession() as session, asyncio.timeout(30):
            for p in procs:
                while True:
                    if await passes_done(session, p, "scheduler") >= 1:
                        break
                    await asyncio.sleep(0.05)
        assert len(cards()) == 1
        async with store.read() as conn:
            claims = (
                await conn.execute(
                    sa.select(slot_claims.c.claimant, slot_claims.c.outcome).where(
                        slot_claims.c.channel == place.channel
                    )
                )
            ).all()
        [(claimant, outcome)] = claims
        async with store.read() as conn:
            [(scheduled,)] = (
                await conn.execute(sa.select(rounds.c.id).where(rounds.c.scheduled.is_(True)))
            ).all()
        assert outcome is not None and claimant
        assert round_of(cards()[0].params["blocks"]) == scheduled
        assert f"Posted late: this daily question was due at {slot_at:%H:%M} UTC" in str(
            cards()[0].params["blocks"]
        )
        for p in procs:
            assert await p.terminate() == 0, p.log()
    finally:
        for p in procs:
            await p.close()
        await store.close()
