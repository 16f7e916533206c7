"""The dashboard on computed questions: the questions page links each answered instance by its
id (``template#seed``, the ``#`` escaped), and the question's page rebuilds it from the id."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.bank import load_bank
from bot.bank.templates import load_templates
from bot.engine import QuizEngine
from bot.links import Scope
from bot.storage import SqlStore
from bot.web import Dashboard
from tests.conftest import FakeClock
from tests.web.conftest import ADMIN, ALICE, BOB, SECRET, T1
from tests.web.test_access import open_link

BANK = Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"


@pytest.fixture
async def computed_site(store: SqlStore) -> AsyncIterator[tuple[TestClient, Dashboard, str]]:
    clock = FakeClock()
    engine = QuizEngine(
        store, load_bank([BANK], load_templates()), clock=clock, rng=random.Random(4)
    )
    card = await engine.start_round(T1, computed=True)
    question = card.question
    wrong = next(k for k in question.keys if k != question.answer)
    await engine.answer(T1.platform, T1.workspace, card.round_id, ALICE, question.answer)
    await engine.answer(T1.platform, T1.workspace, card.round_id, BOB, wrong)
    await engine.close(card.round_id)
    dashboard = Dashboard(engine=engine, store=store, secret=SECRET, clock=clock)
    app = web.Application()
    dashboard.mount(app)
    async with TestClient(TestServer(app)) as client:
        yield client, dashboard, question.id


async def test_an_answered_computed_question_has_its_own_page(
    computed_site: tuple[TestClient, Dashboard, str],
) -> None:
    client, dashboard, question_id = computed_site
    url = dashboard.link(T1, ADMIN, Scope.WORKSPACE)
    opened = await open_link(SimpleNamespace(client=client), url[url.index("/dashboard") :])
    assert opened.status == 303
    listing = await (await client.get("/dashboard/questions")).text()
    escaped = question_id.replace("#", "%23")
    assert f'href="/dashboard/questions/{escaped}"' in listing
    page = await client.get(f"/dashboard/questions/{escaped}")
    assert page.status == 200
    text = unescape(await page.text())
    assert question_id in text and "2 answers in 1 round" in text
    # A seed that names no instance is a missing page, like an unknown question.
    template = question_id.partition("#")[0]
    for bad in (f"{template}%23007", f"{template}%231000000000", "no-such%231"):
        assert (await client.get(f"/dashboard/questions/{bad}")).status == 404, bad
