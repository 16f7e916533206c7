"""Setting, showing and removing a channel's schedule: what both chat adapters call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import Place, QuizEngine
from bot.errors import UserError
from bot.scheduler import ScheduleService, describe_schedule, schedule_request
from bot.scheduler.port import ClaimKind, Days
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

PLACE = Place("discord", "G1", "C1")


@pytest.fixture
def service(store: SqlStore) -> ScheduleService:
    clock = FakeClock(datetime(2026, 3, 27, 9, 0, tzinfo=UTC))  # Friday, before Berlin's DST
    bank = SimpleBank([make_question("n1", tags=("net",)), make_question("m1", tags=("mem",))])
    return ScheduleService(QuizEngine(store, bank, clock=clock), store)


async def test_show_without_a_schedule(service: ScheduleService):
    assert await service.show(PLACE) is None


async def test_set_show_and_remove(service: ScheduleService, store: SqlStore):
    request = schedule_request("09:30", zone="Europe/Berlin", days="weekdays", tag="net")
    view = await service.set(PLACE, request, user="U1", admin=True)
    stored = await store.get_schedule(PLACE)
    assert stored is not None
    assert (stored.hour, stored.minute, stored.zone, stored.days, stored.tag, stored.set_by) == (
        9,
        30,
        "Europe/Berlin",
        Days.WEEKDAYS,
        "net",
        "U1",
    )
    assert stored.since == service.clock()
    # Friday 10:00 CET: the next weekday post is Monday, after the change to summer time.
    assert view.next_utc == datetime(2026, 3, 30, 7, 30, tzinfo=UTC)
    assert view.next_local.isoformat() == "2026-03-30T09:30:00+02:00"
    text = describe_schedule(view).markdown()
    assert "09:30 Europe/Berlin, on weekdays (Monday to Friday), tagged `net`." in text
    assert "Next post: Mon 30 Mar 2026 at 09:30 CEST (Mon 30 Mar 2026 at 07:30 UTC)." in text
    assert "stays open until the next one" in text
    assert await service.remove(PLACE, admin=True)
    assert await service.show(PLACE) is None
    assert not await service.remove(PLACE, admin=True)


async def test_show_skips_a_day_already_posted(service: ScheduleService, store: SqlStore):
    await service.set(PLACE, schedule_request("12:00"), user="U1", admin=True)
    assert (await service.show(PLACE)).next_utc == datetime(2026, 3, 27, 12, 0, tzinfo=UTC)
    now = service.clock()
    await store.claim_slot(PLACE, ClaimKind.POST, "2026-03-27", slot_at=now, claimant="x", at=now)
    assert (await service.show(PLACE)).next_utc == datetime(2026, 3, 28, 12, 0, tzinfo=UTC)


async def test_a_full_request_round_trip(service: ScheduleService):
    request = schedule_request(
        "08:15", zone="America/New_York", tag="mem", digest="fri", close="2h"
    )
    view = await service.set(PLACE, request, user="U1", admin=True)
    text = describe_schedule(view).markdown()
    assert text.startswith("Daily question in this channel at 08:15 America/New_York, every day")
    assert "Each question closes after 2 h." in text
    assert "Weekly digest (leaderboard and hardest question) on Fridays." in text
    assert "Next post: Fri 27 Mar 2026 at 08:15 EDT (Fri 27 Mar 2026 at 12:15 UTC)." in text
    shown = await service.show(PLACE)
    assert shown is not None and describe_schedule(shown).markdown() == text
    assert await service.remove(PLACE, admin=True)
    assert await service.show(PLACE) is None


async def test_only_admins_change_it(service: ScheduleService, store: SqlStore):
    with pytest.raises(UserError, match="Only admins"):
        await service.set(PLACE, schedule_request("09:00"), user="U9", admin=False)
    with pytest.raises(UserError, match="Only admins"):
        await service.remove(PLACE, admin=False)
    assert await store.get_schedule(PLACE) is None


async def test_a_tag_without_questions_changes_nothing(service: ScheduleService, store: SqlStore):
    await service.set(PLACE, schedule_request("07:00"), user="U1", admin=True)
    before = await store.get_schedule(PLACE)
    with pytest.raises(UserError, match="No question has the tag `nosuchtag`"):
        await service.set(PLACE, schedule_request("09:00", tag="nosuchtag"), user="U1", admin=True)
    assert await store.get_schedule(PLACE) == before


async def test_computed_needs_templates_and_changes_nothing_without(
    service: ScheduleService, store: SqlStore
):
    # This bank has no computed-question templates, so a daily computed question is refused.
    await service.set(PLACE, schedule_request("07:00"), user="U1", admin=True)
    before = await store.get_schedule(PLACE)
    with pytest.raises(UserError, match="no computed-question templates"):
        await service.set(PLACE, schedule_request("09:00", tag="computed"), user="U1", admin=True)
    assert await store.get_schedule(PLACE) == before


async def test_same_offset_shows_one_time(store: SqlStore):
    clock = FakeClock(datetime(2026, 3, 2, 6, 0, tzinfo=UTC))
    service = ScheduleService(
        QuizEngine(store, SimpleBank([make_question("q")]), clock=clock), store
    )
    view = await service.set(PLACE, schedule_request("07:00", zone="UTC"), user="U1", admin=True)
    assert view.next_utc - clock() == timedelta(hours=1)
    shown = await service.show(PLACE)
    assert shown is not None
    assert describe_schedule(shown).markdown() == (
        "Daily question in this channel at 07:00 UTC, every day.\n"
        "Each question stays open until the next one is posted.\n"
        "Next post: Mon 2 Mar 2026 at 07:00 UTC."
    )
