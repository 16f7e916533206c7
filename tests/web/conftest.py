"""A dashboard served on port 0 over a real store and engine, with a little history in it."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.engine import Place, QuizEngine
from bot.engine.model import Difficulty
from bot.engine.ports import Days, Schedule
from bot.links import Scope
from bot.storage import SqlStore
from bot.web import Dashboard
from tests.conftest import FakeClock, SimpleBank, make_question

SECRET = "test-dashboard-secret-0123456789"
T1 = Place("slack", "T1", "C1")
T2 = Place("slack", "T2", "C9")

BANK = SimpleBank(
    [
        make_question("seed-q", difficulty=Difficulty.EASY),
        make_question("second-q", answer="B"),
        make_question("third-q", answer="C", difficulty=Difficulty.HARD),
    ]
)


@dataclass
class Site:
    client: TestClient
    dashboard: Dashboard
    engine: QuizEngine
    clock: FakeClock

    def link(self, place: Place, user: str, scope: Scope = Scope.WORKSPACE) -> str:
        """Return the path and query of a fresh link (the test client adds the host)."""
        url = self.dashboard.link(place, user, scope)
        return url[url.index("/dashboard") :]


def key_for(question, how: str) -> str:
    """Return the right key for "right", the first wrong one for "wrong", else ``how`` itself."""
    if how == "right":
        return str(question.answer)
    if how == "wrong":
        return next(k for k in question.keys if k != question.answer)
    return how


async def play(engine: QuizEngine, clock: FakeClock, place: Place, answers: dict[str, str]):
    """Post a scheduled round in ``place``, let each user answer ("right", "wrong"), close it."""
    card = await engine.start_round(place, scheduled=True)
    for user, how in answers.items():
        clock.advance(seconds=3)
        key = key_for(card.question, how)
        await engine.answer(place.platform, place.workspace, card.round.id, user, key)
    await engine.close(card.round.id)
    clock.advance(hours=20)
    return card


async def seed_history(store: SqlStore, engine: QuizEngine, clock: FakeClock) -> None:
    """Two rounds in T1 (alice right twice, bob once), one in T2 (mallory)."""
    await play(engine, clock, T1, {"alice": "right", "bob": "right", "carol": "wrong"})
    await play(engine, clock, T1, {"alice": "right", "bob": "wrong"})
    await play(engine, clock, T2, {"mallory": "right"})
    await store.put_schedule(
        Schedule(
            place=T1,
            hour=9,
            minute=30,
            zone="Europe/Paris",
            days=Days.WEEKDAYS,
            since=clock(),
            set_by="U0",
        )
    )


@pytest.fixture
async def site(store: SqlStore) -> AsyncIterator[Site]:
    clock = FakeClock()
    engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(7))
    await seed_history(store, engine, clock)
    dashboard = Dashboard(engine=engine, store=store, secret=SECRET, clock=clock)
    app = web.Application()
    dashboard.mount(app)
    async with TestClient(TestServer(app)) as client:
        yield Site(client, dashboard, engine, clock)


__all__ = ["BANK", "SECRET", "T1", "T2", "Site", "play", "timedelta"]
