"""``quizbot db upgrade`` and ``quizbot db status`` as a user runs them: a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.storage import latest_version, open_store


def quizbot(url: str, *args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUIZBOT_", "SLACK_"))}
    env["QUIZBOT_DATABASE_URL"] = url
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_upgrade_reports_from_and_to_and_is_idempotent(database_url: str, tmp_path: Path):
    latest = latest_version()
    before = quizbot(database_url, "db", "status", cwd=tmp_path)
    assert before.returncode == 1, before.stderr
    assert f"schema version 0, this quizbot needs {latest}" in before.stdout

    first = quizbot(database_url, "db", "upgrade", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"schema version 0 -> {latest}" in first.stdout

    second = quizbot(database_url, "db", "upgrade", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert f"schema version {latest}, already up to date" in second.stdout

    after = quizbot(database_url, "db", "status", cwd=tmp_path)
    assert (after.returncode, after.stderr) == (0, "")
    assert f"schema version {latest}, up to date" in after.stdout

    store = await open_store(database_url, migrate=False)
    try:
        assert await store.schema_version() == latest
    finally:
        await store.close()


def test_unreachable_database_is_one_line_without_password(tmp_path: Path):
    url = "postgresql+asyncpg://quiz:hunter2@127.0.0.1:9/quizbot"
    result = quizbot(url, "db", "upgrade", cwd=tmp_path)
    assert result.returncode == 1
    assert "hunter2" not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    *retries, last = result.stderr.strip().splitlines()
    assert last.startswith("quizbot db: cannot use the database at postgresql")
    # Before giving up, the store tried again, saying so each time.
    assert len(retries) == 3 and all("trying again" in line for line in retries)


@pytest.mark.parametrize("url", ["mysql://x@localhost/db", "not a url"])
def test_unsupported_url_is_a_config_error(url: str, tmp_path: Path):
    result = quizbot(url, "db", "status", cwd=tmp_path)
    assert result.returncode == 2
    assert "QUIZBOT_DATABASE_URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_db_needs_an_action(tmp_path: Path):
    result = quizbot("sqlite+aiosqlite:///x.db", "db", cwd=tmp_path)
    assert result.returncode == 2
    assert "ACTION" in result.stderr


def test_auto_migrate_false_refuses_an_old_schema_until_upgraded(tmp_path: Path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'manual.db'}"
    env = {"QUIZBOT_AUTO_MIGRATE": "false"}

    def play() -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("QUIZBOT_", "SLACK_"))}
        return subprocess.run(
            [sys.executable, "-m", "bot", "play", "--count", "1"],
            env={**base, **env, "QUIZBOT_DATABASE_URL": url},
            cwd=tmp_path,
            input="q\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    refused = play()
    assert refused.returncode == 2
    assert "run `quizbot db upgrade`" in refused.stderr and "Traceback" not in refused.stderr
    assert quizbot(url, "db", "upgrade", cwd=tmp_path).returncode == 0
    assert play().returncode == 0


@pytest.mark.parametrize(("pool", "overflow"), [(1, 0), (3, 7)])
def test_pool_sizes_reach_the_postgresql_engine(pool: int, overflow: int):
    from bot.storage import make_engine

    engine = make_engine(
        "postgresql+asyncpg://quiz@127.0.0.1:9/quizbot", pool_size=pool, max_overflow=overflow
    )
    # Connections opened under load are kept, never more than pool + overflow in all: an
    # overflow connection closed on return was reopened moments later under steady load.
    assert (engine.pool.size(), engine.pool._max_overflow) == (pool + overflow, 0)  # type: ignore[attr-defined]


async def test_token_key_rotation_from_the_command_line(tmp_path: Path):
    from datetime import UTC, datetime

    from bot.storage import InstallationSql, TokenCipher
    from bot.storage._schema import installations

    url = f"sqlite+aiosqlite:///{tmp_path / 'keys.db'}"
    old, new = (quizbot(url, "db", "new-token-key", cwd=tmp_path) for _ in range(2))
    assert old.returncode == new.returncode == 0
    old_key, new_key = old.stdout.strip(), new.stdout.strip()
    assert old_key != new_key and len(old_key) == 44
    store = await open_store(url)
    try:
        now = datetime(2026, 3, 2, tzinfo=UTC)
        await InstallationSql(store, TokenCipher([old_key])).save_installation(
            None, "T1", "U1", {"team_id": "T1", "bot_token": "xoxb-1-old"}, now
        )
        async with store.write() as conn:
            await conn.execute(
                installations.insert().values(
                    enterprise_id="",
                    team_id="T2",
                    user_id="",
                    data='{"team_id": "T2"}',
                    installed_at=now,
                )
            )
    finally:
        await store.close()

    missing = quizbot(url, "db", "reencrypt", cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "QUIZBOT_TOKEN_KEY is not set" in missing.stderr

    done = quizbot(url, "db", "reencrypt", cwd=tmp_path, QUIZBOT_TOKEN_KEY=f"{new_key},{old_key}")
    assert done.returncode == 0, done.stderr
    assert "1 plain and 2 older-key installation(s) encrypted" in done.stdout
    store = await open_store(url)
    try:
        found = await InstallationSql(store, TokenCipher([new_key])).find_installation(None, "T1")
        assert found is not None and found["bot_token"] == "xoxb-1-old"
    finally:
        await store.close()


def test_a_url_that_does_not_parse_is_not_echoed():
    # The review: the refusal quoted the whole value, password included.
    from bot.errors import ConfigError
    from bot.storage import make_engine

    with pytest.raises(ConfigError) as refused:
        make_engine("postgresql+asyncpg//quiz:hunter2@db/quiz")
    assert "hunter2" not in str(refused.value)
    assert "QUIZBOT_DATABASE_URL" in str(refused.value)
