"""``serve``: Socket Mode against the stand-in, HTTP mode's health check, timers across restarts."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.adapters.slack.app import check_credentials, serve
from bot.bank.loader import load_bank
from bot.config import Settings
from bot.engine import QuizEngine
from bot.engine.model import Place
from bot.errors import ConfigError
from bot.storage import open_store
from tests.adapters.slack.conftest import (
    BANK,
    CHANNEL,
    TEAM,
    block_actions,
    make_settings,
    round_of,
)
from tests.standins.slack_api import SlackApiStandIn


@asynccontextmanager
async def serving(settings: Settings, **options: Any) -> AsyncIterator[str]:
    """Run ``serve`` as a task; yield where it listens; stop it and wait for it on exit."""
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    on_ready: Callable[[str], None] = ready.set_result
    task = asyncio.create_task(serve(settings, stop=stop, on_ready=on_ready, **options))
    try:
        done, _ = await asyncio.wait({task, ready}, timeout=20, return_when="FIRST_COMPLETED")
        if task in done:
            task.result()  # raises what made serve() stop early
        assert ready in done, "serve() did not get ready in 20 s"
        yield ready.result()
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


def slash_command(text: str, *, user: str = "U1") -> dict:
    return {
        "token": "legacy",
        "team_id": TEAM,
        "channel_id": CHANNEL,
        "user_id": user,
        "command": "/quiz",
        "text": text,
        "api_app_id": "A0APP",
        "response_url": "http://127.0.0.1:9/unused",
        "trigger_id": "trigger",
    }


async def test_socket_mode_connects_through_the_api_url_and_acks_envelopes(
    tmp_path: Path, standin: SlackApiStandIn
) -> None:
    settings = make_settings(
        tmp_path, standin, SLACK_APP_TOKEN="xapp-test", SLACK_SIGNING_SECRET=""
    )
    async with serving(settings, timer_interval=0.05) as where:
        assert where == "socket-mode"
        await standin.wait_socket()
        (opened,) = standin.of("apps.connections.open")
        assert opened.token == "xapp-test"

        envelope = await standin.send_envelope("slash_commands", slash_command("next storage"))
        ack = await standin.wait_ack(envelope)
        assert ack["envelope_id"] == envelope
        (card,) = await standin.wait_calls("chat.postMessage")
        round_id = round_of(card.params["blocks"])

        click = block_actions(round_id, "A", user="U2", response_url=standin.response_url("s"))
        envelope = await standin.send_envelope("interactive", click)
        await standin.wait_ack(envelope)
        (told,) = await standin.wait_calls("chat.postEphemeral")
        assert told.params["user"] == "U2"
        assert "*Right!*" in told.params["text"]

        help_envelope = await standin.send_envelope("slash_commands", slash_command("help"))
        help_ack = await standin.wait_ack(help_envelope)
        assert "/quiz next [tag|computed]" in help_ack["payload"]["text"]


async def test_http_mode_answers_the_health_check(tmp_path: Path, standin: SlackApiStandIn) -> None:
    settings = make_settings(tmp_path, standin)
    async with serving(settings, host="127.0.0.1", port=0) as where, aiohttp.ClientSession() as s:
        assert where.startswith("http://127.0.0.1:") and where.endswith("/slack/events")
        health = where.replace("/slack/events", "/healthz")
        async with s.get(health, timeout=aiohttp.ClientTimeout(5)) as resp:
            assert resp.status == 200
            assert await resp.json() == {"ok": True}


async def test_a_round_that_fell_due_while_down_closes_on_start(
    tmp_path: Path, standin: SlackApiStandIn
) -> None:
    settings = make_settings(tmp_path, standin)
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    store = await open_store(settings.database_url)
    try:
        before = QuizEngine(store, load_bank([BANK]), clock=lambda: hour_ago, rng=random.Random(1))
        card = await before.start_round(Place("slack", TEAM, CHANNEL), tag="storage")
        await before.attach_message(card.round_id, "1690000000.000042")
    finally:
        await store.close()

    async with serving(settings, host="127.0.0.1", port=0, timer_interval=0.05):
        (update,) = await standin.wait_calls("chat.update", within=10)
        (thread,) = await standin.wait_calls("chat.postMessage")
    assert update.params["ts"] == "1690000000.000042"
    assert thread.params["thread_ts"] == "1690000000.000042"
    assert "Nobody answered this one" in str(update.params["blocks"])


@pytest.fixture
def no_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep credentials of the surrounding environment out of Settings()."""
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_slack_env")
@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({}, "SLACK_BOT_TOKEN"),
        ({"SLACK_APP_TOKEN": "xapp-1"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
    ],
)
def test_missing_credentials_name_the_variable(env: dict, missing: str) -> None:
    settings = Settings(**env)
    with pytest.raises(ConfigError, match=missing):
        check_credentials(settings)


@pytest.mark.usefixtures("no_slack_env")
@pytest.mark.parametrize(
    ("env", "socket_mode"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}, False),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}, True),
    ],
)
def test_the_app_token_chooses_socket_mode(env: dict, socket_mode: bool) -> None:
    assert check_credentials(Settings(**env)) is socket_mode
