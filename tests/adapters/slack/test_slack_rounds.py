"""A round on Slack: card on the wire, clicks, reactions, close, timers; real Bolt, real engine."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.parse
from datetime import timedelta

import pytest

from bot.engine.model import Place
from bot.scheduler import close_due_rounds, run_timers
from tests.adapters.slack.conftest import CHANNEL, TEAM, Harness, block_actions, reaction

PLACE = Place("slack", TEAM, CHANNEL)


def _choices(blocks: list[dict]) -> list[str]:
    """Return the action ids of a card's choice buttons (a closed card has none)."""
    return [
        e["action_id"]
        for b in _blocks_of("actions", blocks)
        for e in b["elements"]
        if e["action_id"].startswith("quiz:")
    ]


def _blocks_of(kind: str, blocks: list[dict]) -> list[dict]:
    return [b for b in blocks if b["type"] == kind]


def _all_text(blocks: list[dict]) -> str:
    return json.dumps(blocks, ensure_ascii=False)


async def test_quiz_next_posts_a_card_with_one_button_per_choice(slack: Harness) -> None:
    reply = await slack.command("next storage")
    assert reply.status == 200
    (post,) = await slack.standin.wait_calls("chat.postMessage")
    assert post.params["channel"] == CHANNEL
    assert post.token == "xoxb-test"
    blocks = post.params["blocks"]
    assert blocks[0]["type"] == "header"
    assert "1 TB checkpoint" in blocks[1]["text"]["text"]
    (actions,) = _blocks_of("actions", blocks)
    round_id = int(actions["block_id"].split("_")[2])
    buttons = actions["elements"]
    assert [b["text"]["text"] for b in buttons] == [
        "A · A parallel file system striped over many servers",
        "B · One NFS share on a single server",
        "C · The login node's home directory",
    ]
    assert [b["action_id"] for b in buttons] == [f"quiz:{round_id}:{k}" for k in "ABC"]
    context = _blocks_of("context", blocks)[0]["elements"][0]["text"]
    assert "storage" not in context  # tags wait for the reveal: they can name the answer
    assert "hard, 3 points" in context
    assert "closes <!date^" in context
    assert context.endswith("0 answered")
    # The handler stores the card's ts after the post returns: wait for it to finish.
    await slack.handled.wait(1)
    rnd = await slack.engine.get_round(round_id)
    assert rnd.message_ref == "1700000000.000001"
    assert rnd.closes_at == slack.clock.now + timedelta(minutes=10)
    assert f"<!date^{int(rnd.closes_at.timestamp())}^" in context


async def test_clicks_from_several_users_count_once_each(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    clicks = [("U1", "A"), ("U2", "B"), ("U3", "A"), ("U4", "C")]
    replies = await asyncio.gather(
        *(slack.click(round_id, key, user=user, message_ts=ts) for user, key in clicks)
    )
    # 200 is the ack, given only once the answer is committed and only within the deadline.
    assert [r.status for r in replies] == [200] * 4
    ephemerals = await slack.standin.wait_calls("chat.postEphemeral", 4)
    told = {c.params["user"]: c.params["text"] for c in ephemerals}
    assert set(told) == {"U1", "U2", "U3", "U4"}
    assert all(c.params["channel"] == CHANNEL for c in ephemerals)
    assert "*Right!*" in told["U1"]
    assert "A · A parallel file system" in told["U1"]
    assert "Striping spreads the reads" in told["U1"]
    assert "Not this time" in told["U2"]
    assert "B · One NFS share" in told["U2"]
    assert await slack.engine.answered_count(round_id) == 4

    again = await slack.click(round_id, "B", user="U1", message_ts=ts)
    assert again.status == 200
    calls = await slack.standin.wait_calls("chat.postEphemeral", 5)
    assert calls[4].params["user"] == "U1"
    assert "You already answered *A · A parallel file system" in calls[4].params["text"]
    assert await slack.engine.answered_count(round_id) == 4

    # The card's count is refreshed, and never says who chose what.
    await slack.standin.wait_for(
        lambda: any(
            "4 answered" in json.dumps(c.params.get("blocks"))
            for c in slack.standin.of("chat.update")
        )
    )
    for update in slack.standin.of("chat.update"):
        assert update.params["ts"] == ts
        assert _blocks_of("actions", update.params["blocks"])
        for user, _ in clicks:
            assert user not in _all_text(update.params["blocks"])


async def test_a_card_posted_before_the_button_ids_still_counts(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    payload = block_actions(
        round_id, "A", user="U1", message_ts=ts, response_url=slack.standin.response_url("old")
    )
    payload["actions"][0].update(action_id="quiz_answer_A", value=f"{round_id}:A")
    body = urllib.parse.urlencode({"payload": json.dumps(payload)})
    assert (await slack.post(body, "application/x-www-form-urlencoded")).status == 200
    [told] = await slack.standin.wait_calls("chat.postEphemeral", 1)
    assert "*Right!*" in told.params["text"]
    assert await slack.engine.answered_count(round_id) == 1


@pytest.mark.parametrize(
    "signing",
    [
        pytest.param({"secret": "not-the-secret"}, id="forged-signature"),
        pytest.param({"timestamp": int(time.time()) - 10 * 60}, id="stale-timestamp"),
    ],
)
async def test_unsigned_requests_are_refused_and_change_nothing(
    slack: Harness, signing: dict
) -> None:
    round_id, ts = await slack.open_card()
    click = await slack.click(round_id, "A", user="U9", message_ts=ts, **signing)
    command = await slack.command("close", **signing)
    assert (click.status, command.status) == (401, 401)
    assert await slack.engine.answered_count(round_id) == 0
    assert not (await slack.engine.get_round(round_id)).is_closed
    assert slack.standin.of("chat.postEphemeral") == []
    assert slack.standin.of("chat.update") == []
    assert slack.standin.responses == []


async def test_quiz_close_reveals_on_the_card_and_explains_in_the_thread(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    for user, key in [("U1", "A"), ("U2", "B")]:
        slack.clock.advance(seconds=4)
        await slack.click(round_id, key, user=user, message_ts=ts)
    await slack.standin.wait_calls("chat.postEphemeral", 2)

    reply = await slack.command("close", user="U3")
    assert reply.status == 200
    await slack.standin.wait_for(lambda: len(slack.standin.of("chat.postMessage")) == 2)
    reveal = [u for u in slack.standin.of("chat.update") if not _choices(u.params["blocks"])]
    assert len(reveal) == 1
    card = reveal[0].params
    assert (card["channel"], card["ts"]) == (CHANNEL, ts)
    text = _all_text(card["blocks"])
    assert "`█████░░░░░`  50% (1)  :white_check_mark: *A · A parallel file system" in text
    assert "`█████░░░░░`  50% (1)  :white_small_square: B · One NFS share" in text
    assert "`░░░░░░░░░░`   0% (0)" in text
    assert "2 people answered; 1 right (50%). · Fastest right: <@U1> (4.0 s)" in text

    thread = slack.standin.of("chat.postMessage")[1].params
    assert thread["thread_ts"] == ts
    body = _all_text(thread["blocks"])
    assert "The answer is A · A parallel file system" in body
    assert "Lustre stripes each file" in body
    assert "Why not the others" in body
    assert "One server's network link caps every reader" in body
    assert "Home directories are small and slow" in body
    assert (await slack.engine.get_round(round_id)).is_closed

    late = await slack.click(round_id, "A", user="U5", message_ts=ts)
    assert late.status == 200
    calls = await slack.standin.wait_calls("chat.postEphemeral", 3)
    assert calls[2].params["user"] == "U5"
    assert "This question is closed" in calls[2].params["text"]
    assert await slack.engine.answered_count(round_id) == 2


async def test_the_timer_closes_a_round_when_its_time_is_up(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    await slack.click(round_id, "C", user="U1", message_ts=ts)
    stop = asyncio.Event()
    timers = asyncio.create_task(
        run_timers(slack.engine, slack.bot.publisher, interval=0.02, stop=stop)
    )
    try:
        # Not due yet: a pass of the timers closes nothing.
        assert await close_due_rounds(slack.engine, slack.bot.publisher) == 0
        assert not (await slack.engine.get_round(round_id)).is_closed
        slack.clock.advance(minutes=11)
        await slack.standin.wait_for(lambda: len(slack.standin.of("chat.postMessage")) == 2)
    finally:
        stop.set()
        await asyncio.wait_for(timers, 5)
    assert (await slack.engine.get_round(round_id)).is_closed
    thread = slack.standin.of("chat.postMessage")[1].params
    assert thread["thread_ts"] == ts
    final = slack.standin.of("chat.update")[-1].params
    assert not _choices(final["blocks"])
    assert "1 person answered; 0 right (0%)." in _all_text(final["blocks"])


async def test_emoji_reactions_count_as_answers_and_redeliveries_do_not(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    sent = [
        (reaction("U5", "one", ts), "Ev1", None),
        (reaction("U5", "one", ts), "Ev1", 1),  # Slack's redelivery of the same event
        (reaction("U5", "one", ts), "Ev1", 2),
        (reaction("U6", "b", ts), "Ev2", None),
        (reaction("U7", "thumbsup", ts), "Ev3", None),  # not an answer
        (reaction("U8", "two", "1600000000.000001"), "Ev4", None),  # not the card
    ]
    before = slack.handled.count
    for event, event_id, retry in sent:
        reply = await slack.event(event, event_id=event_id, retry=retry)
        assert reply.status == 200
    # Slack's two redeliveries of Ev1 are acknowledged by the replay guard (same event_id) and
    # never reach the chat core; of the rest, three stand for a choice (thumbsup is dropped on
    # the way). Once those three are handled, nothing more can be said.
    await slack.handled.wait(before + 3)
    assert slack.handled.started == before + 3
    told = [(c.params["user"], c.params["text"]) for c in slack.standin.of("chat.postEphemeral")]
    assert [u for u, _ in told] == ["U5", "U6"]
    assert "*Right!*" in told[0][1]
    assert "Not this time" in told[1][1]
    assert await slack.engine.answered_count(round_id) == 2

    # A second, different reaction from someone who answered is reported, not counted.
    await slack.event(reaction("U5", "three", ts), event_id="Ev5")
    calls = await slack.standin.wait_calls("chat.postEphemeral", 3)
    assert "You already answered *A ·" in calls[2].params["text"]
    assert await slack.engine.answered_count(round_id) == 2

    reveal = await slack.engine.close(round_id)
    assert reveal is not None
    assert [t.count for t in reveal.tallies] == [1, 1, 0]


async def test_a_click_from_another_workspace_is_refused_politely(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    reply = await slack.click(round_id, "A", user="U1", team="T0OTHER", message_ts=ts)
    assert reply.status == 200
    await slack.standin.wait_calls("response_url")
    (answer,) = slack.standin.responses_to("click-U1")
    assert answer["text"] == "That question does not exist here."
    assert answer["response_type"] == "ephemeral"
    assert await slack.engine.answered_count(round_id) == 0
    assert slack.standin.of("chat.postEphemeral") == []


async def test_a_rate_limited_post_is_retried_and_lands_once(slack: Harness) -> None:
    slack.standin.rate_limit("chat.postMessage", times=1, retry_after=0)
    before = slack.handled.count
    reply = await slack.command("next storage")
    assert reply.status == 200
    await slack.handled.wait(before + 1)  # the command's flow is done: its posts are all in
    assert slack.standin.limited == ["chat.postMessage"]
    assert len(slack.standin.of("chat.postMessage")) == 1
    assert (await slack.engine.store.open_round(PLACE)) is not None


async def test_an_unexpected_failure_is_logged_with_an_id_the_user_is_told(
    slack: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    round_id, ts = await slack.open_card()
    slack.standin.fail("chat.postEphemeral", "channel_not_found")
    with caplog.at_level(logging.ERROR, logger="bot.adapters.slack"):
        reply = await slack.click(round_id, "A", user="U1", message_ts=ts)
        assert reply.status == 200
        await slack.standin.wait_calls("response_url")
    (answer,) = slack.standin.responses_to("click-U1")
    assert answer["text"].startswith("Sorry, something went wrong")
    error_id = answer["text"].split("`")[1]
    assert len(error_id) == 8
    (record,) = [r for r in caplog.records if getattr(r, "error_id", None) == error_id]
    assert record.user == "U1"
    assert record.channel == CHANNEL
    assert record.exc_info is not None
    # The answer was committed before the failing reply: it counts.
    assert await slack.engine.answered_count(round_id) == 1


async def test_a_card_that_cannot_be_posted_frees_the_channel(slack: Harness) -> None:
    slack.standin.fail("chat.postMessage", "not_in_channel")
    await slack.command("next storage")
    await slack.standin.wait_calls("response_url")
    (answer,) = slack.standin.responses_to("cmd")
    assert "/invite @quizbot" in answer["text"]
    assert (await slack.engine.store.open_round(PLACE)) is None
    await slack.open_card()


async def test_the_answer_count_on_the_card_is_refreshed_at_most_once_per_interval(
    slack: Harness,
) -> None:
    publisher = slack.bot.publisher
    # The publisher's own clock, frozen: the interval after the first refresh never runs out
    # until the test says so.
    now = [0.0]
    interval_over = asyncio.Event()

    async def sleep(_seconds: float) -> None:
        await interval_over.wait()

    publisher.refresh_every, publisher.clock, publisher.sleep = 1.5, lambda: now[0], sleep
    round_id, ts = await slack.open_card()
    await asyncio.gather(
        *(slack.click(round_id, "A", user=f"U{n}", message_ts=ts) for n in range(12))
    )
    await slack.standin.wait_calls("chat.postEphemeral", 12)
    await slack.standin.wait_calls("chat.update", 1)
    # Twelve answers inside one interval: one edit at once, and no other while it lasts.
    assert len(slack.standin.of("chat.update")) == 1
    now[0] += 1.5
    interval_over.set()
    await slack.standin.wait_for(
        lambda: any(
            "12 answered" in json.dumps(c.params["blocks"]) for c in slack.standin.of("chat.update")
        )
    )
    assert len(slack.standin.of("chat.update")) <= 2
