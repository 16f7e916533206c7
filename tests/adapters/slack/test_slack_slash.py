"""Slash commands on the wire: help, bad input, scores, settings for admins, /bandwidth, charts."""

from __future__ import annotations

import pytest

from bot.engine.model import ChannelSettings, Place
from tests.adapters.slack.conftest import ADMIN, CHANNEL, TEAM, Harness

PLACE = Place("slack", TEAM, CHANNEL)
PNG = b"\x89PNG\r\n\x1a\n"


async def reply_to(slack: Harness, text: str, user: str = "U1", name: str = "/quiz") -> str:
    """Send a command and return what the user saw: the ack's text, or the response_url post."""
    before = len(slack.standin.responses_to(user))
    reply = await slack.command(text, user=user, name=name, respond_to=user)
    assert reply.status == 200
    if reply.text:
        return reply.text
    await slack.standin.wait_for(lambda: len(slack.standin.responses_to(user)) > before)
    answer = slack.standin.responses_to(user)[before]
    assert answer["response_type"] == "ephemeral"
    return str(answer["text"])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("help", "*Quiz commands*"),
        ("frobnicate", "I don't know `/quiz frobnicate`"),
        ("leaderboard decade", "`week`, `month` or `all`"),
        ("stats bob", "Mention the person with @"),
        ("settings minutes forty", "`forty` is not a whole number."),
        ("schedule 9am", "`9am` is not a time of day. Give it as HH:MM"),
        ("schedule 09:00 Europe/Paris UTC", "`UTC`: the schedule has its zone already."),
    ],
)
async def test_help_and_bad_input_answer_at_once_and_change_nothing(
    slack: Harness, text: str, says: str
) -> None:
    reply = await slack.command(text)
    assert reply.status == 200
    assert says in reply.text
    assert "/quiz next [tag|computed]" in reply.text
    assert slack.standin.of("chat.postMessage") == []
    assert await slack.engine.store.open_round(PLACE) is None
    assert await slack.engine.channel_settings(PLACE) == ChannelSettings(round_minutes=10)


async def test_a_second_question_while_one_is_open_is_refused(slack: Harness) -> None:
    await slack.open_card()
    text = await reply_to(slack, "next")
    assert text == "A question is already open in this channel; answer it or close it first."
    assert len(slack.standin.of("chat.postMessage")) == 1


async def test_an_unknown_tag_and_closing_nothing_say_so(slack: Harness) -> None:
    assert await reply_to(slack, "next quantum") == "No question has the tag `quantum`."
    assert await reply_to(slack, "close") == "There is no open question in this channel."


async def test_leaderboard_and_stats(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    for user, key in [("U1", "A"), ("U2", "B"), ("U3", "A")]:
        slack.clock.advance(seconds=2)
        await slack.click(round_id, key, user=user, message_ts=ts)
    await slack.standin.wait_calls("chat.postEphemeral", 3)

    board = (await reply_to(slack, "leaderboard all", user="U2")).splitlines()
    assert board == [
        "*Leaderboard, all time*",
        "1. <@U1>: 3 pts, 1/1 right",
        "2. <@U3>: 3 pts, 1/1 right",
        "3. <@U2>: 0 pts, 0/1 right",
    ]
    assert "You have not answered" in await reply_to(slack, "leaderboard", user="U9")
    mine = await reply_to(slack, "stats", user="U3")
    assert mine.startswith("<@U3>: 1 answered, 1 right (100%), 3 points")
    theirs = await reply_to(slack, "stats <@U2|bob>", user="U3")
    assert theirs.startswith("<@U2>: 1 answered, 0 right (0%), 0 points")


@pytest.mark.parametrize(
    ("user", "allowed"),
    [
        pytest.param(ADMIN, True, id="workspace-admin"),
        pytest.param("UCONFIGURED", True, id="in-QUIZBOT_ADMINS"),
        pytest.param("U1", False, id="member"),
    ],
)
async def test_only_admins_change_channel_settings(
    slack: Harness, user: str, allowed: bool
) -> None:
    text = await reply_to(slack, "settings changes on minutes 3", user=user)
    settings = await slack.engine.channel_settings(PLACE)
    if allowed:
        assert text.startswith("Saved. In this channel a question stays open 3 minutes")
        assert settings == ChannelSettings(allow_change=True, round_minutes=3)
    else:
        assert text == "Only workspace admins can change this channel's quiz settings."
        assert settings == ChannelSettings(round_minutes=10)
    asked = [c.params["user"] for c in slack.standin.of("users.info")]
    assert asked == ([] if user == "UCONFIGURED" else [user])


async def test_settings_shape_the_next_round(slack: Harness) -> None:
    await reply_to(slack, "settings changes on minutes 3", user=ADMIN)
    shown = await reply_to(slack, "settings", user="U1")
    assert "open 3 minutes and answer changes are allowed" in shown
    round_id, ts = await slack.open_card()
    rnd = await slack.engine.get_round(round_id)
    assert rnd.closes_at is not None
    assert (rnd.closes_at - rnd.opened_at).total_seconds() == 180
    await slack.click(round_id, "B", user="U1", message_ts=ts)
    await slack.click(round_id, "A", user="U1", message_ts=ts)
    calls = await slack.standin.wait_calls("chat.postEphemeral", 2)
    assert "You changed your answer from *B* to *A*." in calls[1].params["text"]
    assert await slack.engine.answered_count(round_id) == 1


async def test_bandwidth_posts_the_table_and_uploads_the_chart(slack: Harness) -> None:
    reply = await slack.command("140GB", name="/bandwidth")
    assert (reply.status, reply.text) == (200, "")
    (table,) = await slack.standin.wait_calls("chat.postMessage")
    assert table.params["channel"] == CHANNEL
    text = table.params["text"]
    assert text.startswith("```\ntransfer of 140 GB")
    assert text.endswith("\n```")
    for name in ("InfiniBand", "Wi-Fi 6", "Fibre Channel"):
        assert name in text
    (done,) = await slack.standin.wait_calls("files.completeUploadExternal", within=30)
    assert done.params["channel_id"] == CHANNEL
    (url_call,) = slack.standin.of("files.getUploadURLExternal")
    assert url_call.params["filename"].startswith("bandwidth-transfer-of-140-gb")
    (png,) = slack.standin.uploads.values()
    assert png.startswith(PNG)
    assert int(url_call.params["length"]) == len(png)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("help", "How to ask for an estimate:"),
        ("", "Give a size first."),
        ("lots of data", "```\nUsage: /bandwidth SIZE"),
        ("140GB over=warp-drive", "warp-drive"),
    ],
)
async def test_bandwidth_help_and_bad_input_get_the_usage_privately(
    slack: Harness, text: str, says: str
) -> None:
    reply = await slack.command(text, name="/bandwidth")
    assert reply.status == 200
    assert says in reply.text
    assert "/bandwidth 140GB" in reply.text
    assert slack.standin.of("chat.postMessage") == []
    assert slack.standin.of("files.getUploadURLExternal") == []


async def test_a_question_with_a_chart_gets_it_in_the_reveal_thread(slack: Harness) -> None:
    round_id, ts = await slack.open_card("networking")
    assert (await slack.command("close")).status == 200
    (done,) = await slack.standin.wait_calls("files.completeUploadExternal", within=30)
    assert done.params["thread_ts"] == ts
    assert done.params["channel_id"] == CHANNEL
    (png,) = slack.standin.uploads.values()
    assert png.startswith(PNG)
    thread = slack.standin.of("chat.postMessage")[1].params
    assert thread["thread_ts"] == ts
    assert "kernel" in str(thread["blocks"])
    assert (await slack.engine.get_round(round_id)).is_closed
