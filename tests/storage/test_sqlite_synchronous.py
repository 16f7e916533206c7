"""QUIZBOT_SQLITE_SYNCHRONOUS: FULL by default on every SQLite connection, validated."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.errors import ConfigError
from bot.storage import open_store

# PRAGMA synchronous reads back as a number.
LEVELS = {"NORMAL": 1, "FULL": 2, "EXTRA": 3}


async def levels_in_use(url: str, **kwargs: str) -> tuple[int, int]:
    """Open a store; return the synchronous level of its engine's and its writer's connections."""
    store = await open_store(url, **kwargs)
    try:
        async with store.engine.connect() as conn:
            engine_level = (await conn.exec_driver_sql("PRAGMA synchronous")).scalar_one()
        writer = store._writer
        assert writer is not None, "a SQLite file has a writer"

        def read(c: sqlite3.Connection) -> int:
            return int(c.execute("PRAGMA synchronous").fetchone()[0])

        return int(engine_level), await writer.run(read)
    finally:
        await store.close()


async def test_an_acknowledged_answer_is_synced_by_default(tmp_path: Path):
    # NORMAL in WAL mode syncs at checkpoints only: power loss could take an acknowledged answer.
    url = f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"
    assert await levels_in_use(url) == (LEVELS["FULL"], LEVELS["FULL"])


@pytest.mark.parametrize("level", ["NORMAL", "EXTRA", "FULL"])
async def test_the_setting_reaches_every_connection(tmp_path: Path, level: str, monkeypatch):
    monkeypatch.setenv("QUIZBOT_SQLITE_SYNCHRONOUS", level.lower())
    settings = load_settings()
    assert settings.sqlite_synchronous == level
    url = f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"
    got = await levels_in_use(url, sqlite_synchronous=settings.sqlite_synchronous)
    assert got == (LEVELS[level], LEVELS[level])


@pytest.mark.parametrize("bad", ["OFF", "fast", "2", ""])
def test_a_bad_level_is_one_clear_line(monkeypatch, bad: str):
    monkeypatch.setenv("QUIZBOT_SQLITE_SYNCHRONOUS", bad)
    if bad == "":
        # An empty value means unset: the default.
        assert load_settings().sqlite_synchronous == "FULL"
        return
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bad setting QUIZBOT_SQLITE_SYNCHRONOUS:")
    assert "FULL, NORMAL, EXTRA" in message


def test_the_cli_says_it_in_one_line_and_changes_nothing(tmp_path: Path):
    db = tmp_path / "quiz.db"
    env = {
        "PATH": "/usr/bin:/bin",
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{db}",
        "QUIZBOT_SQLITE_SYNCHRONOUS": "sometimes",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "QUIZBOT_SQLITE_SYNCHRONOUS" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not db.exists()
