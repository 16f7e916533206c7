"""Access to the dashboard over HTTP: links, sessions, and every refusal leaving no data shown."""

from __future__ import annotations

import hmac
from datetime import timedelta
from types import SimpleNamespace
from typing import cast

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot import links
from bot.links import OPEN_PATH, Grant, Purpose, Scope
from bot.runtime import Runtime
from bot.web import COOKIE, Dashboard, dashboard_pages
from tests.web.conftest import ADMIN, ALICE, BOB, MALLORY, SECRET, T1, T2, Site

T1_NAMES = ("Alice Martin", "Bob Chen", "Carol Diaz")


async def open_link(site: Site, path: str, **headers: str):
    """Open a link as a person does: its page with the button, then the button's POST."""
    page = await site.client.get(path, allow_redirects=False)
    if page.status != 200:
        return page
    assert 'action="/dashboard/open"' in await page.text()
    token = path.partition("token=")[2]
    return await site.client.post(
        OPEN_PATH, data={"token": token}, headers=headers, allow_redirects=False
    )


def assert_no_data(text: str) -> None:
    for name in (*T1_NAMES, MALLORY, "seed-q", "second-q"):
        assert name not in text, name


async def test_link_opens_a_session_and_the_overview(site: Site):
    response = await open_link(site, site.link(T1, ADMIN))
    assert response.status == 303 and response.headers["Location"] == "/dashboard"
    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/dashboard"
    assert not cookie["secure"]  # plain-http public URL (none set)
    assert int(cookie["max-age"]) == 8 * 3600
    page = await site.client.get("/dashboard")
    assert page.status == 200
    text = await page.text()
    assert "Alice Martin" in text and MALLORY not in text
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "script-src" not in page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"


async def test_secure_cookie_when_public_url_is_https(site: Site):
    site.dashboard.public_url = "https://quiz.example.org"
    url = site.dashboard.link(T1, ADMIN, Scope.WORKSPACE)
    assert url.startswith("https://quiz.example.org/dashboard/open?token=")
    response = await open_link(site, url[url.index("/dashboard") :])
    assert response.cookies[COOKIE]["secure"]


async def test_reused_link_is_refused(site: Site):
    path = site.link(T1, ADMIN)
    assert (await open_link(site, path)).status == 303
    site.client.session.cookie_jar.clear()
    again = await open_link(site, path)
    assert again.status == 403
    assert COOKIE not in again.cookies
    text = await again.text()
    assert "already used" in text
    assert_no_data(text)


async def test_expired_link_goes_to_the_expired_page(site: Site):
    path = site.link(T1, ADMIN)
    site.clock.advance(minutes=15)
    response = await open_link(site, path)
    assert response.status == 303 and response.headers["Location"] == "/dashboard/expired"
    page = await site.client.get("/dashboard/expired")
    assert page.status == 403 and "expired" in await page.text()
    # No session, so no "Session ends –." line.
    assert "Session ends" not in await page.text()
    assert COOKIE not in response.cookies


async def test_forged_signature_is_refused(site: Site):
    path = site.link(T1, ADMIN)
    body, _, sig = path.partition("token=")[2].partition(".")
    forged = f"/dashboard/open?token={body}.{sig[:-2]}AA"
    response = await open_link(site, forged)
    assert response.status == 403
    assert_no_data(await response.text())
    other_secret = links.new_link(
        "some-other-secret-entirely", "slack", T1.workspace, Scope.WORKSPACE, ADMIN, site.clock()
    )
    response = await open_link(site, f"/dashboard/open?token={other_secret}")
    assert response.status == 403


async def test_session_cookie_forged_or_link_used_as_cookie(site: Site):
    link_token = site.link(T1, ADMIN).partition("token=")[2]
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
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
    site.clock.advance(hours=8)
    response = await site.client.get("/dashboard", allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/dashboard/expired"


async def test_another_workspace_sees_only_its_own(site: Site):
    assert (await open_link(site, site.link(T2, "U9"))).status == 303
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
    assert MALLORY in board  # no name stored for T2: the id shows
    # T1's answers to seed-q never show on T2's page for it: T2 has one answer.
    page = await (await site.client.get("/dashboard/questions/seed-q")).text()
    assert "1 answer in 1 round" in page


async def test_session_signed_for_another_workspace_reads_that_workspace_only(site: Site):
    # A cookie is bound to its workspace by its signature: changing the workspace breaks it.
    now = site.clock()
    good = links.sign(
        SECRET,
        Purpose.SESSION,
        Grant("slack", T2.workspace, Scope.WORKSPACE, "U9", now + timedelta(hours=1)),
    )
    body, _, sig = good.partition(".")
    tampered = body.replace(
        body,
        links.sign(
            "x" * 32, Purpose.SESSION, Grant("slack", T1.workspace, Scope.WORKSPACE, "U9", now)
        ).partition(".")[0],
    )
    site.client.session.cookie_jar.update_cookies({COOKIE: f"{tampered}.{sig}"})
    response = await site.client.get("/dashboard")
    assert response.status == 403
    assert_no_data(await response.text())


async def test_personal_link_opens_only_its_own_page(site: Site):
    response = await open_link(site, site.link(T1, BOB, Scope.ME))
    assert response.headers["Location"] == "/dashboard/me"
    mine = await site.client.get("/dashboard/me")
    assert mine.status == 200
    text = await mine.text()
    assert "Bob Chen" in text and "Alice Martin" not in text
    for path in (
        "/dashboard",
        "/dashboard/leaderboards",
        "/dashboard/questions",
        "/dashboard/channels",
        f"/dashboard/players/{ALICE}",
    ):
        response = await site.client.get(path)
        assert response.status == 403, path
        assert "Alice Martin" not in await response.text()
    assert (await site.client.get(f"/dashboard/players/{BOB}")).status == 200


async def test_bad_sort_and_unknown_question(site: Site):
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
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
        path = site.link(T1, ADMIN)
        token = path.partition("token=")[2]
        opened = await replica.post(OPEN_PATH, data={"token": token}, allow_redirects=False)
        assert opened.status == 303
        # The link was used on one replica: the other refuses it too.
        assert (await open_link(site, path)).status == 403
        # The session cookie the second replica set opens pages on the first.
        cookie = opened.cookies[COOKIE].value
        site.client.session.cookie_jar.update_cookies({COOKIE: cookie})
        page = await site.client.get("/dashboard")
        assert page.status == 200 and "Alice Martin" in await page.text()


async def test_a_preview_crawler_leaves_the_link_unused(site: Site):
    # The review's reproduction: a HEAD as a link-preview bot took the link, and the person's
    # click afterwards was told "already used".
    path = site.link(T1, ADMIN)
    crawler = {"User-Agent": "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)"}
    head = await site.client.head(path, headers=crawler, allow_redirects=False)
    assert head.status == 200 and COOKIE not in head.cookies
    for _ in range(3):
        got = await site.client.get(path, headers=crawler, allow_redirects=False)
        assert got.status == 200 and COOKIE not in got.cookies
        text = await got.text()
        assert "<button" in text and 'method="post"' in text
        assert_no_data(text)
    opened = await open_link(site, path)
    assert opened.status == 303 and COOKIE in opened.cookies
    assert (await site.client.get("/dashboard")).status == 200


async def test_the_open_page_allows_its_own_form_only(site: Site):
    page = await site.client.get(site.link(T1, ADMIN))
    policy = page.headers["Content-Security-Policy"]
    assert "form-action 'self'" in policy and "script-src" not in policy


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
async def test_another_site_cannot_post_a_link(site: Site, headers: dict[str, str]):
    # Login CSRF: another site's form posting a link of its own into this browser.
    path = site.link(T1, ADMIN)
    refused = await open_link(site, path, **headers)
    assert refused.status == 403 and COOKIE not in refused.cookies
    assert "own page" in await refused.text()
    # The link was not spent: its own page still opens it.
    assert (await open_link(site, path)).status == 303


async def test_a_post_without_a_valid_token_is_refused(site: Site):
    for data in ({}, {"token": "garbage"}, {"token": "é.é"}):
        response = await site.client.post(OPEN_PATH, data=data, allow_redirects=False)
        assert response.status == 403 and COOKIE not in response.cookies


async def test_non_ascii_tokens_and_cookies_are_refused_not_a_500(site: Site):
    # The review's reproduction: hmac.compare_digest raised TypeError on non-ASCII text.
    response = await site.client.get("/dashboard/open?token=a.%C3%A9", allow_redirects=False)
    assert response.status == 403
    response = await site.client.get(
        "/dashboard", headers={"Cookie": f"{COOKIE}=a.\u00e9"}, allow_redirects=False
    )
    assert response.status == 403
    assert_no_data(await response.text())


@pytest.mark.parametrize("value", ["x" * 16, "y" * 31, f"{'a' * 40},{'b' * 20}", " , "])
def test_a_short_dashboard_secret_is_one_clear_line(value: str, monkeypatch: pytest.MonkeyPatch):
    from bot.config import load_settings
    from bot.errors import ConfigError

    monkeypatch.setenv("QUIZBOT_DASHBOARD_SECRET", value)
    with pytest.raises(ConfigError) as refused:
        load_settings()
    assert str(refused.value).startswith(
        "bad setting QUIZBOT_DASHBOARD_SECRET: each key in it must be at least 32 characters"
    )


def test_each_workspace_signs_with_its_own_key(site: Site):
    # The review: one key signed every workspace's values, and any member could get a
    # (message, MAC) pair for it. Each workspace's key is now derived from the secret.
    now = site.clock()
    grant = Grant("slack", T1.workspace, Scope.WORKSPACE, ADMIN, now + timedelta(hours=1))
    body = links.sign(SECRET, Purpose.SESSION, grant).partition(".")[0]
    message = f"quizbot-dashboard:session:{body}".encode()
    with_the_bare_secret = links._b64(hmac.new(SECRET.encode(), message, "sha256").digest())
    with pytest.raises(links.BadToken, match="bad signature"):
        links.verify(SECRET, Purpose.SESSION, f"{body}.{with_the_bare_secret}", now)
    keys = {links._workspace_key(SECRET, "slack", w) for w in (T1.workspace, T2.workspace)}
    assert len(keys) == 2


def test_the_secret_is_rotated_with_a_list_of_keys(site: Site):
    old, new = "o" * 40, "n" * 40
    now = site.clock()
    grant = Grant("slack", T1.workspace, Scope.ME, ADMIN, now + timedelta(hours=1))
    signed_old = links.sign(old, Purpose.SESSION, grant)
    assert links.verify(f"{new},{old}", Purpose.SESSION, signed_old, now) == grant
    signed_new = links.sign(f"{new},{old}", Purpose.SESSION, grant)
    assert links.verify(new, Purpose.SESSION, signed_new, now) == grant
    with pytest.raises(links.BadToken):
        links.verify(new, Purpose.SESSION, signed_old, now)


async def test_revoking_a_workspace_ends_its_sessions_and_links(site: Site):
    store = site.dashboard.store
    unused = site.link(T1, ADMIN)
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
    assert (await site.client.get("/dashboard")).status == 200
    site.clock.advance(seconds=1)
    await store.revoke_dashboard_sessions("slack", T1.workspace, site.clock())  # type: ignore[attr-defined]
    ended = await site.client.get("/dashboard")
    assert ended.status == 403 and "This session was ended" in await ended.text()
    refused = await open_link(site, unused)
    assert refused.status == 403 and "This link was ended" in await refused.text()
    # A link asked for afterwards opens a new session.
    site.clock.advance(seconds=1)
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
    assert (await site.client.get("/dashboard")).status == 200
    # Another workspace's sessions are untouched.
    site.client.session.cookie_jar.clear()
    assert (await open_link(site, site.link(T2, "U9"))).status == 303
    assert (await site.client.get("/dashboard")).status == 200


async def test_questions_open_on_the_most_answered(site: Site) -> None:
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
    page = await (await site.client.get("/dashboard/questions")).text()
    assert "Answers ▼" in page and "Flags ▼" not in page
    # seed-q had 3 answers in T1, the others fewer: it comes first, not the alphabet's first.
    rows = page.split("<tbody>", 1)[1]
    assert rows.index("seed-q") < rows.index("second-q")


async def test_wording_on_the_player_and_channel_pages(site: Site) -> None:
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
    channels = await (await site.client.get("/dashboard/channels")).text()
    assert "Answers cannot be changed" in channels and "can not" not in channels
    site.client.session.cookie_jar.clear()
    assert (await open_link(site, site.link(T1, BOB, Scope.ME))).status == 303
    me = await (await site.client.get("/dashboard/me")).text()
    assert "reviews due now" in me and "waiting" not in me


async def test_the_dashboards_pages_are_mounted_only_while_it_is_on(store, site: Site):
    # What every platform's serve mounts beside its own routes: nothing while the secret is
    # unset; with it, the pages, under PREFIX.
    settings = SimpleNamespace(dashboard_secret="", public_url="https://quiz.example.org")
    rt = SimpleNamespace(settings=settings, engine=site.engine, store=store)
    assert dashboard_pages(cast(Runtime, rt)) is None
    settings.dashboard_secret = SECRET
    mount = dashboard_pages(cast(Runtime, rt))
    assert mount is not None
    app = web.Application()
    mount(app)
    paths = {r.resource.canonical for r in app.router.routes() if r.resource is not None}
    assert OPEN_PATH in paths and "/dashboard" in paths
