"""Fixtures: the faulty Slack stand-in, and ``quizbot slack`` processes ended however tests end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from tests.adapters.slack.conftest import ADMIN, BANK, TEAM, charts, engine, slack, standin
from tests.reliability.harness import BotProcess, quizbot_env
from tests.reliability.standin import FaultyStandIn

StartBot = Callable[..., Awaitable[BotProcess]]
# The Slack adapter's fixtures (the Bolt app served in this process), for the tests here.
__all__ = ["charts", "engine", "slack", "standin"]


@pytest.fixture
async def faulty() -> AsyncIterator[FaultyStandIn]:
    """A running Slack stand-in that answers normally until a test sets its faults."""
    api = FaultyStandIn(team_id=TEAM, admins=[ADMIN])
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


@pytest.fixture
def bot_db(tmp_path: Path) -> str:
    """A SQLite file for the bot process (and the test, reading it back)."""
    return f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"


@pytest.fixture
async def start_bot(faulty: FaultyStandIn, bot_db: str) -> AsyncIterator[StartBot]:
    """Start ``quizbot slack`` processes on the stand-in and the database; end them all after."""
    started: list[BotProcess] = []

    async def start(**extra: str) -> BotProcess:
        bot = BotProcess(quizbot_env(faulty.url, bot_db, BANK, **extra))
        started.append(bot)
        await bot.start()
        return bot

    try:
        yield start
    finally:
        for bot in started:
            await bot.stop()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    """An HTTP client session without a connection limit."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as client:
        yield client
