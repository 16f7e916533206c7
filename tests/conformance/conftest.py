"""The conformance suite's faces: every scenario runs on each platform's driver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.drivers import CHAT_DRIVERS, driving
from tests.conftest import FakeClock

CHATS = tuple(CHAT_DRIVERS)


@pytest.fixture(params=CHATS)
async def chat(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A chat platform's driver: the real library, the bot on the chat runner, a stand-in."""
    async with driving(request.param, tmp_path, FakeClock()) as driver:
        yield driver


@pytest.fixture(params=(*CHATS, "terminal"))
async def face(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """Any face, the terminal included, for what the terminal can do too."""
    async with driving(request.param, tmp_path, FakeClock()) as driver:
        yield driver
