"""Reading schedules from chat text and from separate options."""

from __future__ import annotations

import pytest

from bot.engine.ports import Days
from bot.errors import UserError
from bot.scheduler import ScheduleRequest, parse_schedule_text, schedule_request


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("09:30", ScheduleRequest(9, 30)),
        ("9:05", ScheduleRequest(9, 5)),
        ("00:00 UTC", ScheduleRequest(0, 0)),
        ("23:59 Europe/Berlin", ScheduleRequest(23, 59, "Europe/Berlin")),
        ("08:00 america/new_york", ScheduleRequest(8, 0, "America/New_York")),
        ("08:00 Pacific/Chatham weekdays", ScheduleRequest(8, 0, "Pacific/Chatham", Days.WEEKDAYS)),
        (
            "17:45 Asia/Kolkata daily rdma",
            ScheduleRequest(17, 45, "Asia/Kolkata", Days.DAILY, "rdma"),
        ),
        ("10:00 weekdays net", ScheduleRequest(10, 0, days=Days.WEEKDAYS, tag="net")),
        ("10:00 net Europe/Paris", ScheduleRequest(10, 0, "Europe/Paris", tag="net")),
        (
            "09:00 Europe/Berlin weekdays net digest=fri close=2h",
            ScheduleRequest(9, 0, "Europe/Berlin", Days.WEEKDAYS, "net", 4, 120),
        ),
        ("09:00 digest=Sunday close=90", ScheduleRequest(9, 0, digest_weekday=6, close_minutes=90)),
        ("09:00 close=1h30m", ScheduleRequest(9, 0, close_minutes=90)),
        ("09:00 close:45m", ScheduleRequest(9, 0, close_minutes=45)),
    ],
)
def test_text_form(text: str, expected: ScheduleRequest):
    assert parse_schedule_text(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Give the time"),
        ("9", "`9` is not a time of day"),
        ("24:00", "`24:00` is not a time of day"),
        ("12:60", "like 09:30, 13:00, 17:45"),
        ("noon", "is not a time of day"),
        ("09:00 Europe/Berlinn", "Did you mean Europe/Berlin"),
        ("09:00 Mars/Olympus_Mons", "such as Europe/Berlin, America/New_York"),
        ("09:00 Europe/Berlin Asia/Tokyo", "has its zone already"),
        ("09:00 net rdma", "has its tag already"),
        ("09:00 Net!", "is not a tag"),
        ("09:00 digest=someday", "not a day of the week"),
        ("09:00 close=0m", "between 1 minute and 7 days"),
        ("09:00 close=8d", "between 1 minute and 7 days"),
        ("09:00 close=", "needs a value"),
    ],
)
def test_bad_text_is_a_user_error_with_usage(text: str, message: str):
    with pytest.raises(UserError, match=message) as caught:
        parse_schedule_text(text)
    assert caught.value.usage is not None and "/quiz schedule HH:MM" in caught.value.usage


def test_bad_zone_lists_valid_examples():
    with pytest.raises(UserError) as caught:
        parse_schedule_text("09:00 Nowhere/Town")
    assert "Europe/Berlin, America/New_York, Asia/Kolkata, Pacific/Auckland, UTC" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"time": "07:15"}, ScheduleRequest(7, 15)),
        (
            {"time": "07:15", "zone": "Europe/Berlin", "days": "Weekdays", "tag": "net"},
            ScheduleRequest(7, 15, "Europe/Berlin", Days.WEEKDAYS, "net"),
        ),
        (
            {"time": "07:15", "digest": "mon", "close": "30m"},
            ScheduleRequest(7, 15, "UTC", Days.DAILY, None, 0, 30),
        ),
    ],
)
def test_separate_options(options: dict[str, str], expected: ScheduleRequest):
    assert schedule_request(**options) == expected


def test_separate_options_errors_carry_no_text_usage():
    with pytest.raises(UserError) as caught:
        schedule_request("07:15", days="fortnightly")
    assert caught.value.usage is None
    assert "`daily` or `weekdays`" in caught.value.message
