"""Cards in channels the bot was never added to: it joins public ones, so emoji answers count.

Slack sends ``reaction_added`` only from conversations the app is a member of; the stand-in
plays that rule (``is_member``), and a reaction is delivered here only where Slack would.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.engine.model import Place
from tests.adapters.slack.conftest import TEAM, Harness, reaction

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"
OUTSIDE = "C0PUBLIC"
PRIVATE = "G0SECRET"
NOTE = "emoji answers can't reach me in this channel"


def manifest_scopes() -> set[str]:
    """Return the bot scopes a workspace grants when it installs the shipped manifest."""
    return set(yaml.safe_load(MANIFEST.read_text())["oauth_config"]["scopes"]["bot"])


def context_of(blocks: list[dict]) -> str:
    (context,) = [b for b in blocks if b["type"] == "context"]
    return str(context["elements"][0]["text"])


async def react(slack: Harness, user: str, name: str, ts: str, channel: str, event_id: str) -> bool:
    """Send a reaction as Slack would: only if the bot is in the channel. Return whether sent."""
    if not slack.standin.is_member(channel):
        return False
    reply = await slack.event(reaction(user, name, ts, channel), event_id=event_id)
    assert reply.status == 200
    return True


async def test_a_card_in_a_public_channel_joins_it_first_and_reactions_count(
    slack: Harness,
) -> None:
    slack.standin.outside.add(OUTSIDE)
    slack.standin.granted = manifest_scopes()
    round_id, ts = await slack.open_card(channel=OUTSIDE)

    methods = [c.method for c in slack.standin.calls if c.params.get("channel") == OUTSIDE]
    assert methods[:2] == ["conversations.join", "chat.postMessage"]
    (post,) = slack.standin.of("chat.postMessage")
    assert NOTE not in context_of(post.params["blocks"])

    assert await react(slack, "U5", "two", ts, OUTSIDE, "EvJoin1")
    (told,) = await slack.standin.wait_calls("chat.postEphemeral")
    assert told.params["user"] == "U5"
    assert "B · One NFS share" in told.params["text"]
    assert await slack.engine.answered_count(round_id) == 1

    # The next card there needs no second join.
    await slack.command("close", channel=OUTSIDE)
    await slack.standin.wait_for(
        lambda: any(c.params.get("thread_ts") for c in slack.standin.of("chat.postMessage"))
    )
    await slack.open_card(channel=OUTSIDE)
    assert len(slack.standin.of("conversations.join")) == 1


async def test_where_joining_is_refused_the_card_says_buttons_still_work(slack: Harness) -> None:
    # An install made before channels:join was asked for: it may post (chat:write.public) but
    # not join, so Slack never sends the bot the reactions on its card.
    slack.standin.outside.add(OUTSIDE)
    slack.standin.granted = (manifest_scopes() - {"channels:join"}) | {"chat:write.public"}
    round_id, ts = await slack.open_card(channel=OUTSIDE)

    (join,) = slack.standin.of("conversations.join")
    assert join.params["channel"] == OUTSIDE
    (post,) = slack.standin.of("chat.postMessage")
    assert context_of(post.params["blocks"]).endswith(f"0 answered · {NOTE}: use the buttons")
    assert not await react(slack, "U5", "two", ts, OUTSIDE, "EvLost")

    reply = await slack.click(round_id, "A", user="U6", channel=OUTSIDE, message_ts=ts)
    assert reply.status == 200
    (told,) = await slack.standin.wait_calls("chat.postEphemeral")
    assert "*Right!*" in told.params["text"]
    (refresh,) = await slack.standin.wait_calls("chat.update")
    assert NOTE in context_of(refresh.params["blocks"])
    assert "1 answered" in context_of(refresh.params["blocks"])
    assert len(slack.standin.of("conversations.join")) == 1


async def test_a_private_channel_the_bot_is_not_in_asks_to_be_invited(slack: Harness) -> None:
    slack.standin.private.add(PRIVATE)
    slack.standin.granted = manifest_scopes()
    reply = await slack.command("next storage", channel=PRIVATE, respond_to="private")
    assert reply.status == 200
    await slack.standin.wait_for(lambda: bool(slack.standin.responses_to("private")))
    (answer,) = slack.standin.responses_to("private")
    assert "/invite @quizbot" in answer["text"]
    (join,) = slack.standin.of("conversations.join")
    assert join.params["channel"] == PRIVATE
    # The refused post took nothing: the channel has no open round.
    assert await slack.engine.open_round(Place("slack", TEAM, PRIVATE)) is None

    # Once invited, the next try posts, and is asked again (the failed post forgot the answer).
    slack.standin.private.discard(PRIVATE)
    slack.standin.fail("conversations.join", "method_not_supported_for_channel_type")
    _, ts = await slack.open_card(channel=PRIVATE)
    assert len(slack.standin.of("conversations.join")) == 2
    post = slack.standin.of("chat.postMessage")[-1]
    assert NOTE not in context_of(post.params["blocks"])
    assert await react(slack, "U7", "one", ts, PRIVATE, "EvPrivate")
    await slack.standin.wait_calls("chat.postEphemeral")
    # The count on the card is refreshed once the answer is in.
    (refresh,) = await slack.standin.wait_calls("chat.update")
    assert refresh.params["channel"] == PRIVATE


async def test_a_token_that_posts_only_as_a_member_joins_only_where_a_card_is_refused(
    slack: Harness,
) -> None:
    # The shipped manifest's scopes: no chat:write.public, so a card that posts proves the bot
    # is in the channel. Once an answer's x-oauth-scopes said so, cards skip the join.
    slack.standin.outside.add(OUTSIDE)
    slack.standin.granted = manifest_scopes()
    await slack.open_card()  # the first: the scopes are not known yet, so it joins first
    assert len(slack.standin.of("conversations.join")) == 1
    await slack.open_card(channel="C0OTHER")
    assert len(slack.standin.of("conversations.join")) == 1  # a member already: no join
    round_id, ts = await slack.open_card(channel=OUTSIDE)

    methods = [(c.method, c.ok) for c in slack.standin.calls if c.params.get("channel") == OUTSIDE]
    assert methods == [
        ("chat.postMessage", False),
        ("conversations.join", True),
        ("chat.postMessage", True),
    ]
    assert slack.standin.refused == [("chat.postMessage", "not_in_channel")]
    post = slack.standin.of("chat.postMessage")[-1]
    assert NOTE not in context_of(post.params["blocks"])
    assert await react(slack, "U5", "two", ts, OUTSIDE, "EvRefused")
    await slack.standin.wait_calls("chat.postEphemeral")
    assert await slack.engine.answered_count(round_id) == 1
