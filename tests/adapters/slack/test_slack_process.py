"""``quizbot slack`` as a process, started the way a user starts it, playing a round over HTTP."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from tests.adapters.slack.conftest import BANK, SECRET, Sender
from tests.standins.slack_api import SlackApiStandIn

ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+/slack/events)")

pytestmark = pytest.mark.slow


def bot_env(**extra: str) -> dict[str, str]:
    """Return the environment without any Slack or quizbot settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "QUIZBOT_"))}
    env.update(extra)
    return env


@asynccontextmanager
async def quizbot_slack(env: dict[str, str]) -> AsyncIterator[tuple[str, list[str]]]:
    """Start ``python -m bot slack`` on a free port; yield its URL and its log lines so far."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "slack",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def drain() -> None:
        # Keep reading so the child never blocks on a full pipe.
        assert proc.stderr is not None
        async for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            lines.append(line)
            match = LISTENING.search(line)
            if match and not found.done():
                found.set_result(match.group(1))
        if not found.done():
            found.set_exception(AssertionError("quizbot slack exited:\n" + "\n".join(lines)))

    reader = asyncio.create_task(drain())
    try:
        url = await asyncio.wait_for(found, 60)
        yield url, lines
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 20) == 0, "\n".join(lines)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await asyncio.wait_for(reader, 10)


async def test_quizbot_slack_plays_a_round_end_to_end(
    tmp_path: Path, standin: SlackApiStandIn
) -> None:
    env = bot_env(
        SLACK_BOT_TOKEN="xoxb-e2e",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=standin.url,
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
    )
    async with quizbot_slack(env) as (url, _lines), aiohttp.ClientSession() as session:
        timeout = aiohttp.ClientTimeout(5)
        async with session.get(url.replace("/slack/events", "/healthz"), timeout=timeout) as r:
            assert r.status == 200
        slack = Sender(standin=standin, session=session, url=url)
        round_id = await slack.post_card("storage")
        (card,) = standin.of("chat.postMessage")
        ts = "1700000000.000001"

        for user, key in [("U1", "A"), ("U2", "B"), ("U3", "A")]:
            reply = await slack.click(round_id, key, user=user, message_ts=ts)
            assert reply.status == 200
        told = await standin.wait_calls("chat.postEphemeral", 3, within=10)
        assert sorted(c.params["user"] for c in told) == ["U1", "U2", "U3"]
        assert sum("*Right!*" in c.params["text"] for c in told) == 2

        assert (await slack.command("close")).status == 200
        await standin.wait_calls("chat.postMessage", 2, within=10)
        thread = standin.of("chat.postMessage")[1].params
        assert thread["thread_ts"] == ts
        assert "Lustre stripes each file" in str(thread["blocks"])
        await standin.wait_for(
            lambda: any("3 people answered" in str(u.params) for u in standin.of("chat.update"))
        )

        assert (await slack.command("leaderboard", user="U2", respond_to="lb")).status == 200
        await standin.wait_for(lambda: bool(standin.responses_to("lb")), within=10)
        (board,) = standin.responses_to("lb")
        assert board["text"].splitlines()[1:] == [
            "1. <@U1>: 3 pts, 1/1 right",
            "2. <@U3>: 3 pts, 1/1 right",
            "3. <@U2>: 0 pts, 0/1 right",
        ]
    assert card.params["channel"] == "C0QUIZ"


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
    ],
)
async def test_missing_credentials_are_one_line_and_exit_2(env: dict, variable: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "slack",
        cwd=ROOT,
        env=bot_env(**env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 2
    assert out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("quizbot: ")
    assert variable in lines[0]


async def test_a_missing_bot_token_points_at_the_slack_page_and_the_oauth_pair() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "slack",
        cwd=ROOT,
        env=bot_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 2
    line = err.decode().strip()
    assert "docs/slack.md" in line
    assert "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET" in line
