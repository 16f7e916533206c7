"""An admin edits a question on the dashboard in a real headless Chromium (Debian's).

The browser fills the form and clicks, as a person does; a form that lost its token, and one
another site serves, are refused and change nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.engine.model import FlagReason, Place
from bot.links import Scope
from bot.storage import SqlStore, open_store
from tests.web.conftest import ADMIN, ALICE, T1, Site
from tests.web.test_browser import CHROMIUM, PHONE, WAIT_MS, browser, fits, shot
from tests.web.test_proposals_page import propose

QID = "second-q"
REPORTS = Place(T1.platform, T1.workspace, "C07REPORTS01")

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed (.ci/run installs it with apt-get)",
)
__all__ = ["browser"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlStore]:
    """One database is enough here (the storage suite covers both)."""
    s = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'web.db'}")
    try:
        yield s
    finally:
        await s.close()


async def serve(app: web.Application, host: str = "127.0.0.1") -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, 0).start()
    try:
        yield f"http://{host}:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest.fixture
async def base_url(banked: Site) -> AsyncIterator[str]:
    """Serve the dashboard with workspace banks on a real port the browser can reach."""
    app = web.Application()
    banked.dashboard.mount(app)
    async for url in serve(app):
        yield url


async def revisions(site: Site) -> list[int]:
    store = site.dashboard.store
    return [r.revision for r in await store.question_history("slack", T1.workspace, QID)]  # type: ignore[attr-defined]


async def test_an_admin_edits_a_question_and_a_post_without_the_token_is_refused(
    banked: Site, base_url: str, browser
) -> None:
    card = await banked.engine.start_round(REPORTS, question_id=QID)
    await banked.engine.close(card.round.id)
    await banked.engine.flag(REPORTS, ALICE, FlagReason.WRONG, "The key should be C")
    page = await browser.new_page(viewport={"width": 1000, "height": 900})
    url = banked.dashboard.link(T1, ADMIN, Scope.WORKSPACE)
    await page.goto(base_url + url[url.index("/dashboard") :])
    await page.click("#open")
    await page.wait_for_url(f"{base_url}/dashboard", timeout=WAIT_MS)
    await page.click("text=Questions")
    await page.wait_for_url("**/dashboard/questions", timeout=WAIT_MS)
    await page.click(f"#questions >> text={QID}")
    await page.wait_for_url(f"**/dashboard/questions/{QID}", timeout=WAIT_MS)
    reports = await page.inner_text("#reports")
    assert "Alice Martin" in reports and "The key should be C" in reports
    assert await page.input_value("#f-question") == f"Question {QID}?"
    await shot(page, "question-edit")

    # A problem: nothing saved, the message beside its field, the text kept.
    await page.fill("#f-choice-B", "")
    await page.click("#save")
    await page.wait_for_selector("#refused", timeout=WAIT_MS)
    assert "choice B is missing" in await page.inner_text("#problems-choice_C")
    assert await revisions(banked) == []
    await shot(page, "question-edit-refused")

    await page.fill("#f-choice-B", "choice B of second-q")
    await page.fill("#f-question", "Which of these choices is it?")
    await page.click("#save")
    await page.wait_for_url(f"**/dashboard/questions/{QID}?saved=1", timeout=WAIT_MS)
    notice = await page.inner_text("#notice")
    assert notice.startswith("Saved as revision 1.") and "1 player(s)" in notice
    assert await page.inner_text(".stem") == "Which of these choices is it?"
    assert "the workspace's own, revision 1" in await page.inner_text(".meta")
    assert await page.inner_text("#reports") == "No open reports."
    assert await page.input_value("#f-question") == "Which of these choices is it?"
    assert await revisions(banked) == [1]

    # The same form with its token taken out: the browser's post is refused, nothing saved.
    await page.fill("#f-question", "Saved without a token?")
    await page.eval_on_selector("form.edit input[name=csrf]", "e => e.remove()")
    await page.click("#save")
    await page.wait_for_selector("text=Not allowed", timeout=WAIT_MS)
    assert "nothing was changed" in await page.inner_text("main")
    assert await revisions(banked) == [1]
    await shot(page, "question-edit-forged")

    # The form fits a phone: nothing scrolls sideways at 360 pixels.
    await page.set_viewport_size({"width": PHONE, "height": 800})
    await page.goto(f"{base_url}/dashboard/questions/{QID}")
    await fits(page)


async def test_another_sites_form_changes_nothing(banked: Site, base_url: str, browser) -> None:
    # Another origin (another port: same site, so even SameSite=Strict sends the cookie) serves
    # a form that posts to the dashboard, with a token it made up.
    async def evil(_request: web.Request) -> web.Response:
        form = (
            f'<form method="post" action="{base_url}/dashboard/questions/{QID}">'
            '<input type="hidden" name="csrf" value="made-up">'
            '<input type="hidden" name="action" value="hide">'
            '<button id="go">Win a prize</button></form>'
        )
        return web.Response(text=form, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", evil)
    page = await browser.new_page()
    url = banked.dashboard.link(T1, ADMIN, Scope.WORKSPACE)
    await page.goto(base_url + url[url.index("/dashboard") :])
    await page.click("#open")
    await page.wait_for_url(f"{base_url}/dashboard", timeout=WAIT_MS)
    async for other in serve(app):
        await page.goto(other)
        await page.click("#go")
        await page.wait_for_selector("text=Not allowed", timeout=WAIT_MS)
        assert "nothing was changed" in await page.inner_text("main")
    layer = await banked.dashboard.store.bank_layer("slack", T1.workspace)  # type: ignore[attr-defined]
    assert layer.hidden == frozenset()


async def test_an_admin_decides_proposals_on_their_page(
    banked: Site, base_url: str, browser
) -> None:
    first = await propose(banked, "member-one")
    second = await propose(banked, "member-two")
    page = await browser.new_page(viewport={"width": PHONE, "height": 800})
    url = banked.dashboard.link(T1, ADMIN, Scope.WORKSPACE)
    await page.goto(base_url + url[url.index("/dashboard") :])
    await page.click("#open")
    await page.wait_for_url(f"{base_url}/dashboard", timeout=WAIT_MS)
    await page.click("text=Proposals")
    await page.wait_for_url("**/dashboard/proposals", timeout=WAIT_MS)
    assert "By Bob Chen" in await page.inner_text(f"#proposal-{first}")
    await fits(page)
    await shot(page, "proposals-phone")
    await page.click(f"#approve-{first}")
    await page.wait_for_url(f"**/dashboard/proposals?done=approved&n={first}", timeout=WAIT_MS)
    assert "member-one is live as revision 1" in await page.inner_text("#notice")
    await page.fill(f"#reason-{second}", "We ask this already.")
    await page.click(f"#reject-{second}")
    await page.wait_for_url(f"**/dashboard/proposals?done=rejected&n={second}", timeout=WAIT_MS)
    decided = await page.inner_text("#decided")
    assert "rejected by" in decided and "We ask this already." in decided
    assert "Nothing waits for a decision." in await page.inner_text("main")
    await fits(page)
