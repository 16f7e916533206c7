"""Access to the dashboard over HTTP: links, sessions, and every refusal leaving no data shown."""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot import links
from bot.links import Grant, Purpose, Scope
from bot.web import COOKIE, Dashboard
from tests.web.conftest import SECRET, T1, T2, Site

T1_NAMES = ("alice", "bob", "carol")


async def open_link(site: Site, path: str):
    return await site.client.get(path, allow_redirects=False)


def assert_no_data(text: str) -> None:
    for name in (*T1_NAMES, "mallory", "seed-q", "second-q"):
        assert name not in text, name


async def test_link_opens_a_session_and_the_overview(site: Site):
    response = await open_link(site, site.link(T1, "U0"))
    assert response.status == 200
    assert 'http-equiv="refresh" content="0;url=/dashboard"' in await response.text()
    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/dashboard"
    assert not cookie["secure"]  # plain-http public URL (none set)
    assert int(cookie["max-age"]) == 8 * 3600
    page = await site.client.get("/dashboard")
    assert page.status == 200
    text = await page.text()
    assert "alice" in text and "mallory" not in text
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "script-src" not in page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"


async def test_secure_cookie_when_public_url_is_https(site: Site):
    site.dashboard.public_url = "https://quiz.example.org"
    url = site.dashboard.link(T1, "U0", Scope.WORKSPACE)
    assert url.startswith("https://quiz.example.org/dashboard/open?token=")
    response = await open_link(site, url[url.index("/dashboard") :])
    assert response.cookies[COOKIE]["secure"]


async def test_reused_link_is_refused(site: Site):
    path = site.link(T1, "U0")
    assert (await open_link(site, path)).status == 200
    site.client.session.cookie_jar.clear()
    again = await open_link(site, path)
    assert again.status == 403
    assert COOKIE not in again.cookies
    text = await again.text()
    assert "already used" in text
    assert_no_data(text)


async def test_expired_link_goes_to_the_expired_page(site: Site):
    path = site.link(T1, "U0")
    site.clock.advance(minutes=15)
    response = await open_link(site, path)
    assert response.status == 303 and response.headers["Location"] == "/dashboard/expired"
    page = await site.client.get("/dashboard/expired")
    assert page.status == 403 and "expired" in await page.text()
    assert COOKIE not in response.cookies


async def test_forged_signature_is_refused(site: Site):
    path = site.link(T1, "U0")
    body, _, sig = path.partition("token=")[2].partition(".")
    forged = f"/dashboard/open?token={body}.{sig[:-2]}AA"
    response = await open_link(site, forged)
    assert response.status == 403
    assert_no_data(await response.text())
    other_secret = links.new_link(
        "some-other-secret-entirely", "slack", "T1", Scope.WORKSPACE, "U0", site.clock()
    )
    response = await open_link(site, f"/dashboard/open?token={other_secret}")
    assert response.status == 403


async def test_session_cookie_forged_or_link_used_as_cookie(site: Site):
    link_token = site.link(T1, "U0").partition("token=")[2]
    site.client.session.cookie_jar.update_cookies({COOKIE: link_token})
    response = await site.client.get("/dashboard")
    assert response.status == 403
    assert_no_data(await response.text())
    site.client.session.cookie_jar.update_cookies({COOKIE: "garbage.value"})
    response = await site.client.get("/dashboard/leaderboards")
    assert response.status == 403


async def test_no_cookie_no_page(site: Site):
    for path in (
        "/dashboard",
        "/dashboard/leaderboards",
        "/dashboard/questions",
        "/dashboard/questions/seed-q",
        "/dashboard/channels",
        "/dashboard/me",
    ):
        response = await site.client.get(path, allow_redirects=False)
        assert response.status == 403, path
        assert_no_data(await response.text())


async def test_expired_session_goes_to_the_expired_page(site: Site):
    assert (await open_link(site, site.link(T1, "U0"))).status == 200
    site.clock.advance(hours=8)
    response = await site.client.get("/dashboard", allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/dashboard/expired"


async def test_another_workspace_sees_only_its_own(site: Site):
    assert (await open_link(site, site.link(T2, "U9"))).status == 200
    for path in (
        "/dashboard",
        "/dashboard/leaderboards",
        "/dashboard/channels",
        "/dashboard/questions",
        "/dashboard/questions/seed-q",
    ):
        response = await site.client.get(path)
        assert response.status == 200, path
        text = await response.text()
        for name in T1_NAMES:
            assert name not in text, (path, name)
    board = await (await site.client.get("/dashboard/leaderboards")).text()
    assert "mallory" in board
    # T1's answers to seed-q never show on T2's page for it: T2 has one answer.
    page = await (await site.client.get("/dashboard/questions/seed-q")).text()
    assert "1 answer in 1 round" in page


async def test_session_signed_for_another_workspace_reads_that_workspace_only(site: Site):
    # A cookie is bound to its workspace by its signature: changing the workspace breaks it.
    now = site.clock()
    good = links.sign(
        SECRET,
        Purpose.SESSION,
        Grant("slack", "T2", Scope.WORKSPACE, "U9", now + timedelta(hours=1)),
    )
    body, _, sig = good.partition(".")
    tampered = body.replace(
        body,
        links.sign(
            "x" * 32, Purpose.SESSION, Grant("slack", "T1", Scope.WORKSPACE, "U9", now)
        ).partition(".")[0],
    )
    site.client.session.cookie_jar.update_cookies({COOKIE: f"{tampered}.{sig}"})
    response = await site.client.get("/dashboard")
    assert response.status == 403
    assert_no_data(await response.text())


async def test_personal_link_opens_only_its_own_page(site: Site):
    response = await open_link(site, site.link(T1, "bob", Scope.ME))
    assert 'content="0;url=/dashboard/me"' in await response.text()
    mine = await site.client.get("/dashboard/me")
    assert mine.status == 200
    text = await mine.text()
    assert "bob" in text and "alice" not in text
    for path in (
        "/dashboard",
        "/dashboard/leaderboards",
        "/dashboard/questions",
        "/dashboard/channels",
        "/dashboard/players/alice",
    ):
        response = await site.client.get(path)
        assert response.status == 403, path
        assert "alice" not in await response.text()
    assert (await site.client.get("/dashboard/players/bob")).status == 200


async def test_bad_sort_and_unknown_question(site: Site):
    assert (await open_link(site, site.link(T1, "U0"))).status == 200
    response = await site.client.get("/dashboard/questions?sort=<script>&order=sideways")
    assert response.status == 200
    assert "<script>" not in await response.text()
    missing = await site.client.get("/dashboard/questions/no-such-question")
    assert missing.status == 404


async def test_links_and_sessions_work_across_replicas(site: Site):
    # A second replica: its own dashboard and HTTP server, the same secret and database.
    other = Dashboard(
        engine=site.engine, store=site.dashboard.store, secret=SECRET, clock=site.clock
    )
    app = web.Application()
    other.mount(app)
    async with TestClient(TestServer(app)) as replica:
        path = site.link(T1, "U0")
        opened = await replica.get(path, allow_redirects=False)
        assert opened.status == 200
        # The link was used on one replica: the other refuses it too.
        assert (await open_link(site, path)).status == 403
        # The session cookie the second replica set opens pages on the first.
        cookie = opened.cookies[COOKIE].value
        site.client.session.cookie_jar.update_cookies({COOKIE: cookie})
        page = await site.client.get("/dashboard")
        assert page.status == 200 and "alice" in await page.text()
