"""Many workspaces: the OAuth install flow, a token per workspace, and workspaces kept apart."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import sqlalchemy as sa
from aiohttp import web

from bot.adapters.slack._oauth import BOT_SCOPES
from bot.adapters.slack.app import check_credentials, serve
from bot.config import Settings
from bot.engine.model import Place
from bot.errors import ConfigError
from bot.ratelimit import RateLimit
from bot.storage import InstallationSql, SqlStore, TokenCipher, open_store
from bot.storage._schema import installations, oauth_states
from tests.adapters.slack.conftest import BANK, CHANNEL, SECRET, Sender, round_of
from tests.standins.slack_api import SlackApiStandIn

CLIENT_SECRET = "client-secret-not-for-logs"
TOKEN_KEY = "1GmGr0YorEVVe8GZ0h3qEpn_mLQzhudbDdMaV6uiWS4="
TIMEOUT = aiohttp.ClientTimeout(total=10)


def bot_token(team: str) -> str:
    return f"xoxb-{team}-token-not-for-logs"


class OAuthStandIn(SlackApiStandIn):
    """The stand-in, also exchanging an install code for the bot token of the code's team."""

    def _answer(self, method: str, params: dict[str, Any], request: web.Request) -> dict:
        if method == "oauth.v2.access":
            team = str(params["code"]).removeprefix("code-")
            return {
                "ok": True,
                "app_id": "A0APP",
                "authed_user": {"id": f"UADMIN{team}"},
                "scope": ",".join(BOT_SCOPES),
                "token_type": "bot",
                "access_token": bot_token(team),
                "bot_user_id": "U0BOT",
                "team": {"id": team, "name": f"Team {team}"},
                "enterprise": None,
                "is_enterprise_install": False,
            }
        answer = super()._answer(method, params, request)
        if method == "auth.test":
            # Answer for the workspace whose token was used, as Slack does.
            token = request.headers.get("Authorization", "").removeprefix("Bearer ")
            match = re.fullmatch(r"xoxb-(\w+)-token-not-for-logs", token)
            if match:
                answer["team_id"] = match.group(1)
        return answer


@pytest.fixture
async def standin() -> AsyncIterator[OAuthStandIn]:
    s = OAuthStandIn(admins=["UADMIN"])
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


def oauth_settings(tmp_path: Path, standin: SlackApiStandIn) -> Settings:
    return Settings(
        SLACK_CLIENT_ID="1111.2222",
        SLACK_CLIENT_SECRET=CLIENT_SECRET,
        SLACK_SIGNING_SECRET=SECRET,
        QUIZBOT_TOKEN_KEY=TOKEN_KEY,
        SLACK_API_URL=standin.url,
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'oauth.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_SECRET is not set"),
        ({"SLACK_CLIENT_SECRET": "x"}, "SLACK_CLIENT_ID is not set"),
        (
            {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "x", "SLACK_APP_TOKEN": "xapp-1"},
            "needs HTTP mode",
        ),
        # Tokens are never stored as plain text: OAuth mode needs the key that encrypts them.
        ({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "x"}, "QUIZBOT_TOKEN_KEY is not set"),
        (
            {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "x", "QUIZBOT_TOKEN_KEY": "short"},
            "must be Fernet keys",
        ),
    ],
)
def test_oauth_settings_are_checked(env: dict[str, str], message: str):
    with pytest.raises(ConfigError, match=message):
        check_credentials(Settings(SLACK_SIGNING_SECRET="s", **env))


def test_oauth_mode_needs_no_bot_token():
    settings = Settings(
        SLACK_CLIENT_ID="1.2",
        SLACK_CLIENT_SECRET="x",
        SLACK_SIGNING_SECRET="s",
        QUIZBOT_TOKEN_KEY=TOKEN_KEY,
    )
    assert check_credentials(settings) is False  # HTTP mode


@asynccontextmanager
async def running(settings: Settings, **options: Any) -> AsyncIterator[str]:
    """Serve the app on port 0 with ``serve``'s options; yield its events URL; stop it after."""
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        serve(settings, host="127.0.0.1", port=0, stop=stop, on_ready=ready.set_result, **options)
    )
    try:
        yield await asyncio.wait_for(ready, 20)
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


async def install(session: aiohttp.ClientSession, base: str, team: str) -> tuple[int, str]:
    """Go through the install page and Slack's redirect back; return the callback's answer."""
    async with session.get(f"{base}/slack/install", timeout=TIMEOUT) as page:
        assert page.status == 200
        html = await page.text()
        cookie = page.headers["Set-Cookie"].split(";")[0]
    state = re.search(r"state=([\w-]+)", html)
    assert state is not None and "client_id=1111.2222" in html
    url = f"{base}/slack/oauth_redirect?code=code-{team}&state={state.group(1)}"
    async with session.get(url, headers={"Cookie": cookie}, timeout=TIMEOUT) as done:
        return done.status, url + "\n" + cookie


async def test_two_workspaces_install_and_stay_apart(
    tmp_path: Path, standin: OAuthStandIn, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    settings = oauth_settings(tmp_path, standin)
    store: SqlStore | None = None
    try:
        async with (
            running(settings, timer_interval=0.1) as events,
            aiohttp.ClientSession() as session,
        ):
            base = events.removesuffix("/slack/events")
            for team in ("TAAA", "TBBB"):
                status, used = await install(session, base, team)
                assert status == 200
            # A state works once: the same callback again is refused.
            url, cookie = used.split("\n")
            async with session.get(url, headers={"Cookie": cookie}, timeout=TIMEOUT) as again:
                assert again.status in (400, 401)
            assert len(standin.of("oauth.v2.access")) == 2  # the replay never reached Slack

            store = await open_store(settings.database_url)
            sql = InstallationSql(store, TokenCipher.from_setting(TOKEN_KEY))
            for team in ("TAAA", "TBBB"):
                stored = await sql.find_installation(None, team)
                assert stored is not None and stored["bot_token"] == bot_token(team)

            slack = Sender(standin=standin, session=session, url=events)
            posted: dict[str, int] = {}
            for team in ("TAAA", "TBBB"):
                before = len(standin.of("chat.postMessage"))
                reply = await slack.command("next storage", team=team, respond_to=f"next-{team}")
                assert reply.status == 200
                calls = await standin.wait_calls("chat.postMessage", before + 1)
                # Each workspace's card goes out with that workspace's own token.
                assert calls[before].token == bot_token(team)
                posted[team] = round_of(calls[before].params["blocks"])

            # The same channel and user ids in both workspaces: TBBB cannot answer TAAA's round.
            a_round = posted["TAAA"]
            await slack.click(a_round, "A", user="U1", team="TBBB", respond_to="cross")
            await standin.wait_for(lambda: bool(standin.responses_to("cross")), within=10)
            assert "does not exist here" in standin.responses_to("cross")[0]["text"]
            assert await store.count_answers(a_round) == 0
            await slack.click(a_round, "A", user="U1", team="TAAA")
            told = await standin.wait_calls("chat.postEphemeral", 1, within=10)
            assert told[0].token == bot_token("TAAA")
            assert await store.count_answers(a_round) == 1

            # Closing in TBBB's channel closes TBBB's round only.
            await slack.command("close", team="TBBB", respond_to="close-b")
            await standin.wait_for(
                lambda: any(
                    c.token == bot_token("TBBB") and c.params.get("thread_ts")
                    for c in standin.of("chat.postMessage")
                ),
                within=10,
            )
            b_round = await store.get_round(posted["TBBB"])
            a_open = await store.get_round(a_round)
            assert b_round is not None and b_round.closed_at is not None
            assert a_open is not None and a_open.closed_at is None

            # Scores: TBBB's leaderboard does not see TAAA's point.
            await slack.command("leaderboard all", team="TBBB", user="U1", respond_to="lb-b")
            await slack.command("leaderboard all", team="TAAA", user="U1", respond_to="lb-a")
            await standin.wait_for(
                lambda: bool(standin.responses_to("lb-a")) and bool(standin.responses_to("lb-b")),
                within=10,
            )
            assert "<@U1>" in standin.responses_to("lb-a")[0]["text"]
            assert "<@U1>" not in standin.responses_to("lb-b")[0]["text"]

            # Schedules: an admin of TBBB can neither see nor stop TAAA's daily question.
            await slack.command("schedule 09:30 UTC", team="TAAA", user="UADMIN", respond_to="s-a")
            # A command is acknowledged before its work is done: the schedule is set once told.
            await standin.wait_for(lambda: bool(standin.responses_to("s-a")), within=10)
            await slack.command("schedule", team="TBBB", user="UADMIN", respond_to="show-b")
            await slack.command("schedule off", team="TBBB", user="UADMIN", respond_to="off-b")
            await slack.command("schedule", team="TAAA", user="U1", respond_to="show-a")
            names = ("s-a", "show-b", "off-b", "show-a")
            await standin.wait_for(lambda: all(standin.responses_to(n) for n in names), within=10)
            assert "Scheduled" in standin.responses_to("s-a")[0]["text"]
            for name in ("show-b", "off-b"):
                assert "no daily question" in standin.responses_to(name)[0]["text"]
            assert "09:30" in standin.responses_to("show-a")[0]["text"]
            # The admin check asked Slack with the token of the workspace asking.
            asked = {c.token for c in standin.of("users.info")}
            assert asked == {bot_token("TAAA"), bot_token("TBBB")}

            # The timer closes TAAA's round on its own and reveals it with TAAA's token.
            async with store.write() as conn:
                from bot.storage._schema import rounds

                past = datetime.now(UTC) - timedelta(minutes=1)
                await conn.execute(
                    rounds.update().where(rounds.c.id == a_round).values(closes_at=past)
                )
            await standin.wait_for(
                lambda: any(
                    c.token == bot_token("TAAA") and c.params.get("thread_ts")
                    for c in standin.of("chat.postMessage")
                ),
                within=10,
            )
            assert {c.token for c in standin.of("chat.update")} <= {
                bot_token("TAAA"),
                bot_token("TBBB"),
            }
            assert all(c.params["channel"] == CHANNEL for c in standin.of("chat.update"))
    finally:
        if store is not None:
            await store.close()
    secrets_seen = [
        r.getMessage()
        for r in caplog.records
        if "token-not-for-logs" in r.getMessage() or CLIENT_SECRET in r.getMessage()
    ]
    assert secrets_seen == []


async def test_an_uninstall_forgets_the_workspace_tokens_and_schedules(
    tmp_path: Path, standin: OAuthStandIn
):
    settings = oauth_settings(tmp_path, standin)
    store: SqlStore | None = None
    try:
        async with running(settings) as events, aiohttp.ClientSession() as session:
            base = events.removesuffix("/slack/events")
            for team in ("TAAA", "TBBB"):
                status, _ = await install(session, base, team)
                assert status == 200
            slack = Sender(standin=standin, session=session, url=events)
            for team in ("TAAA", "TBBB"):
                await slack.command(
                    "schedule 09:30 UTC", team=team, user="UADMIN", respond_to=f"s-{team}"
                )
            await standin.wait_for(
                lambda: all(standin.responses_to(f"s-{t}") for t in ("TAAA", "TBBB")), within=10
            )
            store = await open_store(settings.database_url)
            sql = InstallationSql(store, TokenCipher.from_setting(TOKEN_KEY))

            def place(team: str) -> Place:
                return Place("slack", team, CHANNEL)

            assert await store.get_schedule(place("TAAA")) is not None
            for team in ("TAAA", "TBBB"):
                await slack.command("next", team=team, user="UADMIN", respond_to=f"n-{team}")

            # Each round exists before its card is posted.
            await standin.wait_for(lambda: len(standin.of("chat.postMessage")) == 2, within=10)
            assert all([await store.open_round(place(t)) for t in ("TAAA", "TBBB")])
            posted = len(standin.calls)

            reply = await slack.event({"type": "app_uninstalled"}, event_id="EvGONE", team="TAAA")
            assert reply.status == 200
            assert await sql.find_installation(None, "TAAA") is None
            assert await store.get_schedule(place("TAAA")) is None
            # Its open round is closed, and no reveal is sent where the app no longer is.
            assert await store.open_round(place("TAAA")) is None
            reveal = ("chat.update", "chat.postMessage", "files.completeUploadExternal")
            assert [c.method for c in standin.calls[posted:] if c.method in reveal] == []
            # The other workspace keeps its installation, its daily question and its round.
            assert await sql.find_installation(None, "TBBB") is not None
            assert await store.get_schedule(place("TBBB")) is not None
            assert await store.open_round(place("TBBB")) is not None

            revoked = {"type": "tokens_revoked", "tokens": {"bot": ["U0BOT"]}}
            reply = await slack.event(revoked, event_id="EvREVOKED", team="TBBB")
            assert reply.status == 200
            assert await sql.find_installation(None, "TBBB") is None
            # Revoking tokens is not leaving: the schedule stays until the app is removed.
            assert await store.get_schedule(place("TBBB")) is not None
    finally:
        if store is not None:
            await store.close()


async def test_install_page_loads_write_no_rows_and_are_limited_per_client(
    tmp_path: Path, standin: OAuthStandIn
):
    # The review's reproduction: each anonymous GET /slack/install wrote a state row.
    settings = oauth_settings(tmp_path, standin)
    async with running(settings) as events, aiohttp.ClientSession() as session:
        base = events.removesuffix("/slack/events")
        statuses = []
        for _ in range(50):
            async with session.get(f"{base}/slack/install", timeout=TIMEOUT) as page:
                statuses.append(page.status)
                retry_after = page.headers.get("Retry-After")
                body = await page.text()
        # A burst of 10 per client address, then one every six seconds.
        assert statuses == [200] * 10 + [429] * 40
        assert retry_after is not None and 1 <= int(retry_after) <= 6
        assert "try again in" in body
        store = await open_store(settings.database_url)
        try:
            async with store.read() as conn:
                rows = (
                    await conn.execute(sa.select(sa.func.count()).select_from(oauth_states))
                ).scalar()
        finally:
            await store.close()
        assert rows == 0


async def test_rate_limit_refills_per_client_and_forgets_the_oldest():
    now = [0.0]
    limit = RateLimit(per_minute=10, burst=2, max_clients=2, clock=lambda: now[0])
    assert [limit.check("a") for _ in range(3)] == [0.0, 0.0, 6.0]
    assert limit.check("b") == 0.0  # another client has its own allowance
    now[0] = 6.0
    assert limit.check("a") == 0.0  # one more after six seconds
    assert limit.check("a") == 6.0
    limit.check("c")  # a third client: the least recently seen ("b") is forgotten
    assert set(limit._buckets) == {"a", "c"}


async def test_startup_encrypts_installations_stored_as_plain_text(
    tmp_path: Path, standin: OAuthStandIn
):
    settings = oauth_settings(tmp_path, standin)
    store = await open_store(settings.database_url)
    try:
        async with store.write() as conn:
            await conn.execute(
                installations.insert().values(
                    enterprise_id="",
                    team_id="TOLD",
                    user_id="",
                    data='{"team_id": "TOLD", "bot_token": "xoxb-TOLD-token-not-for-logs"}',
                    installed_at=datetime.now(UTC),
                )
            )
        async with running(settings):
            pass
        async with store.read() as conn:
            [stored] = (await conn.execute(sa.select(installations.c.data))).scalars()
        assert "xoxb" not in stored
        found = await InstallationSql(store, TokenCipher.from_setting(TOKEN_KEY)).find_installation(
            None, "TOLD"
        )
        assert found is not None and found["bot_token"] == bot_token("TOLD")
    finally:
        await store.close()
