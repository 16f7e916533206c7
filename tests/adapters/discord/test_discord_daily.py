"""Daily schedules and private review through the real discord.py client and the stand-in."""

from __future__ import annotations

import pytest

from bot.adapters.discord.app import QuizClient
from bot.engine import QuizEngine
from bot.engine.model import Place
from bot.scheduler import schedule_store_of
from tests.adapters.discord.conftest import (
    MANAGE_GUILD,
    FakeClock,
    buttons,
    content_of,
    eventually,
    is_ephemeral,
    post_card,
    revealed,
    running,
)
from tests.conftest import loop_passes
from tests.standins.discord_api import DiscordStandIn


def place(api: DiscordStandIn) -> Place:
    return Place("discord", str(api.guild_id), str(api.channel_ids()[0]))


async def test_an_admin_sets_shows_and_stops_the_schedule(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    options = {
        "time": "09:30",
        "tz": "Europe/Berlin",
        "days": "weekdays",
        "tag": "networking",
        "digest": "fri",
        "close": "2h",
    }
    call = await api.interact(api.command("quiz", "schedule", options, permissions=MANAGE_GUILD))
    assert is_ephemeral(call)
    text = content_of(call)
    assert text.startswith("Scheduled. Daily question in this channel at 09:30 Europe/Berlin")
    assert "tagged `networking`" in text and "closes after 2 h" in text and "Fridays" in text
    # The engine's clock says Monday 2 March 2026, 09:00 UTC: 10:00 in Berlin, so Tuesday.
    assert "Next post: Tue 3 Mar 2026 at 09:30 CET (Tue 3 Mar 2026 at 08:30 UTC)." in text
    stored = await schedule_store_of(engine).get_schedule(place(api))
    assert stored is not None
    assert (stored.hour, stored.minute, stored.digest_weekday, stored.close_minutes) == (
        9,
        30,
        4,
        120,
    )
    # Anyone may look.
    shown = await api.interact(api.command("quiz", "schedule", user=5555))
    assert content_of(shown) == text.removeprefix("Scheduled. ")
    stop = await api.interact(api.command("quiz", "unschedule", permissions=MANAGE_GUILD))
    assert content_of(stop) == "The daily question in this channel is stopped."
    assert await schedule_store_of(engine).get_schedule(place(api)) is None


@pytest.mark.parametrize(
    ("options", "permissions", "message"),
    [
        ({"time": "09:30"}, 0, "with the Manage Server permission can change the daily question"),
        ({"time": "25:00"}, MANAGE_GUILD, "`25:00` is not a time of day"),
        ({"time": "09:30", "tz": "Europe/Berlinn"}, MANAGE_GUILD, "Did you mean Europe/Berlin, "),
        ({"time": "09:30", "tz": "Nowhere/Town"}, MANAGE_GUILD, "America/New_York, Asia/Kolkata"),
        ({"time": "09:30", "tag": "nosuchtag"}, MANAGE_GUILD, "No question has the tag"),
        ({"time": "09:30", "close": "soon"}, MANAGE_GUILD, "is not a duration"),
        ({"tz": "Europe/Berlin"}, MANAGE_GUILD, "Give the time of the daily question"),
    ],
)
async def test_bad_or_unauthorised_schedules_change_nothing(
    bot: QuizClient,
    api: DiscordStandIn,
    engine: QuizEngine,
    options: dict[str, str],
    permissions: int,
    message: str,
) -> None:
    call = await api.interact(api.command("quiz", "schedule", options, permissions=permissions))
    assert is_ephemeral(call)
    assert message in content_of(call)
    assert await schedule_store_of(engine).get_schedule(place(api)) is None


async def test_unschedule_needs_manage_server(bot: QuizClient, api: DiscordStandIn) -> None:
    call = await api.interact(api.command("quiz", "unschedule"))
    assert "Manage Server" in content_of(call)


async def test_the_scheduler_posts_each_daily_question_once(
    api: DiscordStandIn, engine: QuizEngine, clock: FakeClock
) -> None:
    async with running(engine, api, scheduler_interval=0.05):
        options = {"time": "09:05", "tz": "UTC"}
        await api.interact(api.command("quiz", "schedule", options, permissions=MANAGE_GUILD))
        channel = api.channel_ids()[0]

        def cards() -> list[dict]:
            return [
                m
                for m in api.messages_in(channel)
                if m["embeds"] and m["embeds"][0]["title"].startswith("Quiz question")
            ]

        await loop_passes("scheduler", 3)  # passes before 09:05 post nothing
        assert cards() == []
        clock.advance(minutes=5)

        async def posted() -> bool:
            return len(cards()) == 1

        await eventually(posted)
        await loop_passes("scheduler", 3)  # more passes at the same instant post nothing more
        [card] = cards()
        custom_id = buttons(card)[0]["custom_id"]
        rnd = await engine.get_round(int(custom_id.split(":")[1]))
        assert (rnd.scheduled, rnd.slot, rnd.message_ref) == (True, "2026-03-02", card["id"])
        assert rnd.closes_at is None  # open until the next daily question

        # The next day the new question closes and reveals yesterday's.
        clock.advance(days=1)

        async def two() -> bool:
            return len(cards()) == 2

        await eventually(two)
        edit = await api.wait_for(lambda c: revealed(c, int(card["id"])))
        assert edit.body["embeds"][0]["title"] == "Quiz question · closed"
        assert (await engine.get_round(rnd.id)).is_closed


async def test_review_re_asks_a_due_question_privately(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine, clock: FakeClock
) -> None:
    nothing = await api.interact(api.command("quiz", "review", user=8101))
    assert is_ephemeral(nothing)
    assert content_of(nothing).startswith("Nothing to review yet.")

    card, round_id = await post_card(api, engine, tag="networking")
    await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:B", user=8101))
    soon = await api.interact(api.command("quiz", "review", user=8101))
    assert "Nothing to review right now; your next review is due <t:" in content_of(soon)

    clock.advance(days=1)
    payload = api.command("quiz", "review", user=8101)
    call = await api.interact(payload)
    assert call.body["type"] == 4 and is_ephemeral(call)
    message = api.response_message(payload)
    assert message["embeds"][0]["title"] == "Review: a question due again"
    assert "**A.** InfiniBand" in message["embeds"][0]["description"]
    ids = [b["custom_id"] for b in buttons(message)]
    assert ids == [f"review:discord-test-interconnect:{k}" for k in "ABCD"]

    board_before = await engine.leaderboard("discord", str(api.guild_id), "all", "8101")
    right = await api.interact(api.click(int(message["id"]), ids[0], user=8101))
    assert is_ephemeral(right)
    text = content_of(right)
    assert text.startswith("✅ **Right!** You chose **A. InfiniBand**.")
    assert "It comes back <t:" in text
    # A second click on the same private message changes nothing.
    again = await api.interact(api.click(int(message["id"]), ids[0], user=8101))
    assert "You have answered this one for now" in content_of(again)
    assert await engine.leaderboard("discord", str(api.guild_id), "all", "8101") == board_before

    # The right answer spaced the card out: nothing is due the next day, one card waits.
    clock.advance(days=1)
    review = await engine.review_queue("discord", str(api.guild_id), "8101")
    assert (review.due, review.pending) == (0, 1) and review.next_due is not None


async def test_a_review_click_from_another_server_is_refused(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine, clock: FakeClock
) -> None:
    card, round_id = await post_card(api, engine, tag="networking")
    await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:C", user=8201))
    clock.advance(days=1)
    payload = api.command("quiz", "review", user=8201)
    await api.interact(payload)
    message = api.response_message(payload)
    custom_id = buttons(message)[0]["custom_id"]
    other = await api.interact(api.click(int(message["id"]), custom_id, user=8202))
    assert "not in your review list" in content_of(other)
    assert (await engine.review_queue("discord", str(api.guild_id), "8201")).due == 1


async def test_quiz_me_offers_a_review_button_that_starts_one(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine, clock: FakeClock
) -> None:
    card, round_id = await post_card(api, engine, tag="networking")
    await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:B", user=8102))
    early = api.command("quiz", "me", user=8102)
    assert is_ephemeral(await api.interact(early))
    shown = api.response_message(early)
    assert shown["embeds"][0]["title"] == "Your quiz"
    assert "0 of 1 right" in shown["embeds"][0]["description"]
    # Nothing is due yet: Practice alone (it serves new questions too).
    assert [b["custom_id"] for b in buttons(shown)] == ["quiz:practice"]

    clock.advance(days=1)
    payload = api.command("quiz", "me", user=8102)
    await api.interact(payload)
    message = api.response_message(payload)
    assert "1 due: practise them with" in message["embeds"][0]["description"]
    practice, start = buttons(message)
    assert (practice["custom_id"], practice["label"]) == ("quiz:practice", "Practice")
    assert (start["custom_id"], start["label"]) == ("quiz:start-review", "Start a review")
    click = api.click(int(message["id"]), start["custom_id"], user=8102)
    assert is_ephemeral(await api.interact(click))
    asked = api.response_message(click)
    assert asked["embeds"][0]["title"] == "Review: a question due again"
    assert buttons(asked)[0]["custom_id"] == "review:discord-test-interconnect:A"


async def test_leaving_a_server_stops_its_schedules_and_closes_its_rounds(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    schedule = {"time": "09:30"}
    await api.interact(api.command("quiz", "schedule", schedule, permissions=MANAGE_GUILD))
    card, round_id = await post_card(api, engine)
    schedules = schedule_store_of(engine)
    assert await schedules.get_schedule(place(api)) is not None
    guild = bot.get_guild(api.guild_id)
    assert guild is not None

    # A server that is down for a while is not one the bot has left: everything stays.
    await api.dispatch("GUILD_DELETE", {"id": str(api.guild_id), "unavailable": True})
    await eventually(lambda: _true(guild.unavailable))
    assert await schedules.get_schedule(place(api)) is not None
    assert not (await engine.get_round(round_id)).is_closed

    before = len(api.calls)
    await api.dispatch("GUILD_DELETE", {"id": str(api.guild_id)})

    async def forgotten() -> bool:
        return await schedules.get_schedule(place(api)) is None

    await eventually(forgotten)
    await eventually(lambda: _closed(engine, round_id))
    # No reveal is posted where the bot no longer is.
    assert not [c for c in api.calls[before:] if revealed(c, int(card["id"]))]
    assert [c for c in api.calls[before:] if c.method != "GET"] == []


async def _true(value: bool) -> bool:
    return value


async def _closed(engine: QuizEngine, round_id: int) -> bool:
    return (await engine.get_round(round_id)).is_closed
