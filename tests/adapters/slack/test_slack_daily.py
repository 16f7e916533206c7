"""Daily questions and private review on Slack: real Bolt, real engine, the Web API stand-in."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.bank.loader import load_bank
from bot.engine import Period, QuizEngine
from bot.engine.model import Place
from bot.scheduler import ScheduleService, run_scheduler, schedule_request, schedule_store_of
from bot.storage import open_store
from tests.adapters.slack.conftest import ADMIN, BANK, CHANNEL, TEAM, Harness, make_settings
from tests.adapters.slack.test_slack_serve import serving
from tests.conftest import ClockReads
from tests.standins.slack_api import SlackApiStandIn

PLACE = Place("slack", TEAM, CHANNEL)


async def reply_to(slack: Harness, text: str, user: str) -> str:
    """Send ``/quiz TEXT``; return what the user saw: the ack text, or the response_url post."""
    before = len(slack.standin.responses_to(user))
    reply = await slack.command(text, user=user, respond_to=user)
    assert reply.status == 200
    if reply.text:
        return reply.text
    await slack.standin.wait_for(lambda: len(slack.standin.responses_to(user)) > before)
    answer = slack.standin.responses_to(user)[before]
    assert answer["response_type"] == "ephemeral"
    return str(answer["text"])


async def test_an_admin_sets_shows_and_stops_the_daily_question(slack: Harness) -> None:
    text = "schedule 09:30 Europe/Berlin weekdays storage digest=fri close=2h"
    answer = await reply_to(slack, text, user=ADMIN)
    assert answer.startswith("Scheduled. Daily question in this channel at 09:30 Europe/Berlin")
    assert "tagged `storage`" in answer and "closes after 2 h" in answer
    # The clock says Monday 2 March 2026, 09:00 UTC (10:00 in Berlin): the next post is Tuesday.
    assert "Next post: Tue 3 Mar 2026 at 09:30 CET (Tue 3 Mar 2026 at 08:30 UTC)." in answer
    stored = await schedule_store_of(slack.engine).get_schedule(PLACE)
    assert stored is not None and (stored.digest_weekday, stored.close_minutes) == (4, 120)
    users_asked = len(slack.standin.of("users.info"))
    shown = await reply_to(slack, "schedule", user="U7")
    assert shown == answer.removeprefix("Scheduled. ")
    assert len(slack.standin.of("users.info")) == users_asked  # showing needs no admin check
    assert await reply_to(slack, "schedule off", user=ADMIN) == (
        "The daily question in this channel is stopped."
    )
    assert await schedule_store_of(slack.engine).get_schedule(PLACE) is None


async def test_the_app_uninstalled_stops_the_workspace_daily_questions(
    slack: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    await reply_to(slack, "schedule 09:30 UTC", user=ADMIN)
    other = Place("slack", "TOTHER", CHANNEL)
    store = schedule_store_of(slack.engine)
    mine = await store.get_schedule(PLACE)
    assert mine is not None
    await store.put_schedule(dataclasses.replace(mine, place=other))
    reply = await slack.event({"type": "app_uninstalled"}, event_id="EvUNINSTALL")
    assert reply.status == 200
    assert await store.get_schedule(PLACE) is None
    assert await store.get_schedule(other) is not None  # another workspace's stays
    # With one SLACK_BOT_TOKEN there is no installation to forget: the operator is told.
    assert any("SLACK_BOT_TOKEN no longer works" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("text", ["schedule 09:30", "schedule off"])
async def test_only_admins_change_the_schedule(slack: Harness, text: str) -> None:
    answer = await reply_to(slack, text, user="U5")
    assert answer == "Only workspace admins can change the daily question of a channel."
    assert await schedule_store_of(slack.engine).get_schedule(PLACE) is None
    assert slack.standin.of("chat.postMessage") == []


async def test_a_configured_admin_needs_no_lookup(slack: Harness) -> None:
    answer = await reply_to(slack, "schedule 10:00 utc", user="UCONFIGURED")
    assert answer.startswith("Scheduled.")
    assert slack.standin.of("users.info") == []


async def test_the_scheduler_posts_the_daily_question_and_reveals_the_last(
    slack: Harness,
) -> None:
    await reply_to(slack, "schedule 09:05 UTC", user=ADMIN)
    stop = asyncio.Event()
    reads = ClockReads(slack.clock)
    task = asyncio.create_task(
        run_scheduler(
            slack.engine,
            slack.bot.publisher,
            schedule_store_of(slack.engine),
            clock=reads,
            interval=0.02,
            stop=stop,
        )
    )
    try:
        await reads.passes(3)
        assert slack.standin.of("chat.postMessage") == []  # 09:00: not yet
        slack.clock.advance(minutes=5)
        (card,) = await slack.standin.wait_calls("chat.postMessage")
        await reads.passes(3)  # more passes at the same instant post nothing more
        assert len(slack.standin.of("chat.postMessage")) == 1
        blocks = card.params["blocks"]
        assert blocks[0]["text"]["text"] == "Quiz question"
        (actions,) = [b for b in blocks if b["type"] == "actions"]
        round_id = int(actions["block_id"].split("_")[2])
        rnd = await slack.engine.get_round(round_id)
        assert (rnd.scheduled, rnd.slot, rnd.closes_at) == (True, "2026-03-02", None)

        slack.clock.advance(days=1)
        (update,) = await slack.standin.wait_calls("chat.update")
        assert update.params["ts"] == card.params.get("ts", rnd.message_ref)
        posts = await slack.standin.wait_calls("chat.postMessage", 3)
        assert any(p.params.get("thread_ts") == rnd.message_ref for p in posts)
        assert (await slack.engine.get_round(round_id)).is_closed
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=5)


async def review_click(slack: Harness, button: str, *, user: str, respond_to: str) -> None:
    """Click a button of the private review message (its id), as Slack sends it."""
    key = button.rsplit(":", 1)[1]
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "standin"},
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {
            "type": "message",
            "message_ts": "1700000001.000009",
            "channel_id": CHANNEL,
            "is_ephemeral": True,
        },
        "trigger_id": "trigger",
        "channel": {"id": CHANNEL, "name": "quiz"},
        "response_url": slack.standin.response_url(respond_to),
        "actions": [
            {
                "type": "button",
                "action_id": button,
                "block_id": "quiz_review_choices",
                "value": key,
                "text": {"type": "plain_text", "text": key},
                "action_ts": "1700000002.000000",
            }
        ],
    }
    body = urllib.parse.urlencode({"payload": json.dumps(payload)})
    reply = await slack.post(body, "application/x-www-form-urlencoded")
    assert (reply.status, reply.text) == (200, "")


async def test_review_re_asks_a_due_question_privately(slack: Harness) -> None:
    assert (await reply_to(slack, "review", user="U3")).startswith("Nothing to review yet")
    round_id, ts = await slack.open_card("networking")
    await slack.click(round_id, "C", user="U3", message_ts=ts)
    await slack.standin.wait_calls("chat.postEphemeral")
    later = await reply_to(slack, "review", user="U3")
    assert later.startswith("Nothing to review right now; your next review is due <!date^")

    slack.clock.advance(days=1)
    await reply_to_nothing(slack, "review", user="U3")
    calls = await slack.standin.wait_calls("chat.postEphemeral", 2)
    asked = calls[1].params
    assert (asked["channel"], asked["user"]) == (CHANNEL, "U3")
    blocks = asked["blocks"]
    assert blocks[0]["text"]["text"] == "Review: a question due again"
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    values = [b["action_id"] for b in actions["elements"]]
    assert values == [f"review:slack-test-interconnect:{k}" for k in "ABCD"]

    board = await slack.engine.leaderboard("slack", TEAM, Period.ALL, "U3")
    await review_click(slack, values[0], user="U3", respond_to="rv1")
    await slack.standin.wait_for(lambda: bool(slack.standin.responses_to("rv1")))
    (feedback,) = slack.standin.responses_to("rv1")
    assert feedback["replace_original"] is True and feedback["response_type"] == "ephemeral"
    assert feedback["text"].startswith(":white_check_mark: *Right!* You chose *A · InfiniBand*.")
    assert "It comes back <!date^" in feedback["text"]
    assert await slack.engine.leaderboard("slack", TEAM, Period.ALL, "U3") == board

    # Someone else clicking a button of that private message changes nothing.
    await review_click(slack, values[0], user="U4", respond_to="rv2")
    await slack.standin.wait_for(lambda: bool(slack.standin.responses_to("rv2")))
    assert "not in your review list" in slack.standin.responses_to("rv2")[0]["text"]


async def reply_to_nothing(slack: Harness, text: str, user: str) -> None:
    """Send a command whose answer is a message of its own, not a reply."""
    reply = await slack.command(text, user=user, respond_to=f"none-{user}")
    assert (reply.status, reply.text) == (200, "")


async def test_serve_runs_the_scheduler(tmp_path: Path, standin: SlackApiStandIn) -> None:
    """A slot missed half an hour ago while the bot was down is posted late at start."""
    settings = make_settings(tmp_path, standin)
    now = datetime.now(UTC)
    due = now - timedelta(minutes=30)
    store = await open_store(settings.database_url)
    try:
        engine = QuizEngine(
            store, load_bank([BANK]), clock=lambda: now - timedelta(hours=1), rng=random.Random(2)
        )
        service = ScheduleService(engine, store)
        await service.set(PLACE, schedule_request(f"{due:%H:%M}"), user=ADMIN, admin=True)
    finally:
        await store.close()
    async with serving(settings, host="127.0.0.1", port=0, timer_interval=0.05):
        (card,) = await standin.wait_calls("chat.postMessage", within=10)
    header = card.params["blocks"][0]["text"]["text"]
    assert header.startswith(f"Posted late: this daily question was due at {due:%H:%M} UTC")
