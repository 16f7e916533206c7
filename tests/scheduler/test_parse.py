"""Reading schedules from separate options (the chat grammar reads the text form with these)."""

from __future__ import annotations

import pytest

from bot.errors import UserError
from bot.scheduler import ScheduleRequest, schedule_request
from bot.scheduler.port import Days


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
