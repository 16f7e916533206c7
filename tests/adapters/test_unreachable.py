"""``quizbot slack`` (Socket Mode) and ``quizbot discord`` while the platform refuses connections.

Each retries with a growing wait, one log line a failed try and no traceback, and a SIGTERM or a
Ctrl-C (SIGINT) ends the process within ``QUIZBOT_SHUTDOWN_TIMEOUT``, connected or not.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHUTDOWN_TIMEOUT = 3
TRY = re.compile(
    r"WARNING bot\.chat\.runner: cannot reach (\w+) \(try (\d+): .*\); "
    r"trying again in (\d+) s$"
)

pytestmark = pytest.mark.slow


@contextmanager
def refusing_port() -> Iterator[int]:
    """Yield a local port that refuses every connection: bound, never listening."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Return the environment without platform or quizbot settings, plus ``extra``."""
    prefixes = ("SLACK_", "DISCORD_", "QUIZBOT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}",
        QUIZBOT_SHUTDOWN_TIMEOUT=str(SHUTDOWN_TIMEOUT),
        QUIZBOT_LOG_FORMAT="text",
    )
    env.update(extra)
    return env


def platform_env(platform: str, port: int, tmp_path: Path) -> dict[str, str]:
    """Return the settings that point ``platform`` at the refusing port."""
    base = f"http://127.0.0.1:{port}"
    if platform == "slack":
        return child_env(
            tmp_path,
            SLACK_BOT_TOKEN="xoxb-7071234567-unreachable",
            SLACK_APP_TOKEN="xapp-1-A07ABC123-unreachable",
            SLACK_API_URL=f"{base}/api/",
        )
    return child_env(
        tmp_path,
        DISCORD_TOKEN="MTIzNDU2Nzg5MDEyMzQ1Njc4.unreachable.token",
        DISCORD_API_URL=f"{base}/api/v10",
        DISCORD_GATEWAY_URL=f"ws://127.0.0.1:{port}/gateway",
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("platform", ["slack", "discord"])
async def test_a_signal_stops_a_bot_that_cannot_connect(
    platform: str, sig: signal.Signals, tmp_path: Path
) -> None:
    with refusing_port() as port:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            platform,
            cwd=ROOT,
            env=platform_env(platform, port, tmp_path),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stderr is not None
        lines: list[str] = []
        tries: list[re.Match[str]] = []
        try:

            async def two_failed_tries() -> None:
                assert proc.stderr is not None
                async for raw in proc.stderr:
                    lines.append(raw.decode(errors="replace").rstrip())
                    match = TRY.search(lines[-1])
                    if match:
                        tries.append(match)
                        if len(tries) == 2:
                            return
                raise AssertionError("the bot exited:\n" + "\n".join(lines))

            await asyncio.wait_for(two_failed_tries(), 60)
            proc.send_signal(sig)
            rest = await asyncio.wait_for(proc.stderr.read(), SHUTDOWN_TIMEOUT + 5)
            status = await asyncio.wait_for(proc.wait(), 5)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    lines += rest.decode(errors="replace").splitlines()
    told = "\n".join(lines)
    assert status == 0, told
    assert [m.group(1) for m in tries] == [platform.capitalize()] * 2
    # One line a try, waiting longer each time.
    assert [(m.group(2), m.group(3)) for m in tries] == [("1", "1"), ("2", "2")]
    assert "Traceback" not in told
    assert "stopped before the connection was made" in told
    assert not any("voice will NOT be supported" in line for line in lines)
