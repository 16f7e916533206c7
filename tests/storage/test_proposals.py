"""Proposals in the store: a question waits for an admin, who approves or rejects it once.

Every test runs on a SQLite file and, when configured, on PostgreSQL; the replica tests open two
stores on one database, as two replicas of the bot would.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
import sqlalchemy as sa

from bot.bank.bank import QuestionBank
from bot.bank.workspace import (
    AlreadyDecided,
    Proposal,
    ProposalStatus,
    Proposed,
    Published,
    UnknownProposal,
    WorkspaceBanks,
    question_yaml,
)
from bot.engine import QuizEngine
from bot.engine.model import FlagReason, Place, Question, ReviewScope, WorkspaceSettings
from bot.errors import UserError
from bot.storage import SqlStore, latest_version, make_engine, open_store
from tests.conftest import FakeClock, make_question

BASE = QuestionBank([make_question("shipped-1"), make_question("shipped-2", answer="B")])


def body(qid: str, text: str = "", answer: str = "A") -> str:
    q: Question = make_question(qid, answer=answer)
    return question_yaml(replace(q, text=text or q.text))


@pytest.fixture
async def replicas(database_url: str) -> AsyncIterator[tuple[SqlStore, SqlStore]]:
    one = await open_store(database_url)
    two = await open_store(database_url)
    try:
        yield one, two
    finally:
        await one.close()
        await two.close()


def engine(store: SqlStore, clock: FakeClock) -> QuizEngine:
    return QuizEngine(
        store, BASE, clock=clock, rng=random.Random(1), banks=WorkspaceBanks(BASE, store)
    )


async def own_ids(banks: WorkspaceBanks, ws: str = "T1") -> dict[str, int | None]:
    return {q.id: q.revision for q in await banks.bank_for("slack", ws) if q.revision}


async def test_a_non_admins_question_waits_and_an_admins_goes_live(
    store: SqlStore, clock: FakeClock
) -> None:
    banks = WorkspaceBanks(BASE, store)
    at = clock()
    proposed = await banks.submit(
        "slack", "T1", body("theirs"), author="U-player", admin=False, at=at, channel="C1"
    )
    assert isinstance(proposed, Proposed) and proposed.question_id == "theirs"
    assert await own_ids(banks) == {}
    published = await banks.submit("slack", "T1", body("mine"), author="U-admin", admin=True, at=at)
    assert published == Published("mine", 1)
    assert await own_ids(banks) == {"mine": 1}
    # The same text again: no new revision, the latest named.
    again = await banks.submit("slack", "T1", body("mine"), author="U-admin", admin=True, at=at)
    assert again == Published("mine", 1)
    [pending] = await banks.proposals("slack", "T1")
    assert (pending.id, pending.question_id, pending.author, pending.channel) == (
        proposed.proposal_id,
        "theirs",
        "U-player",
        "C1",
    )
    assert pending.status is ProposalStatus.PENDING and pending.body == body("theirs")
    # Per workspace and platform.
    assert await banks.proposals("slack", "T2") == []
    assert await banks.proposals("discord", "T1") == []


async def test_approval_publishes_the_proposal_once(store: SqlStore, clock: FakeClock) -> None:
    banks = WorkspaceBanks(BASE, store)
    proposed = await banks.submit(
        "slack", "T1", body("theirs"), author="U-player", admin=False, at=clock()
    )
    assert isinstance(proposed, Proposed)
    clock.advance(minutes=5)
    published = await banks.approve(proposed.proposal_id, "U-admin", clock())
    assert published == Published("theirs", 1)
    assert await own_ids(banks) == {"theirs": 1}
    [revision] = await store.question_history("slack", "T1", "theirs")
    assert revision.author == "U-player" and revision.body == body("theirs")
    decided = await banks.proposal(proposed.proposal_id)
    assert decided is not None
    assert (decided.status, decided.decided_by, decided.decided_at, decided.revision) == (
        ProposalStatus.APPROVED,
        "U-admin",
        clock(),
        1,
    )
    assert await banks.proposals("slack", "T1") == []
    generation = await store.bank_generation("slack", "T1")
    # A second decision changes nothing and says who decided.
    with pytest.raises(AlreadyDecided, match="approved already, by U-admin"):
        await banks.approve(proposed.proposal_id, "U-other", clock())
    with pytest.raises(AlreadyDecided):
        await banks.reject(proposed.proposal_id, "U-other", clock(), "late")
    assert await banks.proposal(proposed.proposal_id) == decided
    assert await store.bank_generation("slack", "T1") == generation
    assert len(await store.question_history("slack", "T1", "theirs")) == 1


async def test_an_edited_approval_stores_the_admins_text(store: SqlStore, clock: FakeClock) -> None:
    banks = WorkspaceBanks(BASE, store)
    await store.save_revisions("slack", "T1", [("ours", body("ours"))], author="U-a", at=clock())
    proposed = await banks.submit(
        "slack", "T1", body("ours", "A proposed edit?"), author="U-player", admin=False, at=clock()
    )
    assert isinstance(proposed, Proposed)
    edited = body("ours", "The admin's wording?", answer="C")
    assert await banks.approve(proposed.proposal_id, "U-admin", clock(), body=edited) == Published(
        "ours", 2
    )
    latest = (await store.question_history("slack", "T1", "ours"))[-1]
    assert (latest.body, latest.author) == (edited, "U-admin")
    decided = await banks.proposal(proposed.proposal_id)
    assert (
        decided is not None and decided.edited and decided.body == body("ours", "A proposed edit?")
    )
    assert (await banks.bank_for("slack", "T1")).by_id("ours").text == "The admin's wording?"


async def test_rejection_keeps_the_reason_and_publishes_nothing(
    store: SqlStore, clock: FakeClock
) -> None:
    banks = WorkspaceBanks(BASE, store)
    proposed = await banks.submit(
        "slack", "T1", body("theirs"), author="U-player", admin=False, at=clock(), channel="C1"
    )
    assert isinstance(proposed, Proposed)
    with pytest.raises(UserError, match="500 characters at most"):
        await banks.reject(proposed.proposal_id, "U-admin", clock(), "x" * 501)
    rejected = await banks.reject(proposed.proposal_id, "U-admin", clock(), "  A duplicate.  ")
    assert (rejected.status, rejected.reason, rejected.decided_by) == (
        ProposalStatus.REJECTED,
        "A duplicate.",
        "U-admin",
    )
    assert await own_ids(banks) == {}
    assert await store.bank_generation("slack", "T1") == 0
    with pytest.raises(AlreadyDecided, match="rejected already"):
        await banks.approve(proposed.proposal_id, "U-admin", clock())
    assert await own_ids(banks) == {}
    everything = await banks.proposals("slack", "T1", None)
    assert [p.status for p in everything] == [ProposalStatus.REJECTED]
    assert await banks.proposals("slack", "T1", ProposalStatus.REJECTED) == everything


async def test_an_unknown_proposal_is_refused(store: SqlStore, clock: FakeClock) -> None:
    banks = WorkspaceBanks(BASE, store)
    with pytest.raises(UnknownProposal, match="no proposal 41"):
        await banks.approve(41, "U-admin", clock())
    with pytest.raises(UnknownProposal):
        await banks.reject(41, "U-admin", clock())
    assert await banks.proposal(41) is None


async def test_reviewing_everyone_makes_admins_questions_proposals(
    store: SqlStore, clock: FakeClock
) -> None:
    banks = WorkspaceBanks(BASE, store)
    assert not await banks.reviews_everyone("slack", "T1")
    await store.set_workspace_settings(
        "slack", "T1", WorkspaceSettings(retention=0.85, review=ReviewScope.EVERYONE)
    )
    settings = await store.workspace_settings("slack", "T1")
    assert (settings.retention, settings.review) == (0.85, ReviewScope.EVERYONE)
    result = await banks.submit(
        "slack", "T1", body("mine"), author="U-admin", admin=True, at=clock()
    )
    assert isinstance(result, Proposed)
    assert await own_ids(banks) == {}
    # Another workspace keeps the default.
    other = await banks.submit(
        "slack", "T2", body("mine"), author="U-admin", admin=True, at=clock()
    )
    assert other == Published("mine", 1)


async def test_an_approval_resolves_the_reports_like_any_revision(
    store: SqlStore, clock: FakeClock
) -> None:
    e = engine(store, clock)
    place = Place("slack", "T1", "C1")
    card = await e.start_round(place)
    await e.close(card.round_id)
    await e.flag(place, "U1", FlagReason.TYPO, None)
    proposed = await e.submit("slack", "T1", body("shipped-1", "Fixed?"), author="U2", admin=False)
    assert isinstance(proposed, Proposed)
    assert len(await e.open_flags("slack", "T1")) == 1
    assert await e.approve(proposed.proposal_id, "U-admin") == Published("shipped-1", 1)
    assert await e.open_flags("slack", "T1") == []


async def test_two_replicas_deciding_one_proposal_decide_it_once(
    replicas: tuple[SqlStore, SqlStore], clock: FakeClock
) -> None:
    one, two = (WorkspaceBanks(BASE, s) for s in replicas)
    for round_ in range(5):
        qid = f"theirs-{round_}"
        proposed = await one.submit("slack", "T1", body(qid), author="U-p", admin=False, at=clock())
        assert isinstance(proposed, Proposed)
        pid = proposed.proposal_id
        decisions = await asyncio.gather(
            one.approve(pid, "U-a1", clock()),
            two.approve(pid, "U-a2", clock()),
            two.reject(pid, "U-a3", clock(), "no"),
            return_exceptions=True,
        )
        won = [d for d in decisions if not isinstance(d, AlreadyDecided)]
        assert len(won) == 1, decisions
        assert all(isinstance(d, AlreadyDecided) for d in decisions if d is not won[0])
        decided = await two.proposal(pid)
        assert decided is not None and decided.status is not ProposalStatus.PENDING
        history = await replicas[1].question_history("slack", "T1", qid)
        if isinstance(won[0], Published):
            assert decided.status is ProposalStatus.APPROVED and len(history) == 1
        else:
            assert isinstance(won[0], Proposal) and history == []


async def test_admins_and_authors_are_each_told_once_across_replicas(
    replicas: tuple[SqlStore, SqlStore], clock: FakeClock
) -> None:
    one, two = (WorkspaceBanks(BASE, s) for s in replicas)
    made = []
    for n, channel in enumerate(("C1", None, "C2")):
        p = await one.submit(
            "slack", "T1", body(f"q{n}"), author="U-p", admin=False, at=clock(), channel=channel
        )
        assert isinstance(p, Proposed)
        made.append(p.proposal_id)
    await one.submit("discord", "G1", body("elsewhere"), author="U-p", admin=False, at=clock())
    claims = await asyncio.gather(
        one.new_proposals("slack", clock()), two.new_proposals("slack", clock())
    )
    assert sorted(p.id for c in claims for p in c) == made
    assert await one.new_proposals("slack", clock()) == []
    # Nothing decided: no author to tell.
    assert await two.decided_proposals("slack", clock()) == []
    await one.approve(made[0], "U-a", clock())
    await one.approve(made[1], "U-a", clock())
    await two.reject(made[2], "U-a", clock(), "Off topic.")
    claims = await asyncio.gather(
        one.decided_proposals("slack", clock()), two.decided_proposals("slack", clock())
    )
    told = sorted((p.id, p.status, p.reason) for c in claims for p in c)
    # The proposal made outside a channel has nobody to tell it to.
    assert told == [
        (made[0], ProposalStatus.APPROVED, None),
        (made[2], ProposalStatus.REJECTED, "Off topic."),
    ]
    assert await one.decided_proposals("slack", clock()) == []


async def test_migration_23_upgrades_a_database_with_workspace_settings(
    database_url: str, clock: FakeClock
) -> None:
    # A database at version 22: no proposals, workspace settings without review, a row in it.
    store = await open_store(database_url)
    await store.close()
    engine_ = make_engine(database_url)
    try:
        async with engine_.begin() as conn:
            await conn.execute(sa.text("DROP TABLE question_proposals"))
            await conn.execute(sa.text("ALTER TABLE workspace_settings DROP COLUMN review"))
            await conn.execute(sa.text("DELETE FROM schema_version WHERE version = 23"))
            await conn.execute(
                sa.text(
                    "INSERT INTO workspace_settings (platform, workspace, retention)"
                    " VALUES ('slack', 'T1', 0.8)"
                )
            )
    finally:
        await engine_.dispose()
    upgraded = await open_store(database_url)
    try:
        assert await upgraded.schema_version() == latest_version()
        assert await upgraded.workspace_settings("slack", "T1") == WorkspaceSettings(0.8)
        banks = WorkspaceBanks(BASE, upgraded)
        result = await banks.submit("slack", "T1", body("q"), author="U", admin=False, at=clock())
        assert isinstance(result, Proposed)
    finally:
        await upgraded.close()


async def test_an_edit_that_changes_the_id_is_refused(store: SqlStore, clock: FakeClock) -> None:
    banks = WorkspaceBanks(BASE, store)
    proposed = await banks.submit(
        "slack", "T1", body("theirs"), author="U", admin=False, at=clock()
    )
    assert isinstance(proposed, Proposed)
    with pytest.raises(UserError, match="keeps its id"):
        await banks.approve(proposed.proposal_id, "U-admin", clock(), body=body("another"))
    assert (await banks.proposals("slack", "T1"))[0].id == proposed.proposal_id
    assert await own_ids(banks) == {}
