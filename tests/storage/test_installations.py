"""Slack installations and OAuth states in the database, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from slack_sdk.oauth.installation_store import Installation

from bot.adapters.slack._oauth import SqlInstallationStore, SqlStateStore
from bot.storage import InstallationSql, SqlStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def installation(team: str, user: str, token: str) -> Installation:
    return Installation(
        app_id="A0APP",
        team_id=team,
        team_name=f"Team {team}",
        bot_token=token,
        bot_id=f"B{team}",
        bot_user_id="U0BOT",
        bot_scopes=["commands", "chat:write"],
        user_id=user,
        installed_at=T0.timestamp(),
    )


async def test_latest_installation_per_workspace_and_per_installer(store: SqlStore):
    installations = SqlInstallationStore(InstallationSql(store), clock=lambda: T0)
    await installations.async_save(installation("T1", "UADMIN", "xoxb-1-old"))
    await installations.async_save(installation("T1", "UOTHER", "xoxb-1-new"))
    await installations.async_save(installation("T2", "UADMIN", "xoxb-2"))

    latest = await installations.async_find_installation(enterprise_id=None, team_id="T1")
    assert latest is not None and latest.bot_token == "xoxb-1-new"
    assert latest.bot_scopes == ["commands", "chat:write"]
    mine = await installations.async_find_installation(
        enterprise_id=None, team_id="T1", user_id="UADMIN"
    )
    assert mine is not None and mine.bot_token == "xoxb-1-old"
    bot = await installations.async_find_bot(enterprise_id=None, team_id="T2")
    assert bot is not None and (bot.bot_token, bot.bot_id) == ("xoxb-2", "BT2")
    assert await installations.bot_token("T3") is None

    await installations.async_delete_bot(enterprise_id=None, team_id="T1")
    assert await installations.bot_token("T1") is None
    assert await installations.bot_token("T2") == "xoxb-2"


async def test_a_state_is_used_once_and_only_before_it_expires(store: SqlStore):
    now = [T0]
    states = SqlStateStore(InstallationSql(store), clock=lambda: now[0])
    first, second = await states.async_issue(), await states.async_issue()
    assert first != second and len(first) >= 32
    assert await states.async_consume(first) is True
    assert await states.async_consume(first) is False
    assert await states.async_consume("never-issued") is False
    now[0] = T0 + timedelta(minutes=11)
    assert await states.async_consume(second) is False  # expired


async def test_replicas_racing_for_one_state_let_exactly_one_through(database_url: str):
    from bot.storage import open_store

    stores = [await open_store(database_url) for _ in range(4)]
    try:
        issuer = SqlStateStore(InstallationSql(stores[0]), clock=lambda: T0)
        state = await issuer.async_issue()
        racers = [SqlStateStore(InstallationSql(s), clock=lambda: T0) for s in stores]
        results = await asyncio.gather(*(r.async_consume(state) for r in racers for _ in range(3)))
        assert sorted(results) == [False] * 11 + [True]
    finally:
        for s in stores:
            await s.close()
