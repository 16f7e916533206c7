"""The stand-ins keep the platform rules the exactly-once daily post relies on."""

from __future__ import annotations

import asyncio

import aiohttp
import discord
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.discord.app import configure_endpoints
from tests.standins.discord_api import DiscordStandIn
from tests.standins.slack_api import SlackApiStandIn


async def test_discord_creates_one_message_per_enforced_nonce_within_its_window() -> None:
    async with DiscordStandIn() as api:
        configure_endpoints(api.api_url, api.gateway_url)
        client = discord.Client(intents=discord.Intents.none())
        try:
            await client.login(api.token)
            channel = client.get_partial_messageable(api.channel_ids()[0], guild_id=api.guild_id)
            first = await channel.send("card", nonce="quiz-card-1")
            again = await channel.send("card, sent again", nonce="quiz-card-1")
            other = await channel.send("another card", nonce="quiz-card-2")
            plain = await channel.send("no nonce")
            # Past the window a nonce makes a new message again.
            api.nonce_window = 0.0
            later = await channel.send("card, much later", nonce="quiz-card-1")
            history = [m async for m in channel.history(limit=10, after=discord.Object(1))]
        finally:
            await client.close()
    assert again.id == first.id and again.content == "card"
    assert len({first.id, other.id, plain.id, later.id}) == 4
    # Oldest first once read back with ``after``, and without their nonces, as Discord does.
    assert [m.id for m in history] == [first.id, other.id, plain.id, later.id]
    assert all(m.nonce is None for m in history)
    sent = api.find("POST", r"^/channels/\d+/messages$")
    # discord.py gives a send without a nonce one of its own, enforced too.
    assert [c.body.get("enforce_nonce") for c in sent] == [True] * 5
    assert sent[3].body["nonce"] not in ("quiz-card-1", "quiz-card-2")


async def test_discord_a_lost_answer_leaves_the_message_made() -> None:
    async with DiscordStandIn() as api:
        configure_endpoints(api.api_url, api.gateway_url)
        client = discord.Client(intents=discord.Intents.none())
        api.lose_answer("POST", r"^/channels/\d+/messages$")
        try:
            await client.login(api.token)
            channel = client.get_partial_messageable(api.channel_ids()[0], guild_id=api.guild_id)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(channel.send("card", nonce="n1"), 1.0)
        finally:
            await client.close()
        assert [m["content"] for m in api.messages_in(api.channel_ids()[0])] == ["card"]


async def test_slack_history_is_newest_first_paged_and_shows_metadata_only_when_asked() -> None:
    standin = SlackApiStandIn()
    await standin.start()
    try:
        async with aiohttp.ClientSession() as http:
            client = AsyncWebClient(token="xoxb-test", base_url=standin.url, session=http)
            meta = {"event_type": "quizbot_card", "event_payload": {"round": 7}}
            posted = [
                (await client.chat_postMessage(channel="C1", text=f"m{i}", metadata=meta))["ts"]
                for i in range(3)
            ]
            await client.chat_postMessage(channel="C1", text="reply", thread_ts=posted[0])
            await client.chat_postMessage(channel="C2", text="elsewhere")
            bare = await client.conversations_history(channel="C1", oldest="0")
            first = await client.conversations_history(
                channel="C1", oldest="0", limit=2, include_all_metadata=True
            )
            cursor = first["response_metadata"]["next_cursor"]
            second = await client.conversations_history(
                channel="C1", oldest="0", limit=2, include_all_metadata=True, cursor=cursor
            )
            future = await client.conversations_history(channel="C1", oldest="99999999999")
    finally:
        await standin.stop()
    assert [m["ts"] for m in bare["messages"]] == posted[::-1]  # thread replies are not there
    assert all("metadata" not in m for m in bare["messages"])
    assert [m["ts"] for m in first["messages"] + second["messages"]] == posted[::-1]
    assert first["has_more"] and not second["has_more"]
    assert first["messages"][0]["metadata"] == meta
    assert future["messages"] == []


async def test_slack_history_needs_its_scope_per_kind_of_channel() -> None:
    standin = SlackApiStandIn(granted={"chat:write", "channels:history"})
    await standin.start()
    try:
        async with aiohttp.ClientSession() as http:
            client = AsyncWebClient(token="xoxb-test", base_url=standin.url, session=http)
            await client.conversations_history(channel="C1")
            with pytest.raises(Exception, match="missing_scope"):
                await client.conversations_history(channel="G1")
    finally:
        await standin.stop()
    assert standin.refused == [("conversations.history", "missing_scope")]
