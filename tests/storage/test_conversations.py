"""Conversation references and served chart images, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.storage import ChartSql, ConversationSql, Reference, SqlStore
from bot.storage._conversations import CHART_KEEP

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


async def test_a_reference_is_stored_refreshed_found_and_forgotten_by_team(
    store: SqlStore,
) -> None:
    sql = ConversationSql(store)
    assert await sql.find("teams", "t1", "19:a") is None
    await sql.remember("teams", "t1", "19:a", Reference("https://one/", {"team": "T"}), NOW)
    await sql.remember("teams", "t1", "19:a", Reference("https://two/", {"team": "T"}), NOW)
    await sql.remember("teams", "t1", "19:b", Reference("https://two/", {"team": "U"}), NOW)
    await sql.remember("teams", "t2", "19:a", Reference("https://two/", {"team": "T"}), NOW)
    assert await sql.find("teams", "t1", "19:a") == Reference("https://two/", {"team": "T"})
    assert await sql.channels_of_team("teams", "t1", "T") == ["19:a"]
    assert await sql.forget("teams", "t1", ["19:a"]) == 1
    assert await sql.find("teams", "t1", "19:a") is None
    assert await sql.find("teams", "t2", "19:a") is not None  # another tenant's is kept
    assert await sql.forget("teams", "t1", []) == 0
    assert await sql.forget_workspace("teams", "t1") == 1


async def test_a_chart_is_kept_once_served_by_key_and_dropped_when_old(store: SqlStore) -> None:
    sql = ChartSql(store)
    await sql.keep("old", b"\x89PNG old", NOW)
    await sql.keep("new", b"\x89PNG new", NOW)
    await sql.keep("new", b"\x89PNG new", NOW)  # the same chart again: kept once
    assert await sql.png("new") == b"\x89PNG new"
    assert await sql.png("missing") is None
    later = NOW + CHART_KEEP + timedelta(seconds=1)
    await sql.keep("newer", b"\x89PNG newer", later)
    assert await sql.png("old") is None and await sql.png("newer") == b"\x89PNG newer"
