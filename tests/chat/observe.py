"""Watch the chat core finish its work, so a test waits on that instead of on the clock; and
keep the logging set-up a test's in-process ``quizbot`` run changes from outliving the test."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from bot.chat import Chat

WITHIN = 20.0


class Handled:
    """Counts the events the chat core started and finished, so a test can wait on them."""

    def __init__(self, chat: Chat) -> None:
        self.started = 0
        self.count = 0
        self._changed = asyncio.Condition()
        for name in (
            "command",
            "click",
            "reaction",
            "review_click",
            "track_click",
            "practice_press",
            "confidence_press",
            "decide_press",
            "refuse",
            "submit",
            "open_form",
        ):
            setattr(chat, name, self._counted(getattr(chat, name)))

    def _counted(self, handle: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
        async def counted(*args: Any, **kwargs: Any) -> None:
            self.started += 1
            try:
                await handle(*args, **kwargs)
            finally:
                self.count += 1
                async with self._changed:
                    self._changed.notify_all()

        return counted

    async def wait(self, count: int, within: float = WITHIN) -> None:
        """Wait until ``count`` events have been handled in all."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: self.count >= count)


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """Put the root logger's handlers and level back after the block.

    ``quizbot``'s ``main`` installs a handler on the stderr of the moment; in a test that is the
    capture of that one test, closed once it ends, and every later log line would fail on it.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
