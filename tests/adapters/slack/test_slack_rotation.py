"""Token rotation for the many-workspace install: expiring tokens are renewed, on every path.

A request renews its workspace's token through Bolt's authorisation; a timer's reveal, which
no request carries, renews it through the installation store. Both go through SLACK_API_URL.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.adapters.slack._oauth import BOT_SCOPES
from bot.adapters.slack.app import serve
from bot.storage import InstallationSql, TokenCipher, open_store
from bot.storage._schema import rounds
from tests.adapters.slack.conftest import Sender, round_of
from tests.adapters.slack.test_slack_oauth import TOKEN_KEY, install, oauth_settings
from tests.standins.slack_api import SlackApiStandIn

TEAM = "TROT"
# Slack's rotating tokens live 12 hours; these expire within the renewal margin at once.
LIFETIME = 60
TOKEN = re.compile(r"xoxe\.xoxb-(\w+)-(\d+)")


class RotatingStandIn(SlackApiStandIn):
    """The stand-in, installing with rotating tokens and renewing them on request."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.issued = itertools.count(1)
        self.refreshed: list[str] = []
        self.live: dict[str, str] = {}  # refresh token -> the workspace it renews

    def _pair(self, team: str) -> dict[str, Any]:
        n = next(self.issued)
        refresh = f"xoxe-1-{team}-{n}"
        self.live[refresh] = team
        return {
            "access_token": f"xoxe.xoxb-{team}-{n}",
            "refresh_token": refresh,
            "expires_in": LIFETIME,
            "token_type": "bot",
        }

    def _answer(self, method: str, params: dict[str, Any], request: web.Request) -> dict:
        if method == "oauth.v2.access" and params.get("grant_type") == "refresh_token":
            refresh = str(params.get("refresh_token"))
            team = self.live.pop(refresh, None)  # a refresh token works once
            if team is None:
                return {"ok": False, "error": "invalid_refresh_token"}
            self.refreshed.append(refresh)
            return {"ok": True, **self._pair(team)}
        if method == "oauth.v2.access":
            team = str(params["code"]).removeprefix("code-")
            return {
                "ok": True,
                "app_id": "A0APP",
                "authed_user": {"id": f"UADMIN{team}"},
                "scope": ",".join(BOT_SCOPES),
                "bot_user_id": "U0BOT",
                "team": {"id": team, "name": f"Team {team}"},
                "enterprise": None,
                "is_enterprise_install": False,
                **self._pair(team),
            }
        answer = super()._answer(method, params, request)
        if method == "auth.test":
            match = TOKEN.fullmatch(
                request.headers.get("Authorization", "").removeprefix("Bearer ")
            )
            if match:
                answer["team_id"] = match.group(1)
        return answer


@pytest.fixture
async def standin() -> AsyncIterator[RotatingStandIn]:
    s = RotatingStandIn()
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


async def test_rotating_tokens_are_renewed_for_requests_and_for_timers(
    tmp_path: Path, standin: RotatingStandIn
) -> None:
    settings = oauth_settings(tmp_path, standin)
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        serve(
            settings,
            host="127.0.0.1",
            port=0,
            stop=stop,
            on_ready=ready.set_result,
            timer_interval=0.1,
        )
    )
    store = await open_store(settings.database_url)
    try:
        events = await asyncio.wait_for(ready, 20)
        base = events.removesuffix("/slack/events")
        async with aiohttp.ClientSession() as session:
            status, _ = await install(session, base, TEAM)
            assert status == 200
            sql = InstallationSql(store, TokenCipher.from_setting(TOKEN_KEY))
            stored = await sql.find_installation(None, TEAM)
            assert stored is not None
            assert stored["bot_refresh_token"] == f"xoxe-1-{TEAM}-1"
            assert stored["bot_token_expires_at"] is not None

            # A request: Bolt renews the token before the listener runs, and stores the new one.
            slack = Sender(standin=standin, session=session, url=events)
            reply = await slack.command("next storage", team=TEAM, respond_to="next")
            assert reply.status == 200
            (post,) = await standin.wait_calls("chat.postMessage")
            assert standin.refreshed == [f"xoxe-1-{TEAM}-1"]
            assert post.token == f"xoxe.xoxb-{TEAM}-2"
            stored = await sql.find_installation(None, TEAM)
            assert stored is not None and stored["bot_token"] == f"xoxe.xoxb-{TEAM}-2"

            # A timer: no request to authorise, so the store renews the token itself.
            round_id = round_of(post.params["blocks"])
            async with store.write() as conn:
                past = datetime.now(UTC) - timedelta(minutes=1)
                await conn.execute(
                    rounds.update().where(rounds.c.id == round_id).values(closes_at=past)
                )
            (update,) = await standin.wait_calls("chat.update", within=10)
            assert standin.refreshed[:2] == [f"xoxe-1-{TEAM}-1", f"xoxe-1-{TEAM}-2"]
            assert update.token == f"xoxe.xoxb-{TEAM}-3"
            # Renewal went to SLACK_API_URL, authenticated as the app, never with a bot token.
            renewals = [c for c in standin.of("oauth.v2.access") if "refresh_token" in c.params]
            assert len(renewals) == len(standin.refreshed)
            assert all(not (c.token or "").startswith("xoxe.") for c in renewals)
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)
        await store.close()
