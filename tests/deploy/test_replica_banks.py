"""Two real ``quizbot slack`` replicas on one database: a change to the workspace's bank made
through one is in the other's next round, with no restart and no message between them.

The database is a SQLite file both processes open, and PostgreSQL when configured. The second
replica asks a question first, so it holds its copy of the workspace's bank before the change.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime

import aiohttp
import pytest

from bot.bank.loader import load_bank
from bot.bank.workspace import question_yaml
from bot.storage import open_store
from tests.adapters.slack.conftest import BANK, SECRET, TEAM, Sender, round_of
from tests.deploy.processes import SlackProcess, bot_env
from tests.standins.slack_api import SlackApiStandIn

pytestmark = pytest.mark.slow

ADMIN = "UADMIN"
CHECKPOINT = "slack-test-checkpoint"  # the test bank's one question tagged storage
WITHIN = 20.0


@pytest.fixture
async def standin() -> AsyncIterator[SlackApiStandIn]:
    s = SlackApiStandIn(team_id=TEAM, admins=[ADMIN])
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


@pytest.fixture
async def replicas(
    database_url: str, standin: SlackApiStandIn
) -> AsyncIterator[list[SlackProcess]]:
    env = bot_env(
        SLACK_BOT_TOKEN="xoxb-replica-banks",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=standin.url,
        QUIZBOT_DATABASE_URL=database_url,
        QUIZBOT_QUESTIONS=str(BANK),
    )
    # One after the other: the first migrates the new database, the second finds it ready.
    procs = [SlackProcess(env, name="replica-a"), SlackProcess(env, name="replica-b")]
    try:
        for p in procs:
            await p.start()
        yield procs
    finally:
        for p in procs:
            await p.close()


async def said(standin: SlackApiStandIn, sender: Sender, text: str, *, user: str, key: str) -> str:
    """Type a /quiz command on one replica; return its private answer."""
    reply = await sender.command(text, user=user, respond_to=key)
    assert reply.status == 200
    await standin.wait_for(lambda: bool(standin.responses_to(key)), WITHIN)
    return " ".join(str(b.get("text", "")) for b in standin.responses_to(key))


def cards(standin: SlackApiStandIn) -> int:
    """Return how many question cards were posted (a reveal is a reply in the card's thread)."""
    return sum("thread_ts" not in c.params for c in standin.of("chat.postMessage"))


async def ask(standin: SlackApiStandIn, sender: Sender, channel: str) -> tuple[int, str]:
    """Post the next storage question in a channel through one replica; return its round and
    the card's text, and close it there."""

    def posted() -> list:
        return [
            c
            for c in standin.of("chat.postMessage")
            if c.params["channel"] == channel and "thread_ts" not in c.params
        ]

    reply = await sender.command("next storage", channel=channel, respond_to=f"next-{channel}")
    assert reply.status == 200
    await standin.wait_for(lambda: bool(posted()), WITHIN)
    (card,) = posted()
    blocks = card.params["blocks"]
    closed = await sender.command("close", user=ADMIN, channel=channel, respond_to=f"x-{channel}")
    assert closed.status == 200
    return round_of(blocks), str(blocks)


async def test_a_change_through_one_replica_is_in_the_others_next_round(
    replicas: list[SlackProcess], standin: SlackApiStandIn, database_url: str
) -> None:
    db = await open_store(database_url, migrate=False)
    async with aiohttp.ClientSession() as session:
        one, two = (Sender(standin=standin, session=session, url=p.events_url) for p in replicas)
        try:
            # The second replica asks first: it has built its copy of the workspace's bank.
            rid, shown = await ask(standin, two, "C0REPA")
            assert (await db.get_round(rid)).revision is None
            original = load_bank([BANK]).by_id(CHECKPOINT)
            assert original.text.split()[0] in shown

            # A member's rewording, approved by an admin through the first replica.
            fixed = replace(original, text="Where should checkpoints go, asked on replica one?")
            pid = await db.add_proposal(
                "slack", TEAM, CHECKPOINT, question_yaml(fixed), author="U1", at=datetime.now(UTC)
            )
            done = await said(standin, one, f"proposals approve {pid}", user=ADMIN, key="ok")
            assert "is live as revision 1" in done, done
            rid, shown = await ask(standin, two, "C0REPB")
            assert (await db.get_round(rid)).revision == 1
            assert "asked on replica one" in shown

            # Hidden through the first replica: the second's next round has no storage question.
            hidden = await said(standin, one, f"hide {CHECKPOINT}", user=ADMIN, key="hide")
            assert "is hidden in this workspace" in hidden, hidden
            before = cards(standin)
            gone = await said(standin, two, "next storage", user="U1", key="gone")
            assert "No question has the tag" in gone and "storage" in gone
            assert cards(standin) == before

            # Shown again through the second, asked again by the first.
            back = await said(standin, two, f"unhide {CHECKPOINT}", user=ADMIN, key="back")
            assert "is back in this workspace's rounds" in back, back
            rid, shown = await ask(standin, one, "C0REPC")
            assert (await db.get_round(rid)).revision == 1
        except BaseException:
            print("\n".join(p.log()[-3000:] for p in replicas))
            raise
        finally:
            await db.close()
