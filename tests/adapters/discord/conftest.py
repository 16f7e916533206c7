"""Fixtures: the real discord.py client on a real engine and SQLite file, against the stand-in."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.discord.app import Gateway, QuizClient, configure_endpoints
from bot.bank.loader import load_bank
from bot.chat.runner import Loops, run
from bot.engine import QuizEngine
from bot.storage import open_store
from tests.standins.discord_api import EPHEMERAL, Call, DiscordStandIn

BANK = Path(__file__).parent / "bank"
MANAGE_GUILD = 1 << 5
OTHER_GUILD = 920_000_000_000_000_001


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
async def api() -> AsyncIterator[DiscordStandIn]:
    """A running stand-in with two servers, discord.py pointed at it."""
    async with DiscordStandIn(guild_ids=(910_000_000_000_000_001, OTHER_GUILD)) as standin:
        configure_endpoints(standin.api_url, standin.gateway_url)
        yield standin


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"


@asynccontextmanager
async def open_engine(db_url: str, clock: FakeClock) -> AsyncIterator[QuizEngine]:
    """Open a fresh store on the file and build an engine on the test bank."""
    store = await open_store(db_url)
    try:
        yield QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(0))
    finally:
        await store.close()


@pytest.fixture
async def engine(db_url: str, clock: FakeClock) -> AsyncIterator[QuizEngine]:
    async with open_engine(db_url, clock) as eng:
        yield eng


@asynccontextmanager
async def running(
    engine: QuizEngine, api: DiscordStandIn, **options: Any
) -> AsyncIterator[QuizClient]:
    """Run the bot on the stand-in through the chat runner; stop it (bounded) on the way out."""
    settings: dict[str, Any] = {"guild_ready_timeout": 0.01, "refresh_every": 30.0}
    settings.update(options)
    timer_interval = settings.pop("timer_interval", 0.1)
    scheduler_interval = settings.pop("scheduler_interval", 20.0)
    client = QuizClient(engine, **settings)
    loops = Loops(client.chat, timer_interval=timer_interval, scheduler_interval=scheduler_interval)
    stop = asyncio.Event()
    runner = asyncio.create_task(
        run(
            client.chat,
            Gateway(client, api.token),
            loops,
            store=engine.store,  # type: ignore[arg-type]
            shutdown_timeout=5,
            stop=stop,
        )
    )

    async def connected_and_ready() -> None:
        # wait_until_ready refuses a client not logged in yet, and the runner logs in only once
        # Discord answers: the stand-in's gateway connection comes after the login.
        await api.wait_connected(within=10)
        await client.wait_until_ready()

    ready = asyncio.create_task(connected_and_ready())
    try:
        done, _ = await asyncio.wait(
            {runner, ready}, timeout=10, return_when=asyncio.FIRST_COMPLETED
        )
        if runner in done:
            runner.result()
        assert ready in done, "the client did not become ready within 10 s"
        ready.result()
        yield client
    finally:
        ready.cancel()
        stop.set()
        await asyncio.wait_for(runner, timeout=10)


@pytest.fixture
async def bot(engine: QuizEngine, api: DiscordStandIn) -> AsyncIterator[QuizClient]:
    async with running(engine, api) as client:
        yield client


def content_of(call: Call) -> str:
    """Return the text of a callback, follow-up or message request."""
    body = call.body or {}
    data = body.get("data", body) if "type" in body else body
    return str(data.get("content") or "")


def is_ephemeral(call: Call) -> bool:
    body = call.body or {}
    data = body.get("data", body) if "type" in body else body
    return bool(int(data.get("flags") or 0) & EPHEMERAL)


async def post_card(
    api: DiscordStandIn,
    engine: QuizEngine,
    *,
    tag: str | None = None,
    channel: int | None = None,
) -> tuple[dict[str, Any], int]:
    """Run ``/quiz next``; return the card message and its round id once the round knows it."""
    options = {"tag": tag} if tag else {}
    payload = api.command("quiz", "next", options, channel=channel)
    call = await api.interact(payload)
    assert call.body["type"] == 4 and call.status == 200, (call.status, call.body)
    card = api.response_message(payload)
    custom_id = card["components"][0]["components"][0]["custom_id"]
    round_id = int(custom_id.split(":")[1])

    async def attached() -> bool:
        return (await engine.get_round(round_id)).message_ref == card["id"]

    await eventually(attached)
    return card, round_id


async def eventually(check: Callable[[], Awaitable[bool]], *, within: float = 5.0) -> None:
    """Wait until an async check holds (the bot may still be finishing after its reply)."""
    # The database has no change notification to wait on, so poll it, bounded.
    async with asyncio.timeout(within):
        while not await check():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Return every button of a message, row after row."""
    return [b for row in message["components"] for b in row["components"]]


def revealed(call: Call, message_id: int) -> bool:
    """Return whether a request is the edit that turns the card into its results."""
    if call.method != "PATCH" or not call.path.endswith(f"/messages/{message_id}"):
        return False
    return call.body["embeds"][0]["title"] == "Quiz question · closed"
