"""Crash: ``quizbot slack`` is SIGKILLed in the middle of a crowd's clicks and started again.

What must hold: every user who was told feedback has exactly one answer stored; every click that
was acknowledged is stored; clicks that were never acknowledged may be missing, and nothing else
is; the restarted process closes the round on time and reveals it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import aiosqlite
import pytest
import sqlalchemy as sa
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.bank.loader import load_bank
from bot.storage import open_store
from bot.storage._schema import rounds
from tests.adapters.slack.conftest import BANK, CHANNEL, Harness, Sender
from tests.reliability.conftest import StartBot
from tests.reliability.harness import (
    ClickResult,
    account,
    card_ts,
    drive,
    loop_passes,
    open_card,
    plan_users,
    quiet,
    round_state,
    wait_closed,
    wait_told,
)
from tests.reliability.standin import FaultyStandIn

USERS = 300
KILL_AFTER = 120  # acknowledged clicks before the SIGKILL
ROUND_LEFT = timedelta(seconds=10)  # round time left when the process comes back
TIMER_INTERVAL = 5.0  # the bot's round timer looks this often


async def shorten_round(bot_db: str, round_id: int, closes_at: datetime) -> None:
    """Move the round's closing time, while no bot process runs (a short round, injected)."""
    store = await open_store(bot_db, migrate=False)
    try:
        async with store.write() as conn:
            await conn.execute(
                sa.update(rounds).where(rounds.c.id == round_id).values(closes_at=closes_at)
            )
    finally:
        await store.close()


@pytest.mark.slow
async def test_a_sigkill_mid_round_loses_only_unacknowledged_clicks(
    faulty: FaultyStandIn,
    start_bot: StartBot,
    bot_db: str,
    session: aiohttp.ClientSession,
) -> None:
    bot = await start_bot()
    sender = Sender(standin=faulty, session=session, url=bot.url)
    round_id = await open_card(sender, faulty.record, tag="storage")
    ts = await card_ts(bot_db, round_id)
    rnd, _ = await round_state(bot_db, round_id)
    question = load_bank([BANK]).by_id(rnd.question_id)
    plan = plan_users(USERS, "".join(question.keys))

    stop = asyncio.Event()
    acked = 0

    def count(_: ClickResult) -> None:
        nonlocal acked
        acked += 1
        if acked >= KILL_AFTER:
            stop.set()

    async def killer() -> None:
        await stop.wait()
        await bot.kill()

    kill = asyncio.create_task(killer())
    first, unsent = await drive(
        sender, round_id, plan, in_flight=40, message_ts=ts, stop=stop, on_ack=count
    )
    await asyncio.wait_for(kill, 30)
    assert unsent, "every click went out before the kill; nothing was tested"
    lost = [r for r in first if not r.acked]

    closes_at = datetime.now(UTC) + ROUND_LEFT
    await shorten_round(bot_db, round_id, closes_at)
    again = await start_bot()
    sender.url = again.url
    second, rest = await drive(sender, round_id, unsent, in_flight=40, message_ts=ts)
    assert not rest and all(r.acked for r in second), [r for r in second if not r.acked][:3]
    await wait_told(faulty.record, CHANNEL, {r.user for r in second}, within=30)

    wait = (closes_at - datetime.now(UTC)).total_seconds() + TIMER_INTERVAL + 10
    closed = await wait_closed(bot_db, round_id, within=wait)
    assert closed.closed_at is not None, "the restarted bot never closed the round"
    await faulty.wait_for(lambda: any(c.params.get("thread_ts") == ts for c in faulty.calls), 20)
    # The pass that revealed, then one whole pass more: a second reveal (the same pass publishing
    # twice, or the next one finding the reveal unposted) would have gone out by then.
    await loop_passes(session, again, "timers", 1)
    await quiet(session, again, faulty)  # no handler nor call under way: the record is final

    acc = await account(
        database_url=bot_db,
        record=faulty.record(),
        round_id=round_id,
        question=question,
        results=first + second,
        require_all=False,
    )
    print(
        f"crash: {len(first)} clicks before the kill, {len(lost)} of them unacknowledged;",
        acc.line(),
    )
    assert not acc.problems, acc.problems
    # Everyone who clicked after the restart was stored and told.
    assert {r.user for r in second} <= {u for u, _ in plan}
    assert acc.closed_late_s is not None and acc.closed_late_s <= TIMER_INTERVAL + 2
    assert not again.tracebacks(), again.log_tail()


async def test_a_click_is_acknowledged_only_once_its_answer_is_committed(slack: Harness) -> None:
    round_id, ts = await slack.open_card()
    for user in ("U1", "U2", "U3"):
        reply = await slack.click(round_id, "A", user=user, message_ts=ts)
        # The 200 is the ack: by then the answer must be in the database, not on its way.
        assert reply.status == 200
        assert await slack.engine.answered_count(round_id) == int(user[1:])
    await slack.standin.wait_calls("chat.update")  # the card's count, refreshed after them


async def test_a_commit_slower_than_the_deadline_leaves_the_click_unacknowledged(
    slack: Harness, tmp_path: Path
) -> None:
    round_id, ts = await slack.open_card()
    slack.bot.handlers.answer_deadline = 0.2
    stalled = asyncio.Event()

    async with aiosqlite.connect(tmp_path / "quiz.db") as db:

        async def stall(req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]):
            # Past the replay check, before the listener: another writer takes the database,
            # as a stalled disk or a busy replica would, and holds it.
            if not stalled.is_set():
                await db.execute("BEGIN IMMEDIATE")
                stalled.set()
            return await next()

        slack.bot.app.middleware(stall)
        reply = await slack.click(round_id, "A", user="U9", message_ts=ts)
        # No ack: the listener answers 503 at the deadline, and Slack shows the click failed.
        assert stalled.is_set() and reply.status == 503
        assert await slack.engine.answered_count(round_id) == 0
        await db.rollback()
    (told,) = await slack.standin.wait_calls("chat.postEphemeral", within=10)
    assert "*Right!*" in told.params["text"] and told.params["user"] == "U9"
    assert await slack.engine.answered_count(round_id) == 1
    # The card's count is refreshed after the answer; let that finish before the test ends.
    await slack.standin.wait_calls("chat.update")


async def test_a_database_stalled_past_the_replay_check_refuses_the_click_unrecorded(
    slack: Harness, tmp_path: Path
) -> None:
    round_id, ts = await slack.open_card()
    async with aiosqlite.connect(tmp_path / "quiz.db") as db:
        await db.execute("BEGIN IMMEDIATE")
        reply = await slack.click(round_id, "A", user="U9", message_ts=ts)
        # Refused before anything was handled: Slack shows the click failed.
        assert reply.status == 503
        await db.rollback()
    # The late check's claim, once made, is given back: the refused request is not remembered.
    assert slack.bot.guard is not None
    await slack.bot.guard.settle()
    async with aiosqlite.connect(tmp_path / "quiz.db") as db:
        rows = await db.execute_fetchall("SELECT request_key FROM request_claims")
    assert len(rows) == 1  # the `/quiz next` that opened the card; not the click
    assert await slack.engine.answered_count(round_id) == 0
    # The user clicks again (Slack sends a new request) and the click counts.
    again = await slack.click(round_id, "A", user="U9", message_ts=ts, respond_to="again")
    assert again.status == 200 and await slack.engine.answered_count(round_id) == 1
    (told,) = await slack.standin.wait_calls("chat.postEphemeral")
    assert told.params["user"] == "U9"
    # The card's count is refreshed after the answer; let that finish before the test ends.
    await slack.standin.wait_calls("chat.update")
