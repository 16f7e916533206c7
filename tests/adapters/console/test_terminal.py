"""The terminal as a platform: typed commands and presses reach the chat core's flows."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.console.app import PLACE, Terminal
from bot.chat.buttons import PRACTICE_NEXT, PRACTICE_STOP
from bot.chat.content import Feedback, ReviewAsk
from bot.storage import open_store
from tests.conformance.drivers import make_engine
from tests.conftest import FakeClock


@pytest.fixture
async def terminal(tmp_path: Path) -> AsyncIterator[tuple[Terminal, io.StringIO]]:
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    out = io.StringIO()
    try:
        yield Terminal(make_engine(store, FakeClock()), "ada", out), out
    finally:
        await store.close()


async def test_a_card_for_a_channel_is_refused_and_opens_no_round(terminal):
    term, out = terminal
    told = await term.command("next", {})
    assert "I can't post in this channel yet: run quizbot slack, discord or teams" in " ".join(
        out.getvalue().split()
    )
    assert told is not None and not isinstance(told, ReviewAsk)
    assert await term.engine.open_round(PLACE) is None


async def test_practice_and_its_stop_are_the_chat_flow_and_its_buttons(terminal):
    term, out = terminal
    asked = await term.command("practice", {"count": 2})
    assert isinstance(asked, ReviewAsk) and asked.practice
    assert "Practice 1: a new question" in out.getvalue()
    stopped = await term.press(PRACTICE_STOP)
    assert isinstance(stopped, Feedback)
    assert out.getvalue().rstrip().endswith("Practice stopped.")


async def test_a_bad_option_gets_the_usage_and_starts_nothing(terminal):
    term, out = terminal
    told = await term.command("practice", {"count": 500})
    assert not isinstance(told, ReviewAsk)
    assert "'count' must be between 1 and 50." in out.getvalue()
    assert "/quiz practice" in out.getvalue()
    # Nothing started: Next says so.
    await term.press(PRACTICE_NEXT)
    assert "You have no practice session" in " ".join(out.getvalue().split())
