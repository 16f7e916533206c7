"""Slot claims on SQLite and PostgreSQL: racing schedulers post a slot exactly once."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

from bot.engine import Place, QuizEngine
from bot.scheduler.daily import post_due
from bot.scheduler.port import ClaimKind, Schedule
from bot.storage import SqlStore, open_store
from tests.conftest import SimpleBank, make_question
from tests.scheduler.conftest import RecordingPublisher

PLACE = Place("slack", "T1", "C1")
SLOT_AT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
BANK = SimpleBank([make_question(f"q{i}") for i in range(5)])


async def test_claim_slot_has_one_holder(store: SqlStore):
    claims = await asyncio.gather(
        *(
            store.claim_slot(
                PLACE, ClaimKind.POST, "2026-03-02", slot_at=SLOT_AT, claimant=f"p{i}", at=SLOT_AT
            )
            for i in range(12)
        )
    )
    assert claims.count(True) == 1
    holder = f"p{claims.index(True)}"
    # The holder asking again (a retry after a lost commit) still holds it; others do not.
    again = await store.claim_slot(
        PLACE, ClaimKind.POST, "2026-03-02", slot_at=SLOT_AT, claimant=holder, at=SLOT_AT
    )
    other = await store.claim_slot(
        PLACE, ClaimKind.POST, "2026-03-02", slot_at=SLOT_AT, claimant="late", at=SLOT_AT
    )
    assert (again, other) == (True, False)
    # Another kind, slot or channel is a different claim.
    assert await store.claim_slot(
        PLACE, ClaimKind.DIGEST, "2026-03-02", slot_at=SLOT_AT, claimant="x", at=SLOT_AT
    )
    assert await store.claim_slot(
        PLACE, ClaimKind.POST, "2026-03-03", slot_at=SLOT_AT, claimant="x", at=SLOT_AT
    )
    assert await store.claim_slot(
        Place("slack", "T1", "C2"),
        ClaimKind.POST,
        "2026-03-02",
        slot_at=SLOT_AT,
        claimant="x",
        at=SLOT_AT,
    )
    assert await store.last_claim(PLACE, ClaimKind.POST) == "2026-03-03"


async def test_schedule_round_trip_and_states(store: SqlStore):
    schedule = Schedule(
        PLACE,
        9,
        30,
        "Europe/Berlin",
        tag="net",
        digest_weekday=4,
        close_minutes=45,
        since=SLOT_AT,
        set_by="U1",
    )
    await store.put_schedule(schedule)
    assert await store.get_schedule(PLACE) == schedule
    await store.claim_slot(
        PLACE, ClaimKind.POST, "2026-03-02", slot_at=SLOT_AT, claimant="a", at=SLOT_AT
    )
    await store.claim_slot(
        PLACE, ClaimKind.DIGEST, "2026-02-27", slot_at=SLOT_AT, claimant="a", at=SLOT_AT
    )
    [state] = await store.schedule_states("slack")
    assert (state.schedule, state.last_post, state.last_digest) == (
        schedule,
        "2026-03-02",
        "2026-02-27",
    )
    assert await store.schedule_states("discord") == []
    assert await store.delete_schedule(PLACE)
    assert not await store.delete_schedule(PLACE)
    assert await store.get_schedule(PLACE) is None


async def test_two_schedulers_racing_for_one_slot_post_it_once(database_url: str):
    """Two replicas, each with its own connection pool, engine and publisher."""
    replicas = [await open_store(database_url) for _ in range(2)]
    try:
        now = SLOT_AT + timedelta(seconds=3)
        await replicas[0].put_schedule(
            Schedule(PLACE, 9, 0, "Europe/Berlin", since=SLOT_AT - timedelta(hours=1))
        )
        engines = [
            QuizEngine(s, BANK, clock=lambda: now, rng=random.Random(i))
            for i, s in enumerate(replicas)
        ]
        publishers = [RecordingPublisher(), RecordingPublisher()]
        for attempt in range(3):  # the same instant again, as after a restart
            reports = await asyncio.gather(
                *(
                    post_due(e, p, s, now=now, claimant=f"replica-{i}-{attempt}")
                    for i, (e, p, s) in enumerate(zip(engines, publishers, replicas, strict=True))
                )
            )
            assert sum(r.posted for r in reports) == (1 if attempt == 0 else 0)
        cards = publishers[0].cards + publishers[1].cards
        assert len(cards) == 1
        rnd = await engines[0].get_round(cards[0].round_id)
        assert (rnd.scheduled, rnd.slot, rnd.message_ref) == (
            True,
            "2026-03-02",
            f"msg-{cards[0].round_id}",
        )
    finally:
        for s in replicas:
            await s.close()


async def test_many_channels_many_replicas(database_url: str):
    replicas = [await open_store(database_url) for _ in range(3)]
    try:
        now = SLOT_AT + timedelta(seconds=1)
        places = [Place("slack", "T1", f"C{i}") for i in range(8)]
        for place in places:
            await replicas[0].put_schedule(
                Schedule(place, 8, 0, "UTC", since=SLOT_AT - timedelta(days=1))
            )
        engines = [QuizEngine(s, BANK, clock=lambda: now) for s in replicas]
        publishers = [RecordingPublisher() for _ in replicas]
        await asyncio.gather(
            *(
                post_due(e, p, s, now=now, claimant=f"r{i}")
                for i, (e, p, s) in enumerate(zip(engines, publishers, replicas, strict=True))
            )
        )
        posted = sorted(c.round.place.channel for p in publishers for c in p.cards)
        assert posted == sorted(p.channel for p in places)
    finally:
        for s in replicas:
            await s.close()
