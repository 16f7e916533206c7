"""Start ``quizbot slack`` as a user does, and stop it gently (SIGTERM) or not (SIGKILL)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+)/slack/events")


def bot_env(**extra: str) -> dict[str, str]:
    """Return this environment less any Slack or quizbot setting, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "QUIZBOT_"))}
    env.update(extra)
    return env


class SlackProcess:
    """One ``python -m bot slack`` child on a free port, its stderr collected line by line."""

    def __init__(self, env: dict[str, str], name: str = "slack") -> None:
        self.env = env
        self.name = name
        self.lines: list[str] = []
        self.base = ""
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self, within: float = 60) -> str:
        """Start the process; return its base URL once it listens."""
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "slack",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            cwd=ROOT,
            env=self.env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def read() -> None:
            # Keep reading so the child never blocks on a full pipe.
            assert self.proc is not None and self.proc.stderr is not None
            async for raw in self.proc.stderr:
                line = raw.decode(errors="replace").rstrip()
                self.lines.append(line)
                match = LISTENING.search(line)
                if match and not found.done():
                    found.set_result(match.group(1))
            if not found.done():
                found.set_exception(AssertionError(f"{self.name} exited:\n{self.log()}"))

        self._reader = asyncio.create_task(read())
        self.base = await asyncio.wait_for(found, within)
        return self.base

    @property
    def events_url(self) -> str:
        return f"{self.base}/slack/events"

    def log(self) -> str:
        return "\n".join(self.lines)

    async def terminate(self, within: float = 30) -> int:
        """Send SIGTERM and return the exit status."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        return await self._wait(within)

    async def kill(self) -> int:
        """Send SIGKILL: no handler runs, nothing is flushed."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()
        return await self._wait(10)

    async def _wait(self, within: float) -> int:
        assert self.proc is not None
        try:
            status = await asyncio.wait_for(self.proc.wait(), within)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
            if self._reader is not None:
                await asyncio.wait_for(self._reader, 10)
        return status

    async def close(self) -> None:
        """Make sure the process is gone (for a test's ``finally``)."""
        if self.proc is not None and self.proc.returncode is None:
            await self.kill()
