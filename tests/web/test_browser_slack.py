"""The whole path a team sees: rounds played on Slack, the admin's link, the page in Chromium.

The real Bolt app serves /slack/events and the dashboard on one port (HTTP mode), the Slack
stand-in plays Slack, and Debian's Chromium opens the link that `/quiz dashboard` replied with.
"""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.adapters.slack.app import SlackBot, assemble, start_http, web_client
from bot.bank.loader import load_bank
from bot.chat import Charts
from bot.engine import QuizEngine
from bot.links import LinkMaker
from bot.storage import open_store
from bot.web import Dashboard
from tests.adapters.slack.conftest import ADMIN, BANK, HANDLES, Sender, make_settings
from tests.conftest import FakeClock
from tests.standins.slack_api import SlackApiStandIn
from tests.web.test_browser import CHROMIUM, LAUNCH_FLAGS, WAIT_MS, shot

SECRET = "slack-browser-secret-0123456789-abcdef"
LINK = re.compile(r"(http://127\.0\.0\.1:\d+/dashboard/open\?token=[\w\-.]+)")

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed (.ci/run installs it with apt-get)",
)


async def said(slack: Sender, standin: SlackApiStandIn, text: str, user: str) -> str:
    """Send ``/quiz TEXT`` and return what the person was told (the ack, or the response URL)."""
    name = f"said-{slack.sent}"
    reply = await slack.command(text, user=user, respond_to=name)
    assert reply.status == 200
    if reply.text:
        return reply.text
    await standin.wait_for(lambda: bool(standin.responses_to(name)))
    return str(standin.responses_to(name))


@pytest.fixture
async def served(
    tmp_path: Path,
) -> AsyncIterator[tuple[Sender, SlackApiStandIn, FakeClock, SlackBot]]:
    standin = SlackApiStandIn(team_id="T0TEAM", admins=[ADMIN])
    await standin.start()
    clock = FakeClock()
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    engine = QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(0))
    settings = make_settings(tmp_path, standin)
    async with aiohttp.ClientSession() as session:
        bot = assemble(settings, engine, web_client(settings, session), charts=Charts.load())
        dashboard = Dashboard(engine=engine, store=store, secret=SECRET, clock=clock)
        runner, port = await start_http(bot.app, "127.0.0.1", 0, extra=dashboard.mount)
        base = f"http://127.0.0.1:{port}"
        dashboard.public_url = base
        bot.chat.links = LinkMaker(SECRET, base)
        try:
            yield (
                Sender(standin=standin, session=session, url=f"{base}/slack/events"),
                standin,
                clock,
                bot,
            )
        finally:
            await runner.cleanup()
            await bot.settle()
            await store.close()
            await standin.stop()


PEOPLE = {"U07ADA12345": "ada.lovelace", "U07BOB67890": "bob.kahn", "U07CYR24680": "cy.ras"}


async def test_rounds_on_slack_then_the_admin_reads_them_in_the_browser(
    served, tmp_path, monkeypatch
):
    slack, standin, clock, bot = served
    for user, handle in PEOPLE.items():
        monkeypatch.setitem(HANDLES, user, handle)
    round_id = await slack.post_card("storage")
    for user, key in zip(PEOPLE, "AAB", strict=True):
        clock.advance(seconds=2)
        assert (await slack.click(round_id, key, user=user)).status == 200
    await standin.wait_calls("chat.postEphemeral", 3)
    assert (await slack.command("close", user=ADMIN)).status == 200
    scheduled = await said(slack, standin, "schedule 09:30 Europe/Paris weekdays", ADMIN)
    assert "Scheduled" in scheduled
    refused = await said(slack, standin, "dashboard", "U07BOB67890")
    assert "can open the workspace's dashboard" in refused and "/dashboard/open" not in refused
    (link,) = LINK.findall(await said(slack, standin, "dashboard", ADMIN))
    await bot.chat.names.settle()  # the names learnt from those requests are stored

    playwright_api = pytest.importorskip("playwright.async_api")
    async with playwright_api.async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=LAUNCH_FLAGS
        )
        try:
            page = await browser.new_page(viewport={"width": 1000, "height": 800})
            await page.goto(link)
            await page.click("#open")
            await page.wait_for_url("**/dashboard", timeout=WAIT_MS)
            assert await page.inner_text("#answers") == "3"
            assert await page.inner_text("#players") == "3"
            assert await page.inner_text("#share") == "67%"
            await page.goto(link.split("/dashboard")[0] + "/dashboard/leaderboards")
            board = await page.inner_text("#board-all")
            # The names Slack sent with the clicks, never the ids.
            assert "ada.lovelace" in board and "bob.kahn" in board and "cy.ras" in board
            assert not any(user in board for user in PEOPLE)
            await page.goto(
                link.split("/dashboard")[0] + "/dashboard/questions/slack-test-checkpoint"
            )
            assert (await page.inner_text("#summary")).startswith("3 answers in 1 round")
            chart = await page.inner_html("svg.chart")
            assert "67% (2)" in chart and "33% (1)" in chart and "0% (0)" in chart
            await page.goto(link.split("/dashboard")[0] + "/dashboard/channels")
            card = await page.inner_text("#channel-C0QUIZ")
            assert await page.inner_text("#channel-C0QUIZ h2") == "#quiz"
            # The workspace's name from team.info, not its id or its domain.
            assert "Stand-in Cluster Team" in await page.inner_text("header .where")
            assert "Daily question at 09:30 Europe/Paris, on weekdays." in card
            assert "Next post: Tuesday 2026-03-03 09:30 Europe/Paris" in card
            await shot(page, "slack-channels")
            # The link worked once: opening it again is refused.
            again = await browser.new_page()
            await again.goto(link)
            await again.click("#open")
            await again.wait_for_selector("text=already used", timeout=WAIT_MS)
        finally:
            await browser.close()
