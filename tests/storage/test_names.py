"""Display names in the store: written in one statement, on SQLite through the store's writer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.engine.names import NameKind
from bot.storage import SqlStore, open_store
from tests.storage.test_answers import Trips

T0 = datetime(2026, 3, 2, 9, 0, 0, 250000, tzinfo=UTC)
ADA, GRACE = (NameKind.USER, "U07ADA"), (NameKind.USER, "U07GRACE")
STUDY = (NameKind.CHANNEL, "C07STUDY")


async def test_names_are_stored_renamed_and_read_back_with_their_age(store: SqlStore) -> None:
    await store.save_names("slack", "T1", {ADA: "Ada", GRACE: "Grace", STUDY: "infra-study"}, T0)
    later = T0 + timedelta(days=8)
    await store.save_names("slack", "T1", {ADA: "Ada L."}, later)
    await store.save_names("slack", "T2", {ADA: "Someone else"}, later)
    known = await store.display_names("slack", "T1")
    assert {k: (v.name, v.fetched_at) for k, v in known.items()} == {
        ADA: ("Ada L.", later),
        GRACE: ("Grace", T0),
        STUDY: ("infra-study", T0),
    }


async def test_on_a_sqlite_file_names_go_through_the_writer_not_the_pool(
    sqlite_url: str,
) -> None:
    store = await open_store(sqlite_url)
    try:
        trips = Trips(store)
        await store.save_names("slack", "T1", {ADA: "Ada", GRACE: "Grace"}, T0)
        assert trips.sqlalchemy == 0
        assert trips.raw_calls == 1
        assert any("display_names" in sql for sql in trips.raw_statements), trips.raw_statements
        assert set(await store.display_names("slack", "T1")) == {ADA, GRACE}
    finally:
        await store.close()
