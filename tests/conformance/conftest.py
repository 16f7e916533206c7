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
    """A chat platform's driver: the real library, the bot on the chat runner, a stand-in.

    The terminal is not among them: a scenario written for ``chat`` needs what ``quizbot play``
    has not, a channel whose cards everyone answers (a round, its reveal, reactions, schedules,
    tracks), other people and admins, or the bot's buttons read back by id from the wire.
    What the terminal can do too is written for ``face``.
    """
    async with driving(request.param, tmp_path, FakeClock()) as driver:
        yield driver


@pytest.fixture(params=(*CHATS, "terminal"))
async def face(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """Any face, the terminal included, for what the terminal can do too."""
    async with driving(request.param, tmp_path, FakeClock()) as driver:
        yield driver
