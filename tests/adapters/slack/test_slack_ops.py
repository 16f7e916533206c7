"""``quizbot slack`` for operators: probes and metrics on its port, and a drain on SIGTERM."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from tests.adapters.slack.conftest import BANK, SECRET, Sender
from tests.deploy.processes import SlackProcess, bot_env
from tests.standins.slack_api import SlackApiStandIn

pytestmark = pytest.mark.slow
TIMEOUT = aiohttp.ClientTimeout(total=10)


class SlowFeedback(SlackApiStandIn):
    """The stand-in, taking ``delay`` seconds over each private reply."""

    delay = 0.0

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["method"] == "chat.postEphemeral" and self.delay:
            await asyncio.sleep(self.delay)
        return await super()._api(request)


@pytest.fixture
async def slow_standin() -> AsyncIterator[SlowFeedback]:
    s = SlowFeedback()
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def metric(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                return float(sample.value)
    return 0.0


async def get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url, timeout=TIMEOUT) as response:
        return response.status, await response.text()


async def test_probes_and_metrics_on_the_operations_port_and_not_the_public_one(
    tmp_path: Path, slow_standin: SlowFeedback
):
    health_port = free_port()
    env = bot_env(
        SLACK_BOT_TOKEN="xoxb-ops",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slow_standin.url,
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'ops.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
        QUIZBOT_OPS_PORT=str(health_port),
    )
    bot = SlackProcess(env)
    try:
        base = await bot.start()
        ops = f"http://127.0.0.1:{health_port}"
        async with aiohttp.ClientSession() as session:
            for root in (base, ops):
                assert await get(session, f"{root}/healthz") == (200, '{"ok": true}')
            assert await get(session, f"{ops}/readyz") == (200, '{"ok": true}')
            # The public events port: no database ping and no metrics for whoever asks.
            assert (await get(session, f"{base}/readyz"))[0] == 404
            assert (await get(session, f"{base}/metrics"))[0] == 404
            slack = Sender(standin=slow_standin, session=session, url=bot.events_url)
            round_id = await slack.post_card("storage")
            slow_standin.fail("chat.postEphemeral", "channel_not_found")
            assert (await slack.click(round_id, "A", user="U1")).status == 200
            assert (await slack.click(round_id, "B", user="U2")).status == 200
            await slow_standin.wait_calls("chat.postEphemeral", 2, within=10)
            # A handler counts itself once its last call has returned: wait for both to be done.
            async with asyncio.timeout(10):
                while True:
                    status, text = await get(session, f"{ops}/metrics")
                    assert status == 200
                    done = metric(text, "quizbot_handler_seconds_count", kind="block_actions")
                    if done >= 2 and metric(text, "quizbot_handlers_in_flight") == 0:
                        break
                    await asyncio.sleep(0.05)
            assert metric(text, "quizbot_rounds_opened_total", platform="slack") == 1
            assert metric(text, "quizbot_answers_total", platform="slack", status="accepted") == 2
            assert metric(text, "quizbot_handler_seconds_count", kind="block_actions") == 2
            assert metric(text, "quizbot_handler_seconds_count", kind="command") == 1
            assert (
                metric(
                    text,
                    "quizbot_platform_api_errors_total",
                    platform="slack",
                    kind="api:channel_not_found",
                )
                == 1
            )
            assert metric(text, "quizbot_handlers_in_flight") == 0
        assert await bot.terminate() == 0, bot.log()
    finally:
        await bot.close()


async def test_sigterm_lets_the_feedback_in_flight_reach_the_user(
    tmp_path: Path, slow_standin: SlowFeedback
):
    env = bot_env(
        SLACK_BOT_TOKEN="xoxb-drain",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slow_standin.url,
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'drain.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
        QUIZBOT_SHUTDOWN_TIMEOUT="15",
    )
    bot = SlackProcess(env)
    try:
        await bot.start()
        async with aiohttp.ClientSession() as session:
            slack = Sender(standin=slow_standin, session=session, url=bot.events_url)
            round_id = await slack.post_card("storage")
            slow_standin.delay = 2.0
            clicks = [slack.click(round_id, "A", user=f"U{n}") for n in range(5)]
            replies = await asyncio.gather(*clicks)
            assert [r.status for r in replies] == [200] * 5  # acked at once
            # Every click is now past its ack and waiting on Slack: stop the process.
            assert await bot.terminate(within=30) == 0, bot.log()
        told = slow_standin.of("chat.postEphemeral")
        assert sorted(c.params["user"] for c in told) == [f"U{n}" for n in range(5)]
        assert any("drained" in line for line in bot.lines), bot.log()
    finally:
        await bot.close()
