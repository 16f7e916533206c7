"""``quizbot dashboard revoke`` as a user runs it: a subprocess."""

from __future__ import annotations

from pathlib import Path

from bot.storage import open_store
from tests.cli.test_db import quizbot


async def test_revoke_ends_a_workspaces_sessions(tmp_path: Path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"
    done = quizbot(url, "dashboard", "revoke", "slack", "T1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "every dashboard session of slack T1 issued before" in done.stdout
    store = await open_store(url)
    try:
        assert await store.dashboard_revoked_at("slack", "T1") is not None
        assert await store.dashboard_revoked_at("slack", "T2") is None
    finally:
        await store.close()


async def test_revoke_takes_every_chat_platform_whose_people_get_links(tmp_path: Path):
    # Microsoft Teams issues dashboard links too: its sessions must be revocable.
    url = f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"
    tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    done = quizbot(url, "dashboard", "revoke", "teams", tenant, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    store = await open_store(url)
    try:
        assert await store.dashboard_revoked_at("teams", tenant) is not None
    finally:
        await store.close()


def test_revoke_needs_a_known_platform(tmp_path: Path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}"
    bad = quizbot(url, "dashboard", "revoke", "console", "T1", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
