"""Discord for operators: shards per process, probes on QUIZBOT_HEALTH_PORT, SIGTERM exits clean."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
import discord.utils
import pytest

from bot.adapters.discord.app import ShardedQuizClient, shard_options
from bot.config import Settings
from bot.engine import QuizEngine
from bot.errors import ConfigError
from tests.adapters.discord.conftest import BANK
from tests.standins.discord_api import DiscordStandIn

ROOT = Path(__file__).resolve().parents[3]


def test_discord_py_decodes_json_with_orjson():
    """The install has orjson, which discord.py then uses for every event and response it reads
    (a click's event carries the whole card: see docs/benchmarks.md, "Discord clicks")."""
    assert discord.utils.HAS_ORJSON
    assert discord.utils._from_json('{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, {}),
        ({"DISCORD_SHARD_COUNT": "4"}, {"shard_count": 4}),
        (
            {"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "3, 1"},
            {"shard_count": 4, "shard_ids": [1, 3]},
        ),
    ],
)
def test_shard_options_from_settings(env: dict[str, str], expected: dict[str, Any]):
    assert shard_options(Settings(**env)) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DISCORD_SHARD_IDS": "0"}, "needs DISCORD_SHARD_COUNT"),
        ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "2"}, "between 0 and 1"),
        ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "one"}, "shard numbers"),
        ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "-1"}, "between 0 and 1"),
    ],
)
def test_bad_shard_settings_name_the_variable(env: dict[str, str], message: str):
    with pytest.raises(ConfigError, match=message):
        shard_options(Settings(**env))


@pytest.mark.parametrize(
    ("options", "identified"),
    [({"shard_count": 2}, [[0, 2], [1, 2]]), ({"shard_count": 2, "shard_ids": [1]}, [[1, 2]])],
)
async def test_sharded_client_identifies_each_of_its_shards(
    engine: QuizEngine, api: DiscordStandIn, options: dict[str, Any], identified: list
):
    client = ShardedQuizClient(engine, guild_ready_timeout=0.01, refresh_every=30.0, **options)
    runner = asyncio.create_task(client.start(api.token))
    try:
        await api.wait_connected(count=len(identified), within=15)
        await asyncio.wait_for(client.wait_until_ready(), 15)
        assert sorted(i["shard"] for i in api.identifies) == identified
        assert client.shard_count == 2
    finally:
        await asyncio.wait_for(client.close(), 10)
        await asyncio.wait_for(runner, 10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
async def test_quizbot_discord_process_serves_probes_and_runs_its_shard(
    api: DiscordStandIn, tmp_path: Path
):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "QUIZBOT_"))}
    env.update(
        DISCORD_TOKEN=api.token,
        DISCORD_API_URL=api.api_url,
        DISCORD_GATEWAY_URL=api.gateway_url,
        DISCORD_SHARD_COUNT="2",
        DISCORD_SHARD_IDS="1",
        QUIZBOT_OPS_PORT=str(port),
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'd.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
        QUIZBOT_LOG_FORMAT="json",
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "discord",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await api.wait_connected(within=60)
        assert [i["shard"] for i in api.identifies] == [[1, 2]]
        timeout = aiohttp.ClientTimeout(total=5)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as r:
                assert r.status == 200
            # Ready once the gateway has said READY (and waited for its servers).
            async with asyncio.timeout(20):
                while True:
                    async with session.get(f"http://127.0.0.1:{port}/readyz") as r:
                        if r.status == 200:
                            break
                        assert "not connected" in await r.text()
                    await asyncio.sleep(0.2)
            async with session.get(f"http://127.0.0.1:{port}/metrics") as r:
                assert "quizbot_handlers_in_flight" in await r.text()
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        messages = [json.loads(line)["msg"] for line in err.decode().splitlines()]
        assert "running shards [1] of 2" in messages
        assert "drained: no handler in flight" in messages
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
