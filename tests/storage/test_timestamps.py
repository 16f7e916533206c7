"""Timestamps as the store writes them on SQLite: the hot statements' text is SQLAlchemy's own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from bot.storage._schema import UTCDateTime

DIALECT = sqlite.dialect()


def sqlalchemys(value: datetime | None) -> str | None:
    """What SQLAlchemy's execute binds: the type's own step, then the dialect's processor."""
    bound = UTCDateTime().process_bind_param(value, DIALECT)
    processor = UTCDateTime().impl_instance.dialect_impl(DIALECT).bind_processor(DIALECT)
    assert processor is not None
    return processor(bound)


@given(
    value=st.datetimes(
        min_value=datetime(1000, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    offset_minutes=st.integers(min_value=-14 * 60, max_value=14 * 60),
)
def test_the_driver_text_of_a_timestamp_is_sqlalchemys(value: datetime, offset_minutes: int):
    zone = timezone(timedelta(minutes=offset_minutes))
    for given_as in (value, value.astimezone(zone), value.replace(microsecond=0)):
        assert UTCDateTime.sqlite_text(given_as) == sqlalchemys(given_as)


def test_none_stays_none_and_a_naive_timestamp_is_refused():
    assert UTCDateTime.sqlite_text(None) is None
    with pytest.raises(ValueError, match="naive"):
        UTCDateTime.sqlite_text(datetime(2026, 1, 1))
