"""Load: a few hundred users answer one round through the ``quizbot slack`` process."""

from __future__ import annotations

import time

import aiohttp
import pytest

from bot.bank.loader import load_bank
from tests.adapters.slack.conftest import BANK, Sender
from tests.reliability.conftest import StartBot
from tests.reliability.harness import (
    Latency,
    account,
    card_ts,
    check_leaderboard,
    drive,
    open_card,
    plan_users,
    quiet,
    round_state,
    wait_closed,
    wait_told,
)
from tests.reliability.standin import FaultyStandIn

pytestmark = pytest.mark.slow

USERS = 300


async def test_every_click_of_a_crowd_is_stored_once_and_told_once(
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

    began = time.perf_counter()
    results, unsent = await drive(sender, round_id, plan, in_flight=100, message_ts=ts)
    latency = Latency.of(results, time.perf_counter() - began)
    assert not unsent
    record = await wait_told(faulty.record, "C0QUIZ", {u for u, _ in plan}, within=60)

    assert (await sender.command("close")).status == 200
    assert (await wait_closed(bot_db, round_id, within=20)).closed_at is not None
    await faulty.wait_for(lambda: any(c.params.get("thread_ts") == ts for c in faulty.calls), 20)
    await quiet(session, bot, faulty)  # no handler nor call under way: a double would be in
    record = faulty.record()
    acc = await account(
        database_url=bot_db,
        record=record,
        round_id=round_id,
        question=question,
        results=results,
    )
    print(latency.line("quizbot slack"), acc.line())
    assert not acc.problems, acc.problems
    assert acc.stored == acc.told_feedback == USERS
    # Every click acknowledged, with 100 in flight: the app acks only within its deadline (a
    # later commit leaves the click unacknowledged), so every ack beat Slack's 3 s.
    assert latency.acked == USERS, latency
    assert not await check_leaderboard(sender, faulty.record, bot_db, caller=plan[0][0])
    assert not bot.tracebacks(), bot.log_tail()
