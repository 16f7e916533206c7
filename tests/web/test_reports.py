"""Players' open reports on the dashboard: on a question's page, and counted in the list."""

from __future__ import annotations

from bot.engine.model import FlagReason, Place
from tests.web.conftest import ADMIN, ALICE, BOB, T1, T2, Site
from tests.web.test_access import open_link

REPORTED = "second-q"
CHANNEL = Place(T1.platform, T1.workspace, "C07REPORTS01")


async def report(site: Site, *who: tuple[str, FlagReason, str | None]) -> None:
    """Ask REPORTED in a channel of T1, then let each player report it there."""
    card = await site.engine.start_round(CHANNEL, question_id=REPORTED)
    await site.engine.close(card.round.id)
    for user, reason, note in who:
        site.clock.advance(minutes=1)
        await site.engine.flag(CHANNEL, user, reason, note)


def row_of(page: str, qid: str) -> str:
    start = page.index(f'href="/dashboard/questions/{qid}"')
    return page[start : page.index("</tr>", start)]


async def test_one_report_shows_on_the_page_and_in_the_list(banked: Site) -> None:
    await report(banked, (ALICE, FlagReason.WRONG, "B is the right one"))
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    listing = await (await banked.client.get("/dashboard/questions")).text()
    assert 'data-reports="1"' in row_of(listing, REPORTED)
    assert "paused" not in row_of(listing, REPORTED)
    assert 'data-reports="0"' in row_of(listing, "seed-q")
    page = await (await banked.client.get(f"/dashboard/questions/{REPORTED}")).text()
    reports = page[page.index('id="reports"') :]
    assert "Alice Martin" in reports and "B is the right one" in reports
    assert ">wrong<" in reports and "Paused" not in page


async def test_enough_reports_pause_it_and_its_page_still_shows(banked: Site) -> None:
    await report(
        banked,
        (ALICE, FlagReason.WRONG, "B is the right one"),
        (BOB, FlagReason.TYPO, None),
    )
    # Out of the workspace's rounds...
    bank = await banked.engine.bank_for(T1.platform, T1.workspace)
    assert REPORTED not in {q.id for q in bank.filter(None)}
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    # ...but not out of its admins' sight: listed, marked, and its page open.
    listing = await (await banked.client.get("/dashboard/questions?sort=reports")).text()
    row = row_of(listing, REPORTED)
    assert 'data-reports="2"' in row and "paused" in row
    assert listing.index(REPORTED) < listing.index("seed-q")
    page = await banked.client.get(f"/dashboard/questions/{REPORTED}")
    assert page.status == 200
    text = await page.text()
    assert "Paused" in text and "Bob Chen" in text and ">typo<" in text
    # Another workspace has reports of its own: none of these.
    banked.client.session.cookie_jar.clear()
    assert (await open_link(banked, banked.link(T2, "U9"))).status == 303
    other = await (await banked.client.get(f"/dashboard/questions/{REPORTED}")).text()
    assert "No open reports." in other and "Alice" not in other and "Paused" not in other


async def test_a_hidden_question_is_listed_and_marked(banked: Site) -> None:
    store = banked.dashboard.store
    await store.set_hidden(  # type: ignore[attr-defined]
        T1.platform, T1.workspace, ["seed-q"], True, by=ADMIN, at=banked.clock()
    )
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    listing = await (await banked.client.get("/dashboard/questions")).text()
    assert "hidden" in row_of(listing, "seed-q")
    page = await banked.client.get("/dashboard/questions/seed-q")
    assert page.status == 200 and "Hidden in this workspace" in await page.text()
