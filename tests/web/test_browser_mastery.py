"""The mastery heatmap in a real headless Chromium (Debian's): topics by people for admins, a
person's own topics on their page, both readable at phone width."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from bot.engine import Place, QuizEngine
from bot.engine.learning import CardKey, Grade, Review, Source, Study
from bot.links import Scope
from bot.storage import SqlStore, open_store
from bot.web import Dashboard
from tests.conftest import FakeClock, SimpleBank, make_question
from tests.web.test_browser import CHROMIUM, WAIT_MS, browser, shot  # noqa: F401

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SECRET = "test-dashboard-secret-0123456789"
PLACE = Place("slack", "T07TEAM", "C07STUDY")
TOPICS = {"01-interconnects": 2, "03-collectives": 4, "08-failures": 1}
ANSWERED = {
    "U07ABC123LONGID": ["01-interconnects/0", "01-interconnects/1", "03-collectives/0"],
    "U07DEF456": ["03-collectives/1"],
}

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed (.ci/run installs it with apt-get)",
)


def bank() -> SimpleBank:
    return SimpleBank(
        [
            replace(make_question(f"{t[:2]}-q{i}"), source=f"questions/{t}/{i}.yaml")
            for t, n in TOPICS.items()
            for i in range(n)
        ]
    )


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[str, Dashboard]]:
    store: SqlStore = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    clock = FakeClock(T0)
    engine = QuizEngine(store, bank(), clock=clock)
    for user, answered in ANSWERED.items():
        for ref in answered:
            topic, _, i = ref.partition("/")
            key = CardKey(PLACE.platform, PLACE.workspace, user, f"{topic[:2]}-q{i}")
            review = Review(at=T0, correct=True, rating=Grade.GOOD, source=Source.PRACTICE)
            await store.study(Study(key, review, engine.memory), choice="A")
    clock.advance(minutes=5)  # recall is still 1: mastery is the share of a topic answered
    dashboard = Dashboard(engine=engine, store=store, secret=SECRET, clock=clock)
    try:
        async with serve(dashboard) as base:
            yield base, dashboard
    finally:
        await store.close()


@asynccontextmanager
async def serve(dashboard: Dashboard) -> AsyncIterator[str]:
    """Serve the dashboard on a free port; yield its base URL; stop it on the way out."""
    app = web.Application()
    dashboard.mount(app)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def link(dashboard: Dashboard, base: str, user: str, scope: Scope) -> str:
    url = dashboard.link(PLACE, user, scope)
    return base + url[url.index("/dashboard") :]


async def cells(page, row: int) -> list[str]:
    return await page.locator(f"#mastery tbody tr:nth-child({row}) td").all_inner_texts()


async def test_admins_read_topics_by_people_and_the_team(served, browser) -> None:  # noqa: F811
    base, dashboard = served
    page = await browser.new_page(viewport={"width": 1000, "height": 700})
    await page.goto(link(dashboard, base, "U07ADMIN", Scope.WORKSPACE))
    await page.click("#open")
    await page.wait_for_url(f"{base}/dashboard", timeout=WAIT_MS)
    await page.click("text=Mastery")
    await page.wait_for_url("**/dashboard/mastery", timeout=WAIT_MS)
    heads = await page.locator("#mastery thead th.topic").all_inner_texts()
    assert heads == ["interconnects", "collectives", "failures"]
    people = await page.locator("#mastery tbody th").all_inner_texts()
    assert people == ["U07ABC123LONGID", "U07DEF456", "Team"]
    assert await cells(page, 1) == ["100%", "25%", "0%"]
    assert await cells(page, 2) == ["0%", "25%", "0%"]
    assert await cells(page, 3) == ["50%", "25%", "0%"]
    shade = await page.locator("#mastery tbody tr:nth-child(1) td").first.get_attribute("class")
    assert shade == "m10"
    await shot(page, "mastery")


async def test_a_person_sees_their_own_topics_at_phone_width(served, browser) -> None:  # noqa: F811
    base, dashboard = served
    page = await browser.new_page(viewport={"width": 360, "height": 780})
    await page.goto(link(dashboard, base, "U07ABC123LONGID", Scope.ME))
    await page.click("#open")
    await page.wait_for_url(f"{base}/dashboard/me", timeout=WAIT_MS)
    assert await page.locator("#mastery tbody tr").count() == 1  # their own row, no team
    assert await cells(page, 1) == ["100%", "25%", "0%"]
    # The heatmap scrolls inside its own box; the page itself does not scroll sideways.
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360
    await shot(page, "mastery-phone")
    await page.goto(f"{base}/dashboard/mastery")
    assert "This link opens your own page only." in await page.inner_text("main")


async def test_nobody_yet(tmp_path: Path, browser) -> None:  # noqa: F811
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'e.db'}")
    clock = FakeClock(T0 + timedelta(days=1))
    engine = QuizEngine(store, bank(), clock=clock)
    dashboard = Dashboard(engine=engine, store=store, secret=SECRET, clock=clock)
    try:
        async with serve(dashboard) as base:
            page = await browser.new_page()
            await page.goto(link(dashboard, base, "U07ADMIN", Scope.WORKSPACE))
            await page.click("#open")
            await page.wait_for_url(f"{base}/dashboard", timeout=WAIT_MS)
            await page.goto(f"{base}/dashboard/mastery")
            assert "Nobody has answered a question here yet." in await page.inner_text("main")
    finally:
        await store.close()
