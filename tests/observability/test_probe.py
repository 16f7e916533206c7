"""The image's HEALTHCHECK command: exit 0 when the local endpoint says ok, 1 otherwise."""

from __future__ import annotations

import asyncio
import os
import socket
import sys

from bot.observability.health import start_health_server
from bot.storage import SqlStore


async def run_probe(port: int, path: str) -> int:
    env = {**os.environ, "QUIZBOT_HEALTH_PORT": str(port)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.observability.probe", path, env=env
    )
    return await asyncio.wait_for(proc.wait(), 30)


async def test_probe_passes_on_a_live_server_and_fails_when_not_ready(store: SqlStore):
    srv = await start_health_server(store, host="127.0.0.1", port=0)
    try:
        assert await run_probe(srv.port, "/healthz") == 0
        assert await run_probe(srv.port, "/readyz") == 0
        assert await run_probe(srv.port, "/nowhere") == 1
    finally:
        await srv.close()


async def test_probe_fails_when_nothing_listens():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert await run_probe(free, "/healthz") == 1
