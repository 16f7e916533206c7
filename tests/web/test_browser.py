"""The dashboard in a real headless Chromium (Debian's), read as a person reads it.

Screenshots of every page go to ``QUIZBOT_SCREENSHOTS`` (default ``out/screenshots``); the ones
in docs/dashboard.md come from a run with ``QUIZBOT_SCREENSHOTS=docs/img``.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.engine.model import Place
from bot.links import Scope
from bot.storage import SqlStore, open_store
from bot.web import Dashboard
from tests.web.conftest import ADMIN, BOB, LONG_ID, MALLORY, T1, Site

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SHOTS = Path(os.environ.get("QUIZBOT_SCREENSHOTS", "out/screenshots"))
WAIT_MS = 10_000
# The narrowest phone width in common use.
PHONE = 360
# A Slack id (user, channel or workspace) as it would show if a page fell back to ids.
IDS = re.compile(r"\b[UCT]0[0-9A-Z]{8,}\b")
# A workspace with ids as long as Slack's enterprise ones, and no stored names.
LONG_PLACE = Place("slack", "E07ENTERPRISE9GRID0", "C07VERYLONGCHANNELID0")
LONG_USER = "W07LONGUSERID00000001"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed (.ci/run installs it with apt-get)",
)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlStore]:
    """One database is enough here (the storage suite covers both)."""
    s = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'web.db'}")
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    playwright_api = pytest.importorskip("playwright.async_api")
    async with playwright_api.async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_FLAGS)
        try:
            yield b
        finally:
            await b.close()


@pytest.fixture
async def base_url(site: Site) -> AsyncIterator[str]:
    """Serve the same dashboard on a real port the browser can reach."""
    app = web.Application()
    site.dashboard.mount(app)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def full_link(dashboard: Dashboard, base: str, user: str, scope: Scope) -> str:
    url = dashboard.link(T1, user, scope)
    return base + url[url.index("/dashboard") :]


async def shot(page, name: str) -> None:
    await asyncio.to_thread(SHOTS.mkdir, parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"dashboard-{name}.png"), full_page=True)


async def test_admin_reads_the_workspace(site: Site, base_url: str, browser) -> None:
    page = await browser.new_page(viewport={"width": 1000, "height": 800})
    link = full_link(site.dashboard, base_url, ADMIN, Scope.WORKSPACE)
    # A link preview crawler fetches the link first (HEAD, then GET): that spends nothing.
    async with aiohttp.ClientSession() as crawler:
        for method in ("HEAD", "GET"):
            async with crawler.request(method, link, allow_redirects=False) as seen:
                assert seen.status == 200 and "Set-Cookie" not in seen.headers
    await page.goto(link)
    await shot(page, "open")
    assert await page.inner_text("h1") == "Open the dashboard"
    await page.click("#open")
    await page.wait_for_url(f"{base_url}/dashboard", timeout=WAIT_MS)
    assert await page.inner_text("#answers") == "5"  # T1's only: T2's mallory is elsewhere
    assert await page.inner_text("#players") == "3"
    assert await page.inner_text("#share") == "60%"
    leaders = await page.inner_text("#streaks")
    assert "Alice Martin" in leaders and MALLORY not in leaders
    # Names, never ids: the workspace, people and channels as the team knows them.
    assert await page.inner_text("header .where") == "slack · Acme Infra"
    assert not IDS.search(await page.inner_text("body"))
    await shot(page, "overview")

    await page.click("text=Leaderboards")
    await page.wait_for_url("**/dashboard/leaderboards", timeout=WAIT_MS)
    rows = await page.locator("#board-all tbody tr").all_inner_texts()
    assert rows[0].split("\t")[:3] == ["1", "Alice Martin", "4"]
    assert [r.split("\t")[1] for r in rows] == ["Alice Martin", "Bob Chen", "Carol Diaz"]
    assert not IDS.search(await page.inner_text("body"))
    await shot(page, "leaderboards")

    await page.click("text=Questions")
    await page.wait_for_url("**/dashboard/questions", timeout=WAIT_MS)
    # It opens on the most answered; a click on the column turns the order round.
    first = await page.locator("#questions tbody tr").first.inner_text()
    assert first.startswith("seed-q")
    await shot(page, "questions")
    await page.click("#questions th >> text=Answers")
    await page.wait_for_url("**/dashboard/questions?sort=answers&order=asc", timeout=WAIT_MS)
    last = await page.locator("#questions tbody tr").last.inner_text()
    assert last.startswith("seed-q")

    await page.click("#questions >> text=seed-q")
    await page.wait_for_url("**/dashboard/questions/seed-q", timeout=WAIT_MS)
    summary = await page.inner_text("#summary")
    assert summary.startswith("3 answers in 1 round · 67% right")
    chart = await page.inner_html("svg.chart")
    assert "67% (2)" in chart and "33% (1)" in chart
    await shot(page, "question")

    await page.click("text=Channels")
    await page.wait_for_url("**/dashboard/channels", timeout=WAIT_MS)
    card = await page.inner_text(f"#channel-{T1.channel}")
    assert await page.inner_text(f"#channel-{T1.channel} h2") == "#infra-study"
    assert not IDS.search(await page.inner_text("body"))
    assert "Daily question at 09:30 Europe/Paris, on weekdays." in card
    assert "Next post: Thursday 2026-03-05 09:30 Europe/Paris" in card
    await shot(page, "channels")


async def test_player_page_at_phone_width(site: Site, base_url: str, browser) -> None:
    page = await browser.new_page(viewport={"width": PHONE, "height": 800})
    await page.goto(full_link(site.dashboard, base_url, BOB, Scope.ME))
    await page.click("#open")
    await page.wait_for_url(f"{base_url}/dashboard/me", timeout=WAIT_MS)
    assert await page.inner_text("h1") == "Bob Chen"
    assert await page.inner_text("#points") == "1"
    assert await page.inner_text("#due") == "2"  # his right answer and his miss, both due
    assert LONG_ID in await page.inner_text("#reviews")
    history = await page.locator("#history tbody tr").count()
    assert history == 2
    assert "#infra-study" in await page.inner_text("#history")
    # At phone width each answer is a block of labelled lines, not a row of five columns.
    shown = "getComputedStyle(document.querySelector('#history td')).display"
    assert await page.evaluate(shown) == "block"
    assert not IDS.search(await page.inner_text("body"))
    await fits(page)
    await shot(page, "me-phone")
    await page.goto(f"{base_url}/dashboard/leaderboards")
    assert "This link opens your own page only." in await page.inner_text("main")


PAGES = {
    "overview": "/dashboard",
    "leaderboards": "/dashboard/leaderboards",
    "questions": "/dashboard/questions",
    "question": f"/dashboard/questions/{LONG_ID}",
    "channels": "/dashboard/channels",
}


async def fits(page) -> None:
    """Assert the page does not scroll sideways: its content is exactly the viewport's width."""
    width = await page.evaluate("document.documentElement.scrollWidth")
    viewport = await page.evaluate("document.documentElement.clientWidth")
    assert viewport == PHONE
    assert width == viewport, f"{page.url} is {width} px wide at {viewport} px"


async def test_every_page_fits_a_phone(site: Site, base_url: str, browser) -> None:
    # A workspace without stored names shows its long ids: those must wrap too.
    await site.engine.start_round(LONG_PLACE)
    page = await browser.new_page(viewport={"width": PHONE, "height": 800})
    for place, who in ((T1, ADMIN), (LONG_PLACE, LONG_USER)):
        url = site.dashboard.link(place, who, Scope.WORKSPACE)
        await page.goto(base_url + url[url.index("/dashboard") :])
        await page.click("#open")
        await page.wait_for_url(f"{base_url}/dashboard", timeout=WAIT_MS)
        for name, path in PAGES.items():
            await page.goto(base_url + path)
            await fits(page)
            if place == T1:
                await shot(page, f"{name}-phone")
        await page.context.clear_cookies()


async def test_a_spent_link_says_so_after_the_click(site: Site, base_url: str, browser) -> None:
    link = full_link(site.dashboard, base_url, ADMIN, Scope.WORKSPACE)
    first = await browser.new_page()
    await first.goto(link)
    await first.click("#open")
    await first.wait_for_url(f"{base_url}/dashboard", timeout=WAIT_MS)
    # Another browser (no session) opens the same link: the page shows, the click is refused.
    other = await browser.new_context()
    try:
        second = await other.new_page()
        await second.goto(link)
        await second.click("#open")
        await second.wait_for_selector("text=already used", timeout=WAIT_MS)
        assert "Alice Martin" not in await second.inner_text("main")
    finally:
        await other.close()
