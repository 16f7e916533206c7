"""Reveals as an outbox: a closed round whose results were not posted within the lease is
posted by whichever replica claims it, exactly once (real stores sharing one database, a real
engine per replica, recording ports)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.bank.loader import load_bank
from bot.chat import Publisher, ReplyInThread, UpdateCard
from bot.engine import Place, QuizEngine, Reveal
from bot.scheduler.timers import close_due_rounds
from bot.storage import SqlStore, open_store
from bot.storage._schema import rounds
from tests.chat.test_publish import RecordingPort, Transient
from tests.conftest import FakeClock

PLACE = Place("slack", "T1", "C1")
BANK = load_bank([Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"])
PAST_THE_LEASE = 61  # seconds; the lease is a minute


@dataclass
class Replica:
    """One process: its own store (connections, claimant), engine and platform port."""

    store: SqlStore
    engine: QuizEngine
    port: RecordingPort
    publisher: Publisher

    def reveals(self) -> list[object]:
        """Return what this replica sent of reveals: card edits into results, thread replies."""
        edits = [a for a in self.port.of(UpdateCard) if isinstance(a.card, Reveal)]
        return edits + self.port.of(ReplyInThread)


@pytest.fixture
async def replicas(database_url: str) -> AsyncIterator[tuple[FakeClock, list[Replica]]]:
    clock = FakeClock()
    made = []
    try:
        for seed in range(3):
            store = await open_store(database_url)
            engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(seed))
            port = RecordingPort()
            # One try per send: the outage below outlasts any retry within the publisher.
            publisher = Publisher(engine, port, tries=1)
            made.append(Replica(store, engine, port, publisher))
        yield clock, made
    finally:
        for replica in made:
            await replica.publisher.aclose()
            await replica.store.close()


async def closed_unrevealed(replica: Replica) -> int:
    """Open a round, post its card, answer it, close it; post no results (the process dies)."""
    card = await replica.engine.start_round(PLACE, tag="storage")
    await replica.engine.attach_message(card.round_id, await replica.publisher.post_card(card))
    await replica.engine.answer("slack", "T1", card.round_id, "U1", "A")
    assert await replica.engine.close(card.round_id) is not None
    return card.round_id


async def revealed_at(store: SqlStore, round_id: int) -> object:
    async with store.read() as conn:
        query = sa.select(rounds.c.revealed_at).where(rounds.c.id == round_id)
        return (await conn.execute(query)).scalar_one()


async def test_a_round_closed_by_a_process_that_died_is_revealed_by_another(replicas):
    clock, (dead, alive, _) = replicas
    round_id = await closed_unrevealed(dead)
    # Within the lease the closer may still be posting: nobody else touches it.
    assert await close_due_rounds(alive.engine, alive.publisher) == 0
    assert alive.reveals() == []
    clock.advance(seconds=PAST_THE_LEASE)
    assert await close_due_rounds(alive.engine, alive.publisher) == 1
    edit, thread = alive.reveals()
    assert edit.ref == thread.ref == "ref-1"  # the dead process's card, edited into results
    assert edit.card.answered == 1 and edit.card.round.id == round_id
    assert await revealed_at(alive.store, round_id) == clock.now
    # Done is done: later ticks, on any replica, post nothing more.
    clock.advance(seconds=PAST_THE_LEASE)
    assert await close_due_rounds(alive.engine, alive.publisher) == 0
    assert await close_due_rounds(dead.engine, dead.publisher) == 0
    assert len(alive.reveals()) == 2 and dead.reveals() == []


async def test_a_reveal_that_failed_in_a_platform_outage_is_posted_after_it(replicas):
    clock, (replica, *_) = replicas
    card = await replica.engine.start_round(PLACE, tag="storage")
    await replica.engine.attach_message(card.round_id, await replica.publisher.post_card(card))
    reveal = await replica.engine.close(card.round_id)
    assert reveal is not None
    replica.port.failures = [Transient("the platform is down")]
    with pytest.raises(Transient):
        await replica.publisher.publish_reveal(reveal)
    assert replica.reveals() == [] and await revealed_at(replica.store, card.round_id) is None
    clock.advance(seconds=PAST_THE_LEASE)  # the outage is over
    assert await close_due_rounds(replica.engine, replica.publisher) == 1
    assert [type(a) for a in replica.reveals()] == [UpdateCard, ReplyInThread]
    assert await revealed_at(replica.store, card.round_id) is not None


async def test_two_replicas_claiming_together_post_it_exactly_once(replicas):
    clock, (dead, one, two) = replicas
    round_ids = [await closed_unrevealed(dead)]
    # A second channel, so each claim has more than one round to race for.
    place = Place("slack", "T1", "C2")
    card = await dead.engine.start_round(place, tag="storage")
    await dead.engine.attach_message(card.round_id, await dead.publisher.post_card(card))
    await dead.engine.close(card.round_id)
    round_ids.append(card.round_id)
    clock.advance(seconds=PAST_THE_LEASE)
    counts = await asyncio.gather(
        close_due_rounds(one.engine, one.publisher), close_due_rounds(two.engine, two.publisher)
    )
    assert sum(counts) == 2
    threads = one.port.of(ReplyInThread) + two.port.of(ReplyInThread)
    assert sorted(t.explanation.reveal.round.id for t in threads) == round_ids
    for round_id in round_ids:
        assert await revealed_at(one.store, round_id) is not None


async def test_a_round_closed_before_the_outbox_is_not_revealed_again(replicas, database_url):
    # Migration 13 counts every round closed before it as revealed: no history is posted anew.
    clock, (replica, *_) = replicas
    round_id = await closed_unrevealed(replica)
    async with replica.store.write() as conn:
        await conn.execute(rounds.update().where(rounds.c.id == round_id).values(reveal_owner=None))
    from bot.storage._schema import _reveal_outbox

    async with replica.store.write() as conn:
        await conn.run_sync(_reveal_outbox)
    clock.advance(seconds=PAST_THE_LEASE)
    assert await close_due_rounds(replica.engine, replica.publisher) == 0
    assert replica.reveals() == []


class HeldPort(RecordingPort):
    """A port whose card edits wait, as a send waiting out a long rate limit does."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.arrived = asyncio.Event()

    async def send(self, action: object) -> str | None:
        if isinstance(action, UpdateCard) and isinstance(action.card, Reveal):
            self.arrived.set()
            await self.release.wait()
        return await super().send(action)


class CountedHolds:
    """Count a replica's lease renewals of its reveals, so a test can wait for the next one."""

    def __init__(self, engine: QuizEngine) -> None:
        self.hold = engine.hold_reveal
        self.won = 0
        self.changed = asyncio.Condition()
        engine.hold_reveal = self  # type: ignore[method-assign]

    async def __call__(self, round_id: int) -> bool:
        held = await self.hold(round_id)
        async with self.changed:
            self.won += held
            self.changed.notify_all()
        return held

    async def wait_past(self, count: int) -> None:
        async with asyncio.timeout(10), self.changed:
            await self.changed.wait_for(lambda: self.won > count)


async def slow_reveal(replica: Replica, hold_every: float) -> tuple[Publisher, HeldPort, int]:
    """Close a round of ``replica`` and start its reveal through a port whose edit waits."""
    port = HeldPort()
    publisher = Publisher(replica.engine, port, tries=1, hold_every=hold_every)
    card = await replica.engine.start_round(PLACE, tag="storage")
    await replica.engine.attach_message(card.round_id, "ref-card")
    reveal = await replica.engine.close(card.round_id)
    assert reveal is not None
    return publisher, port, card.round_id


async def test_a_reveal_still_posting_renews_its_lease_and_no_other_replica_posts_it(replicas):
    clock, (slow, other, _) = replicas
    publisher, port, round_id = await slow_reveal(slow, hold_every=0.01)
    holds = CountedHolds(slow.engine)
    reveal = await slow.engine.reveal(await slow.engine.get_round(round_id))
    posting = asyncio.create_task(publisher.publish_reveal(reveal))
    try:
        await asyncio.wait_for(port.arrived.wait(), 10)
        clock.advance(seconds=30)
        # Two more renewals: the second began after the clock moved, so it holds until +90 s.
        await holds.wait_past(holds.won + 1)
        clock.advance(seconds=PAST_THE_LEASE - 30)
        assert await close_due_rounds(other.engine, other.publisher) == 0
        port.release.set()
        await asyncio.wait_for(posting, 10)
    finally:
        port.release.set()
    assert [type(a) for a in port.sent] == [UpdateCard, ReplyInThread]
    assert other.reveals() == []
    assert await revealed_at(slow.store, round_id) == clock.now


async def test_a_reveal_whose_lease_was_taken_over_sends_no_second_thread_reply(replicas):
    # A process stalled past its lease (no renewal reached the database): another replica has
    # claimed and posted the reveal; the first, resuming, does not reply in the thread again.
    clock, (slow, other, _) = replicas
    publisher, port, round_id = await slow_reveal(slow, hold_every=3600)
    reveal = await slow.engine.reveal(await slow.engine.get_round(round_id))
    posting = asyncio.create_task(publisher.publish_reveal(reveal))
    try:
        await asyncio.wait_for(port.arrived.wait(), 10)
        clock.advance(seconds=PAST_THE_LEASE)
        assert await close_due_rounds(other.engine, other.publisher) == 1
        port.release.set()
        await asyncio.wait_for(posting, 10)
    finally:
        port.release.set()
    assert [type(a) for a in other.reveals()] == [UpdateCard, ReplyInThread]
    assert port.of(ReplyInThread) == []
    assert await revealed_at(slow.store, round_id) is not None
