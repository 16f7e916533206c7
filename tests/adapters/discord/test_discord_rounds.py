"""The real discord.py client, over HTTP and WebSocket, playing rounds against the stand-in."""

from __future__ import annotations

import asyncio
import re

import aiosqlite
import pytest

from bot.adapters.discord.app import QuizClient
from bot.engine import QuizEngine
from bot.engine.model import Place
from tests.adapters.discord.conftest import (
    MANAGE_GUILD,
    OTHER_GUILD,
    FakeClock,
    buttons,
    content_of,
    is_ephemeral,
    open_engine,
    post_card,
    revealed,
    running,
)
from tests.standins.discord_api import EPHEMERAL, Call, DiscordStandIn, UserRef

CUSTOM_ID = re.compile(r"quiz:(\d+):([A-E])")


async def test_commands_sync_once_with_the_quiz_group(bot: QuizClient, api: DiscordStandIn) -> None:
    [sync] = api.find("PUT", rf"^/applications/{api.application_id}/commands$")
    names = {c["name"]: c for c in sync.body}
    assert set(names) >= {"quiz"}
    quiz = names["quiz"]
    subs = {o["name"]: o for o in quiz["options"]}
    assert set(subs) == {
        "next",
        "close",
        "leaderboard",
        "stats",
        "settings",
        "schedule",
        "unschedule",
        "review",
        "report",
        "flag",
        "add",
        "proposals",
        "hide",
        "unhide",
        "dashboard",
        "me",
        "track",
        "track-list",
        "track-start",
        "track-stop",
        "practice",
        "help",
    }
    assert all(o["type"] == 1 for o in subs.values())
    reason, note = subs["flag"]["options"]
    assert (reason["name"], reason["required"], note["name"]) == ("reason", True, "note")
    assert [c["value"] for c in reason["choices"]] == ["wrong", "unclear", "outdated", "typo"]
    difficulty = next(o for o in subs["settings"]["options"] if o["name"] == "difficulty")
    assert [c["value"] for c in difficulty["choices"]] == [
        "mixed",
        "easy",
        "hard",
        "adaptive",
        "level",
    ]
    assert quiz["dm_permission"] is False  # servers only
    tag = subs["next"]["options"][0]
    assert (tag["name"], tag["type"], tag["autocomplete"], tag["required"]) == (
        "tag",
        3,
        True,
        False,
    )
    period = subs["leaderboard"]["options"][0]
    assert [c["value"] for c in period["choices"]] == ["week", "month", "all"]
    minutes = {o["name"]: o for o in subs["settings"]["options"]}["minutes"]
    assert (minutes["type"], minutes["min_value"], minutes["max_value"]) == (4, 1, 10080)
    assert subs["stats"]["options"][0]["type"] == 6


async def test_gateway_asks_only_for_guilds_and_reactions(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    [identify] = api.identifies
    assert identify["intents"] == (1 << 0) | (1 << 10)
    assert identify["token"] == api.token


async def test_guild_id_syncs_to_that_server_only(engine: QuizEngine, api: DiscordStandIn) -> None:
    async with running(engine, api, guild_id=OTHER_GUILD):
        pass
    assert not api.find("PUT", rf"^/applications/{api.application_id}/commands$")
    [sync] = api.find("PUT", rf"/guilds/{OTHER_GUILD}/commands$")
    assert "quiz" in {c["name"] for c in sync.body}


async def test_next_posts_a_card_with_one_button_per_choice(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine, tag="networking")
    embed = card["embeds"][0]
    assert "16 nodes" in embed["description"]
    assert "**A.** InfiniBand" in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "Tags" not in fields and "networking" not in str(embed)
    assert fields["Difficulty"] == "medium, 2 points"
    assert re.fullmatch(r"<t:\d+:R> \(<t:\d+:t>\)", fields["Closes"])
    assert fields["Answered"] == "0 answered"
    found = buttons(card)
    assert [b["label"] for b in found] == [
        "A. InfiniBand",
        "B. 1 Gbps Ethernet",
        "C. Fibre Channel",
        "D. Wi-Fi 6",
    ]
    for b, key in zip(found, "ABCD", strict=True):
        assert b["custom_id"] == f"quiz:{round_id}:{key}"
        assert len(b["custom_id"]) <= 100 and len(b["label"]) <= 80
    rnd = await engine.get_round(round_id)
    # Ten minutes by default, on the engine's clock.
    assert rnd.closes_at is not None and (rnd.closes_at - rnd.opened_at).total_seconds() == 600


async def test_tag_autocomplete_offers_bank_tags(bot: QuizClient, api: DiscordStandIn) -> None:
    payload = api.command("quiz", "next", {"tag": "stor"}, focused="tag")
    call = await api.interact(payload)
    assert call.body == {"type": 8, "data": {"choices": [{"name": "storage", "value": "storage"}]}}


async def test_second_round_in_a_channel_is_refused_politely(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    await post_card(api, engine)
    call = await api.interact(api.command("quiz", "next"))
    assert is_ephemeral(call)
    assert "already open" in content_of(call)


async def test_clicks_from_several_users_get_private_feedback_and_count_once(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine, tag="networking")
    mid = int(card["id"])
    picks = {2001: "A", 2002: "B", 2003: "A", 2004: "D"}
    calls = await asyncio.gather(
        *(api.interact(api.click(mid, f"quiz:{round_id}:{k}", user=u)) for u, k in picks.items())
    )
    for (user, key), call in zip(picks.items(), calls, strict=True):
        assert call.body["type"] == 4 and is_ephemeral(call)
        text = content_of(call)
        assert f"You chose **{key}." in text
        assert ("Right!" in text) == (key == "A"), (user, text)
        assert "RDMA" in text  # the short explanation
    assert await engine.answered_count(round_id) == 4
    again = await api.interact(api.click(mid, f"quiz:{round_id}:C", user=2002))
    assert is_ephemeral(again)
    assert "already answered **B. 1 Gbps Ethernet**" in content_of(again)
    assert await engine.answered_count(round_id) == 4


async def test_a_click_after_a_restart_still_counts(
    api: DiscordStandIn, db_url: str, clock: FakeClock
) -> None:
    async with open_engine(db_url, clock) as first, running(first, api):
        card, round_id = await post_card(api, first, tag="storage")
    # A new process: new client, new engine, new store, the same database file.
    async with open_engine(db_url, clock) as second, running(second, api):
        call = await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:B", user=3001))
        assert "Right!" in content_of(call) and is_ephemeral(call)
        assert "(+3 points)" in content_of(call)
        assert await second.answered_count(round_id) == 1


async def test_clicks_are_read_from_their_custom_id_with_no_view_kept(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine)
    call = await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:A", user=3101))
    assert "Right!" in content_of(call) and is_ephemeral(call)
    # discord.py neither keeps the card's view nor rebuilds one for a click.
    store = bot._connection._view_store
    assert not store.persistent_views and not store._dynamic_items and not store._views
    # A button that is not the bot's gets no answer at all.
    foreign = api.click(int(card["id"]), "someone-else:1", user=3102)
    await api.send_interaction(foreign)
    # Interactions are handled in the order they arrive: once a later click is answered, the
    # foreign one has been passed over.
    later = await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:B", user=3103))
    assert "Not this time" in content_of(later)
    assert not [c for c in api.calls if f"/interactions/{foreign['id']}/" in c.path]
    assert await engine.answered_count(round_id) == 2


async def test_a_click_from_another_server_is_refused_and_not_recorded(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine)
    forged = api.click(int(card["id"]), f"quiz:{round_id}:A", user=4001, guild=OTHER_GUILD)
    call = await api.interact(forged)
    assert is_ephemeral(call)
    assert content_of(call) == "That question does not exist here."
    assert await engine.answered_count(round_id) == 0


async def test_a_click_after_close_says_closed(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine)
    await engine.close(round_id)
    call = await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:A", user=5001))
    assert "closed" in content_of(call) and is_ephemeral(call)
    assert await engine.answered_count(round_id) == 0


async def test_reactions_are_answers_confirmed_by_direct_message(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine, tag="networking")
    mid = int(card["id"])
    start = len(api.calls)
    await api.react(mid, "🇦", user=6001)
    dm = await api.wait_for(lambda c: c.path == "/users/@me/channels", after=start)
    assert dm.body == {"recipient_id": 6001}
    sent = await api.wait_for(
        lambda c: c.method == "POST" and c.path.endswith("/messages") and "Right!" in content_of(c),
        after=start,
    )
    assert f"/channels/{api.guild_id}/{card['channel_id']}/{mid}" in content_of(sent)
    assert await engine.answered_count(round_id) == 1
    # The first reaction counts; another letter only earns a reminder.
    start = len(api.calls)
    await api.react(mid, "🇧", user=6001)
    reminder = await api.wait_for(lambda c: "already answered" in content_of(c), after=start)
    assert "**A. InfiniBand**" in content_of(reminder)
    # Other emoji are not answers.
    await api.react(mid, "👍", user=6002)
    await api.react(mid, "🇨", user=6003)
    await api.wait_for(lambda c: "You chose **C." in content_of(c), after=start)
    assert await engine.answered_count(round_id) == 2
    # The round is found from the channel's open round: the card is never read back.
    assert api.find("GET", rf"/channels/{card['channel_id']}/messages/{mid}$") == []


async def test_close_edits_the_card_and_explains_in_a_thread(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine, tag="networking")
    mid = int(card["id"])
    for user, key in ((7001, "A"), (7002, "B"), (7003, "A")):
        await api.interact(api.click(mid, f"quiz:{round_id}:{key}", user=user))
    call = await api.interact(api.command("quiz", "close"))
    assert is_ephemeral(call) and "Closed" in content_of(call)
    edit = await api.wait_for(lambda c: revealed(c, mid))
    assert edit.path == f"/channels/{card['channel_id']}/messages/{mid}"
    embed = edit.body["embeds"][0]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Results"] == "3 people answered; 2 right (67%)."
    assert fields["Fastest right"].startswith("<@7001>")
    assert "<@7003>" in fields["Fastest right"]
    assert "`████████░░░░` 2 (67%)" in embed["description"]
    buttons = [b for row in edit.body["components"] for b in row["components"]]
    closed = [b for b in buttons if b["custom_id"].startswith("quiz:")]
    assert [b["label"] for b in buttons if b not in closed] == ["Report a problem"]
    assert all(b["disabled"] for b in closed)
    assert [b["style"] for b in closed] == [3, 2, 2, 2]
    assert closed[0]["label"] == "✓ A. InfiniBand"
    thread = await api.wait_for(
        lambda c: c.path == f"/channels/{card['channel_id']}/messages/{mid}/threads"
    )
    assert thread.body["name"].startswith("Answer: A training job")
    post = await api.wait_for(
        lambda c: c.method == "POST" and c.path == f"/channels/{mid}/messages"
    )
    explained = post.body["embeds"][0]
    assert explained["title"] == "The answer is A. InfiniBand"
    assert "HDR 200 Gb/s" in explained["description"]
    why = {f["name"]: f["value"] for f in explained["fields"]}
    assert why["Why not B. 1 Gbps Ethernet"].startswith("At 1 Gb/s")
    assert "Why not A. InfiniBand" not in why
    assert why["References"] == "[InfiniBand Trade Association](<https://www.infinibandta.org/>)"
    # Closing twice is refused, and changes nothing more.
    again = await api.interact(api.command("quiz", "close"))
    assert "no open question" in content_of(again)


async def test_reveal_replies_when_threads_are_not_allowed(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    api.forbid_threads = True
    card, _ = await post_card(api, engine, tag="storage")
    await api.interact(api.command("quiz", "close"))
    reply = await api.wait_for(
        lambda c: (
            c.method == "POST"
            and c.path == f"/channels/{card['channel_id']}/messages"
            and bool(c.body and c.body.get("message_reference"))
        )
    )
    assert str(reply.body["message_reference"]["message_id"]) == card["id"]
    assert (
        reply.body["embeds"][0]["title"]
        == "The answer is B. A parallel file system shared by all nodes"
    )


async def test_the_timer_closes_a_due_round(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine, clock: FakeClock
) -> None:
    card, round_id = await post_card(api, engine)
    clock.advance(minutes=10, seconds=1)
    await api.wait_for(lambda c: c.path.endswith(f"/messages/{card['id']}/threads"))
    assert (await engine.get_round(round_id)).is_closed


async def test_rounds_due_while_down_close_on_start(
    api: DiscordStandIn, db_url: str, clock: FakeClock
) -> None:
    async with open_engine(db_url, clock) as first, running(first, api, timer_interval=60):
        card, round_id = await post_card(api, first)
    clock.advance(hours=1)
    async with open_engine(db_url, clock) as second, running(second, api, timer_interval=60):
        await api.wait_for(lambda c: c.path.endswith(f"/messages/{card['id']}/threads"))
        assert (await second.get_round(round_id)).is_closed


async def test_answer_count_on_the_card_is_refreshed(
    engine: QuizEngine, api: DiscordStandIn
) -> None:
    async with running(engine, api, refresh_every=0.05):
        card, round_id = await post_card(api, engine)
        mid = int(card["id"])
        await asyncio.gather(
            *(api.interact(api.click(mid, f"quiz:{round_id}:A", user=u)) for u in (8001, 8002))
        )

        def shows_two(call: Call) -> bool:
            if call.method != "PATCH" or not call.path.endswith(f"/messages/{mid}"):
                return False
            fields = {f["name"]: f["value"] for f in call.body["embeds"][0]["fields"]}
            return fields["Answered"] == "2 answered"

        await api.wait_for(shows_two)
        edits = api.find("PATCH", rf"/messages/{mid}$")
        assert all("components" not in e.body for e in edits)  # buttons left as they are
        # The throttle itself (one edit per interval) is tested on an injected clock in
        # tests/chat/test_publish.py.


async def test_rate_limits_with_via_are_waited_out(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    api.limit("POST", r"^/interactions/\d+/[^/]+/callback$", times=1, retry_after=0.3)
    api.limit("POST", r"/messages/\d+/threads$", times=2, retry_after=0.1)
    card, _ = await post_card(api, engine, tag="storage")
    callbacks = [c for c in api.calls if "/callback" in c.path]
    assert [c.status for c in callbacks] == [429, 200]
    assert callbacks[1].at - callbacks[0].at >= 0.3
    await api.interact(api.command("quiz", "close"))
    await api.wait_for(
        lambda c: c.method == "POST" and c.path == f"/channels/{card['id']}/messages"
    )
    threads = [c.status for c in api.calls if c.path.endswith("/threads")]
    assert threads == [429, 429, 201]


@pytest.mark.parametrize(
    ("permissions", "admins", "allowed"),
    [(0, "", False), (MANAGE_GUILD, "", True), (0, "9001", True)],
)
async def test_settings_need_manage_server_checked_at_run_time(
    engine: QuizEngine, api: DiscordStandIn, permissions: int, admins: str, allowed: bool
) -> None:
    async with running(engine, api, admins=frozenset(filter(None, [admins]))):
        payload = api.command(
            "quiz", "settings", {"changes": True, "minutes": 3}, user=9001, permissions=permissions
        )
        call = await api.interact(payload)
    assert is_ephemeral(call)
    here = Place("discord", str(api.guild_id), str(api.channel_ids()[0]))
    place_settings = await engine.channel_settings(here)
    if allowed:
        assert "stays open 3 minutes" in content_of(call)
        assert (place_settings.allow_change, place_settings.round_minutes) == (True, 3)
    else:
        assert "Manage Server" in content_of(call)
        assert (place_settings.allow_change, place_settings.round_minutes) == (False, 10)


async def test_leaderboard_stats_and_help(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine, tag="storage")
    await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:B", user=1001))
    board = await api.interact(api.command("quiz", "leaderboard", {"period": "all"}, user=1001))
    assert is_ephemeral(board)
    embed = board.body["data"]["embeds"][0]
    assert embed["title"] == "Leaderboard, all time"
    assert embed["description"] == "1. <@1001>: 3 pts, 1/1 right"
    stats = await api.interact(api.command("quiz", "stats", {"user": UserRef(1001)}, user=1002))
    assert content_of(stats).startswith("<@1001>: 1 answered, 1 right (100%), 3 points")
    helped = await api.interact(api.command("quiz", "help"))
    assert "/quiz next" in content_of(helped) and is_ephemeral(helped)


async def test_an_unexpected_failure_gets_an_apology_with_an_error_id(
    bot: QuizClient,
    api: DiscordStandIn,
    engine: QuizEngine,
    db_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    card, round_id = await post_card(api, engine)
    async with aiosqlite.connect(db_url.split("///", 1)[1]) as db:
        await db.execute("DROP TABLE answers")
        await db.commit()
    call = await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:A", user=1003))
    text = content_of(call)
    match = re.search(r"error id `([0-9a-f]{8})`", text)
    assert match and is_ephemeral(call), text
    logged = [r for r in caplog.records if getattr(r, "error_id", None) == match[1]]
    assert logged and logged[0].exc_info is not None


async def test_the_gateway_resumes_and_clicks_still_work(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, round_id = await post_card(api, engine)
    await api.drop_connections()
    await api.wait_connected()
    assert api.resumes and api.resumes[0]["session_id"]
    call = await api.interact(api.click(int(card["id"]), f"quiz:{round_id}:A", user=1004))
    assert is_ephemeral(call)


async def test_a_slow_database_gets_the_click_deferred_then_answered(
    engine: QuizEngine, api: DiscordStandIn, db_url: str
) -> None:
    async with running(engine, api) as client:
        card, round_id = await post_card(api, engine, tag="storage")
        client.answer_deadline = 0.2  # from the click on: the card itself was posted in time
        payload = api.click(int(card["id"]), f"quiz:{round_id}:B", user=1201)
        # Another writer holds the database, as a busy replica would: the answer has to wait.
        async with aiosqlite.connect(db_url.split("///", 1)[1]) as db:
            await db.execute("BEGIN IMMEDIATE")
            deferred = await api.interact(payload)
            assert deferred.body == {"type": 5, "data": {"flags": EPHEMERAL}}
            assert await engine.answered_count(round_id) == 0
            await db.rollback()
        follow = await api.followup(payload, within=30)
        assert "Right!" in content_of(follow) and is_ephemeral(follow)
        assert await engine.answered_count(round_id) == 1
