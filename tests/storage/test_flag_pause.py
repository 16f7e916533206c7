"""QUIZBOT_FLAG_PAUSE: how many open reports take a question out of its workspace's rounds.

The setting is read as the bot reads it (``load_settings``, ``open_runtime``) and the reports are
made through the engine, on a SQLite file and, when configured, on PostgreSQL.
"""

from __future__ import annotations

import pytest

from bot.config import ConfigError, load_settings
from bot.engine.model import FlagReason, Place
from bot.runtime import open_runtime
from tests.conformance.drivers import BANK

CHECKPOINT = "slack-test-checkpoint"
PLACE = Place("slack", "T1", "C1")


async def asked_after(database_url: str, reporters: int, monkeypatch, pause: str | None) -> bool:
    """Return whether the question is still asked after this many players reported it."""
    monkeypatch.setenv("QUIZBOT_QUESTIONS", str(BANK))
    monkeypatch.setenv("QUIZBOT_DATABASE_URL", database_url)
    if pause is None:
        monkeypatch.delenv("QUIZBOT_FLAG_PAUSE", raising=False)
    else:
        monkeypatch.setenv("QUIZBOT_FLAG_PAUSE", pause)
    async with open_runtime(load_settings()) as rt:
        for n in range(reporters):
            flagged = await rt.engine.flag(
                PLACE, f"U{n}", FlagReason.WRONG, None, question_id=CHECKPOINT
            )
            assert flagged.open == n + 1
            paused = pause != "0" and n + 1 >= int(pause or 3)
            assert flagged.paused is paused
        bank = await rt.engine.bank_for(PLACE.platform, PLACE.workspace)
        other = await rt.engine.bank_for(PLACE.platform, "T2")
        assert CHECKPOINT in {q.id for q in other.filter("storage")}
        return CHECKPOINT in {q.id for q in bank.filter("storage")}


@pytest.mark.parametrize(
    ("pause", "reporters", "asked"),
    [
        (None, 2, True),  # the default is 3
        (None, 3, False),
        ("2", 1, True),
        ("2", 2, False),
        ("0", 5, True),  # 0: reports never pause a question
    ],
)
async def test_the_setting_decides_when_reports_pause_a_question(
    database_url: str, monkeypatch, pause: str | None, reporters: int, asked: bool
) -> None:
    assert await asked_after(database_url, reporters, monkeypatch, pause) is asked


@pytest.mark.parametrize("bad", ["-1", "three", "1001"])
def test_a_bad_value_is_one_clear_line(monkeypatch, bad: str) -> None:
    monkeypatch.setenv("QUIZBOT_FLAG_PAUSE", bad)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert "\n" not in message and message.startswith("bad setting QUIZBOT_FLAG_PAUSE:")
