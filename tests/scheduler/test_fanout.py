"""Daily posts at fleet scale: due work only, replicas sharing it, leases taken over once."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import discord

from bot.adapters.discord.app import configure_endpoints
from bot.adapters.discord.handlers import DiscordPort
from bot.adapters.slack.app import web_client
from bot.adapters.slack.handlers import SlackPort
from bot.bank.loader import load_bank
from bot.chat import Publisher
from bot.engine import Place, QuizEngine
from bot.scheduler.daily import FanOut, post_due
from bot.scheduler.port import ClaimKind, Schedule, ScheduleState
from bot.storage import SqlStore, open_store
from bot.text import say
from tests.adapters.slack.conftest import BANK as SLACK_BANK
from tests.adapters.slack.conftest import make_settings
from tests.conftest import FakeClock, SimpleBank, make_question
from tests.scheduler.conftest import RecordingPublisher
from tests.standins.discord_api import DiscordLimits, DiscordStandIn
from tests.standins.slack_api import SlackApiStandIn, SlackLimits

MONDAY = datetime(2026, 3, 2, tzinfo=UTC)
NINE = MONDAY + timedelta(hours=9)
LEASE = timedelta(seconds=60)


def engine_for(store: SqlStore, clock: FakeClock) -> QuizEngine:
    bank = SimpleBank([make_question(f"q{i}", answer="A") for i in range(10)])
    return QuizEngine(store, bank, clock=clock, rng=random.Random(3))


def place(workspace: int, channel: int) -> Place:
    return Place("slack", f"T{workspace}", f"C{workspace}-{channel}")


async def schedule(store: SqlStore, where: Place, hour: int = 9) -> None:
    await store.put_schedule(Schedule(where, hour, 0, "UTC", since=MONDAY))


class CountingStore:
    """The store, with the schedules each tick was handed counted."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.handed: list[ScheduleState] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def claim_due(self, platform: str, **kw: object) -> list[ScheduleState]:
        states = await self.store.claim_due(platform, **kw)  # type: ignore[arg-type]
        self.handed += states
        return states

    async def schedule_states(self, platform: str) -> list[ScheduleState]:
        raise AssertionError("a tick reads only the due schedules")


async def test_a_tick_reads_only_due_schedules(store: SqlStore) -> None:
    clock = FakeClock(MONDAY)
    engine = engine_for(store, clock)
    publisher = RecordingPublisher()
    for w in range(5):
        for c in range(4):
            await schedule(store, place(w, c), hour=9 if (w, c) == (2, 1) else 17)
    counting = CountingStore(store)
    # The first tick after the schedules were set works out each one's next time.
    first = await post_due(engine, publisher, counting, now=clock(), claimant="a")  # type: ignore[arg-type]
    assert (first.posted, len(counting.handed)) == (0, 20)
    # Until 09:00 nothing is due, so nothing is read.
    counting.handed.clear()
    for minutes in (1, 60, 8 * 60 + 59):
        report = await post_due(
            engine,
            publisher,
            counting,  # type: ignore[arg-type]
            now=MONDAY + timedelta(minutes=minutes),
            claimant="a",
        )
        assert report.posted == 0
    assert counting.handed == []
    report = await post_due(engine, publisher, counting, now=NINE, claimant="a")  # type: ignore[arg-type]
    assert report.posted == 1
    assert [s.schedule.place for s in counting.handed] == [place(2, 1)]
    assert [c.round.place for c in publisher.cards] == [place(2, 1)]
    # Posted, it is due tomorrow: the same minute reads nothing again.
    counting.handed.clear()
    await post_due(engine, publisher, counting, now=NINE, claimant="a")  # type: ignore[arg-type]
    assert counting.handed == []


async def test_due_schedules_are_served_turn_by_turn_across_workspaces(store: SqlStore) -> None:
    for w in range(3):
        for c in range(3):
            await schedule(store, place(w, c))
    states = await store.claim_due("slack", now=NINE, claimant="a", limit=9, lease=LEASE)
    # Every workspace's first channel before any workspace's second.
    assert [s.schedule.place for s in states] == [place(w, c) for c in range(3) for w in range(3)]


async def test_two_schedulers_split_a_batch_with_no_double(store: SqlStore) -> None:
    clock = FakeClock(NINE)
    engine = engine_for(store, clock)
    everywhere = [place(w, c) for w in range(6) for c in range(5)]
    for where in everywhere:
        await schedule(store, where)
    # Two replicas claiming at once get different schedules.
    a, b = await asyncio.gather(
        store.claim_due("slack", now=NINE, claimant="a", limit=10, lease=LEASE),
        store.claim_due("slack", now=NINE, claimant="b", limit=10, lease=LEASE),
    )
    assert len(a) == len(b) == 10
    assert not {s.schedule.place for s in a} & {s.schedule.place for s in b}
    # Their leases run out unused; then both fan out over everything due at once.
    later = NINE + LEASE + timedelta(seconds=1)
    clock.now = later
    first, second = RecordingPublisher(), RecordingPublisher()
    small = FanOut(concurrency=4, per_workspace=1)
    reports = await asyncio.gather(
        post_due(engine, first, store, now=later, claimant="a", fan_out=small),
        post_due(engine, second, store, now=later, claimant="b", fan_out=small),
    )
    posted = [c.round.place for c in first.cards + second.cards]
    assert sorted(posted, key=str) == sorted(everywhere, key=str)  # each once, none twice
    assert first.cards and second.cards  # both did a share
    assert sum(r.posted for r in reports) == len(everywhere)


async def test_a_lease_is_taken_over_once_after_its_claimant_dies(store: SqlStore) -> None:
    clock = FakeClock(NINE)
    engine = engine_for(store, clock)
    where = place(1, 1)
    await schedule(store, where)
    # A replica leases the schedule, claims the slot, and dies before posting.
    [state] = await store.claim_due("slack", now=NINE, claimant="dead", limit=5, lease=LEASE)
    assert await store.claim_slot(
        where, ClaimKind.POST, "2026-03-02", slot_at=NINE, claimant="dead", at=NINE
    )
    publisher = RecordingPublisher()
    # While its lease holds, nobody else touches the schedule.
    half = NINE + LEASE / 2
    report = await post_due(engine, publisher, store, now=half, claimant="b")
    assert (report.posted, publisher.cards) == (0, [])
    # Once it has run out, exactly one of two replicas takes it over and posts.
    after = NINE + LEASE + timedelta(seconds=1)
    clock.now = after
    other = RecordingPublisher()
    reports = await asyncio.gather(
        post_due(engine, publisher, store, now=after, claimant="b"),
        post_due(engine, other, store, now=after, claimant="c"),
    )
    cards = publisher.cards + other.cards
    assert [c.round.slot for c in cards] == ["2026-03-02"]
    assert sum(r.posted for r in reports) == 1
    # The claim is settled under its new holder; the day does not post again.
    [state] = await store.schedule_states("slack")
    assert state.last_post == "2026-03-02"
    again = await post_due(engine, publisher, store, now=after, claimant="d")
    assert again.posted == 0 and len(publisher.cards + other.cards) == 1


async def test_a_taken_over_slot_whose_card_went_out_is_only_recorded(store: SqlStore) -> None:
    clock = FakeClock(NINE)
    engine = engine_for(store, clock)
    where = place(1, 1)
    await schedule(store, where)
    await store.claim_due("slack", now=NINE, claimant="dead", limit=5, lease=LEASE)
    await store.claim_slot(
        where, ClaimKind.POST, "2026-03-02", slot_at=NINE, claimant="dead", at=NINE
    )
    # It had posted the card and stored its reference, and died before settling the claim.
    card = await engine.start_round(where, scheduled=True, slot="2026-03-02")
    await engine.attach_message(card.round_id, "msg-1")
    after = NINE + LEASE + timedelta(seconds=1)
    clock.now = after
    publisher = RecordingPublisher()
    report = await post_due(engine, publisher, store, now=after, claimant="b")
    assert (report.posted, publisher.cards, publisher.reveals) == (0, [], [])
    assert (await engine.open_round(where)).id == card.round_id  # type: ignore[union-attr]
    assert await store.last_claim(where, ClaimKind.POST) == "2026-03-02"


async def test_slack_posts_in_one_channel_keep_a_second_apart_and_a_429_is_waited_out(
    tmp_path: Path,
) -> None:
    # The reveal's thread reply and the new card go to one channel: the publisher keeps each a
    # second after the one before, so the stand-in, which refuses a second message within a
    # second, answers none of them 429. A post of another process in between meets the limit
    # and slack_sdk's handler sends it again after the Retry-After.
    standin = SlackApiStandIn(limits=SlackLimits())
    await standin.start()
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    clock = FakeClock(NINE - timedelta(days=1))
    try:
        engine = QuizEngine(store, load_bank([SLACK_BANK]), clock=clock, rng=random.Random(0))
        where = Place("slack", "T0TEAM", "C1")
        await store.put_schedule(Schedule(where, 9, 0, "UTC", since=clock()))
        async with aiohttp.ClientSession() as http:
            client = web_client(make_settings(tmp_path, standin), http)
            publisher = Publisher(engine, SlackPort(client))
            for day in (0, 1):
                clock.now = NINE - timedelta(days=1 - day)
                report = await post_due(engine, publisher, store, now=clock(), claimant="a")
                assert (report.posted, report.failed) == (1, 0)
            assert standin.counts.get("429", 0) == 0
            other = Publisher(engine, SlackPort(client))  # another replica, its own gaps
            await other.post_text(where, say("from another replica"))
    finally:
        await store.close()
        await standin.stop()
    posts = standin.of("chat.postMessage")
    assert [bool(p.params.get("thread_ts")) for p in posts] == [False, True, False, False]
    assert standin.counts["429"] == 1 and posts[-1].ok


async def test_a_discord_post_past_the_global_limit_waits_out_retry_after(
    tmp_path: Path,
) -> None:
    limits = DiscordLimits(global_per_second=2)
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    clock = FakeClock(NINE)
    async with DiscordStandIn(limits=limits) as api:
        configure_endpoints(api.api_url, api.gateway_url)
        client = discord.Client(intents=discord.Intents.none())
        try:
            await client.login(api.token)
            engine = QuizEngine(store, load_bank([SLACK_BANK]), clock=clock, rng=random.Random(0))
            publisher = Publisher(engine, DiscordPort(client))
            wheres = [Place("discord", str(api.guild_id), str(c)) for c in api.channel_ids()]
            for where in wheres:
                await store.put_schedule(Schedule(where, 9, 0, "UTC", since=MONDAY))
            report = await post_due(engine, publisher, store, now=clock(), claimant="a")
        finally:
            await client.close()
            await store.close()
    # Two channels' cards and discord.py's start fit the first seconds only past a 429 or two.
    assert (report.posted, report.failed) == (len(wheres), 0)
    assert api.rate_limited >= 1
    posted = api.find("POST", r"^/channels/\d+/messages$")
    assert len(posted) == len(wheres)


async def test_a_lease_is_renewed_by_its_holder_only_and_lost_to_a_change(store: SqlStore) -> None:
    where = place(1, 1)
    await schedule(store, where)
    await store.claim_due("slack", now=NINE, claimant="a", limit=5, lease=LEASE)
    later = NINE + LEASE / 2
    assert await store.renew_leases("slack", [where], claimant="a", until=later + LEASE) == 1
    assert await store.renew_leases("slack", [where], claimant="b", until=later + LEASE) == 0
    # Renewed, it is not due for anyone else when the first lease would have run out.
    after = NINE + LEASE + timedelta(seconds=1)
    assert await store.claim_due("slack", now=after, claimant="b", limit=5, lease=LEASE) == []
    # The schedule replaced meanwhile: the holder's lease is gone, and what it gives back does
    # not overwrite the new schedule's time.
    await schedule(store, where, hour=10)
    tomorrow = NINE + timedelta(days=1)
    assert not await store.release_schedule(where, claimant="a", due_at=tomorrow)
    assert await store.renew_leases("slack", [where], claimant="a", until=after + LEASE) == 0
    [state] = await store.claim_due("slack", now=after, claimant="b", limit=5, lease=LEASE)
    assert state.schedule.hour == 10
