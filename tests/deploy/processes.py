"""Start ``quizbot slack`` as a user does, and stop it gently (SIGTERM) or not (SIGKILL).

The child process itself is the reliability harness's ``BotProcess``; this adds the names the
deploy and operations tests read best with.
"""

from __future__ import annotations

from tests.adapters.slack.test_slack_process import bot_env
from tests.reliability.harness import BotProcess

__all__ = ["SlackProcess", "bot_env"]


class SlackProcess(BotProcess):
    """One ``python -m bot slack`` child on a free port, its stderr collected line by line."""

    def __init__(self, env: dict[str, str], name: str = "slack") -> None:
        super().__init__(env)
        self.name = name

    async def start(self, within: float = 60) -> str:
        """Start the process; return its root URL (probes, metrics) once it listens."""
        await super().start(within)
        return self.base

    @property
    def events_url(self) -> str:
        """Return the URL Slack posts events and interactions to."""
        return self.url

    def log(self) -> str:
        """Return everything the process logged."""
        return "\n".join(self.lines)

    async def terminate(self, within: float = 30) -> int:
        """Send SIGTERM and return the exit status."""
        return await self.stop(within)

    async def kill(self) -> int:  # type: ignore[override]
        """Send SIGKILL (no handler runs, nothing is flushed) and return the exit status."""
        await super().kill()
        assert self.proc is not None
        return self.proc.returncode if self.proc.returncode is not None else -1

    async def close(self) -> None:
        """Make sure the process is gone (for a test's ``finally``)."""
        if self.proc is not None and self.proc.returncode is None:
            await self.kill()
