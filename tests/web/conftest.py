"""A dashboard served on port 0 over a real store and engine, with a little history in it."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.bank.bank import QuestionBank
from bot.bank.workspace import WorkspaceBanks
from bot.engine import Place, QuizEngine
from bot.engine.model import Difficulty, Question, Reference
from bot.engine.names import NameKind
from bot.links import Scope
from bot.scheduler.port import Days, Schedule
from bot.storage import SqlStore
from bot.web import Dashboard
from tests.conftest import FakeClock, SimpleBank, make_question

SECRET = "test-dashboard-secret-0123456789"
# Ids as Slack makes them, so a page that shows an id instead of a name fails a test.
T1 = Place("slack", "T07QWE4RTYU", "C07XYZ9KLMN")
T2 = Place("slack", "T08ZXC5VBNM", "C08MNB7VCXZ")
ALICE, BOB, CAROL, MALLORY = "U07ABC12345", "U07DEF67890", "U07GHI24680", "U08JKL13579"
ADMIN = "U07ADM11111"
# What T1 calls them (T2's people have no stored name: their ids show).
NAMES = {
    (NameKind.USER, ALICE): "Alice Martin",
    (NameKind.USER, BOB): "Bob Chen",
    (NameKind.USER, CAROL): "Carol Diaz",
    (NameKind.CHANNEL, T1.channel): "infra-study",
    (NameKind.WORKSPACE, T1.workspace): "Acme Infra",
}

# A question id as long as the bank's longest, which a phone must wrap rather than scroll.
LONG_ID = "tpu-optical-circuit-switch-reconfiguration-under-failure"
BANK = SimpleBank(
    [
        make_question("seed-q", difficulty=Difficulty.EASY),
        make_question("second-q", answer="B"),
        make_question(LONG_ID, answer="C", difficulty=Difficulty.HARD),
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
    await play(engine, clock, T1, {ALICE: "right", BOB: "right", CAROL: "wrong"})
    await play(engine, clock, T1, {ALICE: "right", BOB: "wrong"})
    await play(engine, clock, T2, {MALLORY: "right"})
    await store.save_names(T1.platform, T1.workspace, NAMES, clock())
    await store.put_schedule(
        Schedule(
            place=T1,
            hour=9,
            minute=30,
            zone="Europe/Paris",
            days=Days.WEEKDAYS,
            since=clock(),
            set_by=ADMIN,
        )
    )


async def serve(store: SqlStore, engine: QuizEngine, clock: FakeClock) -> AsyncIterator[Site]:
    await seed_history(store, engine, clock)
    dashboard = Dashboard(engine=engine, store=store, secret=SECRET, clock=clock)
    app = web.Application()
    dashboard.mount(app)
    async with TestClient(TestServer(app)) as client:
        yield Site(client, dashboard, engine, clock)


@pytest.fixture
async def site(store: SqlStore) -> AsyncIterator[Site]:
    clock = FakeClock()
    engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(7))
    async for served in serve(store, engine, clock):
        yield served


# Two open reports take a question out of a workspace's rounds in the banked site.
PAUSE_AT = 2


def lint_clean(q: Question) -> Question:
    """Return the question with what the lint rules ask of a workspace's own: why-nots that
    teach, and a primary source."""
    why = {
        c.key: f"{c.key} is not it: the question asks about something else than {c.text}"
        for c in q.choices
        if c.key != q.answer
    }
    source = Reference("The paper", f"https://arxiv.org/abs/2401.{len(q.id):05d}")
    return replace(q, why_not=why, references=(source,))


@pytest.fixture
async def banked(store: SqlStore) -> AsyncIterator[Site]:
    """The site with workspace banks, as the bot runs: own questions, hidden ones, reports."""
    clock = FakeClock()
    base = QuestionBank([lint_clean(q) for q in BANK.questions])
    banks = WorkspaceBanks(base, store, pause_at=PAUSE_AT)
    engine = QuizEngine(store, base, clock=clock, rng=random.Random(7), banks=banks)
    async for served in serve(store, engine, clock):
        yield served


__all__ = [
    "ADMIN",
    "ALICE",
    "BANK",
    "BOB",
    "CAROL",
    "LONG_ID",
    "MALLORY",
    "NAMES",
    "PAUSE_AT",
    "SECRET",
    "T1",
    "T2",
    "Site",
    "play",
    "timedelta",
]
