"""Fixtures: the real Bolt app on a real engine and SQLite file, talking to the Slack stand-in."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from slack_sdk.signature import SignatureVerifier

from bot.adapters.slack.app import SlackBot, assemble, start_http, web_client
from bot.bank.loader import load_bank
from bot.chat import Charts
from bot.config import Settings
from bot.engine import QuizEngine
from bot.storage import open_store
from tests.chat.observe import Handled
from tests.conftest import FakeClock
from tests.standins.slack_api import SlackApiStandIn

BANK = Path(__file__).parent / "bank"
SECRET = "test-signing-secret"
TEAM = "T0TEAM"
ADMIN = "UADMIN"
CHANNEL = "C0QUIZ"
CLICKS = itertools.count(1)
# The handle (username) Slack sends with a person's requests; unlisted ids get id.lower().
HANDLES: dict[str, str] = {}


def make_settings(tmp_path: Path, standin: SlackApiStandIn, **extra: Any) -> Settings:
    """Return settings for a bot on the stand-in, a SQLite file and the test bank."""
    values: dict[str, Any] = {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": standin.url,
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}",
        "QUIZBOT_QUESTIONS": str(BANK),
    }
    values.update(extra)
    return Settings(**values)


def signed_headers(body: str, *, timestamp: int | None = None, secret: str = SECRET) -> dict:
    """Return the headers Slack sends with a request body."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}


@dataclass
class Reply:
    """An HTTP answer of the app (an ack's text is the body, as Bolt sends it)."""

    status: int
    text: str


@dataclass
class Sender:
    """Sends signed Slack requests to a bot's /slack/events URL."""

    standin: SlackApiStandIn
    session: aiohttp.ClientSession
    url: str
    sent: int = field(default=0, init=False)

    async def post(
        self, body: str, content_type: str, headers: dict | None = None, **signing: Any
    ) -> Reply:
        """Send a raw body, signed unless ``headers`` carries its own signature."""
        all_headers = {"Content-Type": content_type, **signed_headers(body, **signing)}
        all_headers.update(headers or {})
        async with self.session.post(
            self.url, data=body.encode(), headers=all_headers, timeout=aiohttp.ClientTimeout(10)
        ) as resp:
            return Reply(resp.status, await resp.text())

    async def command(
        self,
        text: str = "",
        *,
        user: str = "U1",
        channel: str = CHANNEL,
        team: str = TEAM,
        name: str = "/quiz",
        respond_to: str = "cmd",
        **signing: Any,
    ) -> Reply:
        """Send a slash command, as Slack posts it (form-encoded)."""
        self.sent += 1
        form = {
            "token": "legacy",
            "team_id": team,
            "team_domain": "standin",
            "channel_id": channel,
            "channel_name": "quiz",
            "user_id": user,
            "user_name": HANDLES.get(user, user.lower()),
            "command": name,
            "text": text,
            "api_app_id": "A0APP",
            "response_url": self.standin.response_url(respond_to),
            "trigger_id": f"trigger-{self.sent}",
        }
        body = urllib.parse.urlencode(form)
        return await self.post(body, "application/x-www-form-urlencoded", **signing)

    async def click(
        self,
        round_id: int,
        key: str,
        *,
        user: str,
        team: str = TEAM,
        channel: str = CHANNEL,
        message_ts: str = "1700000000.000001",
        respond_to: str | None = None,
        **signing: Any,
    ) -> Reply:
        """Send a button click on a card (block_actions, form-encoded ``payload=``)."""
        self.sent += 1
        payload = block_actions(
            round_id,
            key,
            user=user,
            team=team,
            channel=channel,
            message_ts=message_ts,
            response_url=self.standin.response_url(respond_to or f"click-{user}"),
            # Each click is its own request, as from Slack: no two sign alike, whichever
            # sender (replica) they go to.
            trigger_id=f"trigger-{next(CLICKS)}",
        )
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        return await self.post(body, "application/x-www-form-urlencoded", **signing)

    async def view_submission(
        self, view: dict, values: dict[str, str], *, user: str, team: str = TEAM, **signing: Any
    ) -> Reply:
        """Send a modal sent back, as Slack posts it: the opened view with ``values`` typed
        into its inputs (by block id; a select's value picked from its options)."""
        self.sent += 1
        payload = view_submission(view, values, user=user, team=team, trigger=self.sent)
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        return await self.post(body, "application/x-www-form-urlencoded", **signing)

    async def event(
        self, event: dict, *, event_id: str, retry: int | None = None, team: str = TEAM
    ) -> Reply:
        """Send an Events API callback, optionally marked as Slack's retry number ``retry``."""
        body = json.dumps(event_callback(event, event_id=event_id, team=team))
        if retry is None:
            return await self.post(body, "application/json")
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        # Slack signs each delivery when it sends it: a redelivery has its own timestamp.
        stamp = int(time.time()) + retry
        return await self.post(body, "application/json", headers=headers, timestamp=stamp)

    async def post_card(self, tag: str = "storage", channel: str = CHANNEL) -> int:
        """Post a question with ``/quiz next TAG`` and return its round id, read off the card."""
        before = len(self.standin.of("chat.postMessage"))
        reply = await self.command(f"next {tag}", channel=channel)
        assert reply.status == 200, reply
        calls = await self.standin.wait_calls("chat.postMessage", before + 1)
        return round_of(calls[before].params["blocks"])


def round_of(blocks: list[dict]) -> int:
    """Return the round id a card's buttons answer."""
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    return int(actions["block_id"].split("_")[2])


@dataclass
class Harness(Sender):
    """The bot served over HTTP on port 0, on a real engine whose clock the test moves."""

    bot: SlackBot = field(kw_only=True)
    engine: QuizEngine = field(kw_only=True)
    clock: FakeClock = field(kw_only=True)
    handled: Handled = field(kw_only=True)

    async def open_card(self, tag: str = "storage", channel: str = CHANNEL) -> tuple[int, str]:
        """Post a question and return its round id and message ts, once the ts is stored."""
        round_id = await self.post_card(tag, channel)
        # The handler stores the message ts right after the post returns.
        for _ in range(200):
            rnd = await self.engine.get_round(round_id)
            if rnd.message_ref is not None:
                return round_id, rnd.message_ref
            await asyncio.sleep(0.01)
        raise AssertionError(f"round {round_id} never got its message ts")


def block_actions(
    round_id: int,
    key: str,
    *,
    user: str,
    team: str = TEAM,
    channel: str = CHANNEL,
    message_ts: str = "1700000000.000001",
    response_url: str = "http://127.0.0.1:9/respond/none",
    trigger_id: str = "trigger",
) -> dict:
    """Return the payload Slack sends when someone clicks a choice button."""
    return {
        "type": "block_actions",
        "team": {"id": team, "domain": "standin"},
        "user": {"id": user, "username": HANDLES.get(user, user.lower()), "team_id": team},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": trigger_id,
        "channel": {"id": channel, "name": "quiz"},
        "message": {"type": "message", "ts": message_ts, "text": "Quiz"},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": f"quiz:{round_id}:{key}",
                "block_id": f"quiz_round_{round_id}_choices",
                "value": key,
                "text": {"type": "plain_text", "text": key},
                "action_ts": "1700000002.000000",
            }
        ],
    }


def view_submission(
    view: dict, values: dict[str, str], *, user: str, team: str = TEAM, trigger: int = 0
) -> dict:
    """Return the payload Slack sends when a modal's submit button is pressed."""
    state: dict[str, dict] = {}
    for block in view.get("blocks", []):
        if block.get("type") != "input":
            continue
        element = block["element"]
        value = values.get(block["block_id"], "")
        if element["type"] == "static_select":
            picked = next((o for o in element["options"] if o["value"] == value), None)
            given = {"type": "static_select", "selected_option": picked}
        else:
            given = {"type": element["type"], "value": value or None}
        state[block["block_id"]] = {element["action_id"]: given}
    return {
        "type": "view_submission",
        "team": {"id": team, "domain": "standin"},
        "user": {"id": user, "username": HANDLES.get(user, user.lower()), "team_id": team},
        "api_app_id": "A0APP",
        "token": "legacy",
        "trigger_id": f"trigger-view-{trigger}",
        "view": {
            **view,
            "team_id": team,
            "state": {"values": state},
            "hash": "1700000000.abc",
        },
        "response_urls": [],
    }


def event_callback(event: dict, *, event_id: str, team: str = TEAM) -> dict:
    """Wrap an event the way the Events API delivers it."""
    return {
        "token": "legacy",
        "team_id": team,
        "api_app_id": "A0APP",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1700000003,
        "authorizations": [
            {"team_id": team, "user_id": "U0BOT", "is_bot": True, "is_enterprise_install": False}
        ],
    }


def reaction(user: str, name: str, ts: str, channel: str = CHANNEL) -> dict:
    """Return a ``reaction_added`` event on a message."""
    return {
        "type": "reaction_added",
        "user": user,
        "reaction": name,
        "item_user": "U0BOT",
        "item": {"type": "message", "channel": channel, "ts": ts},
        "event_ts": "1700000003.000100",
    }


@pytest.fixture
async def standin() -> AsyncIterator[SlackApiStandIn]:
    """A running Slack Web API stand-in, with one workspace admin."""
    api = SlackApiStandIn(team_id=TEAM, admins=[ADMIN])
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


@pytest.fixture
async def engine(tmp_path: Path, clock: FakeClock) -> AsyncIterator[QuizEngine]:
    """A real engine on a SQLite file and the test bank."""
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    try:
        yield QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(0))
    finally:
        await store.close()


@pytest.fixture(scope="session")
def charts() -> Charts:
    """The /bandwidth catalogue and renderer (loaded once)."""
    return Charts.load()


@pytest.fixture
async def slack(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
) -> AsyncIterator[Harness]:
    """The Bolt app served by aiohttp on 127.0.0.1, port 0."""
    settings = make_settings(tmp_path, standin, QUIZBOT_ADMINS="UCONFIGURED")
    async with aiohttp.ClientSession() as session:
        client = web_client(settings, session)
        bot = assemble(settings, engine, client, charts=charts, refresh_every=0.05)
        runner, port = await start_http(bot.app, "127.0.0.1", 0)
        try:
            yield Harness(
                bot=bot,
                engine=engine,
                handled=Handled(bot.chat),
                standin=standin,
                session=session,
                url=f"http://127.0.0.1:{port}/slack/events",
                clock=clock,
            )
        finally:
            # A flow still running when the test ends would be cancelled with the loop: in the
            # middle of a store call, that leaves its connection to the garbage collector.
            assert await bot.chat.drain.wait(10), "a handler was still running after 10 s"
            await runner.cleanup()
            await bot.settle()
