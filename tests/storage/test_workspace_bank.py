"""Workspace banks in the store: revisions, hidden questions, and replicas that see each edit.

Every test runs on a SQLite file and, when configured, on PostgreSQL; the replica tests open two
stores on one database, each with its own engine and its own copy of the workspace's bank.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta

import pytest

from bot.bank.bank import QuestionBank
from bot.bank.workspace import WorkspaceBanks, question_yaml
from bot.engine import QuizEngine
from bot.engine.model import FlagReason, Place, Question
from bot.errors import UserError
from bot.scheduler.timers import tell_reporters
from bot.storage import SqlStore, open_store
from tests.conftest import FakeClock, make_question
from tests.scheduler.conftest import RecordingPublisher

BASE = QuestionBank([make_question("shipped-1"), make_question("shipped-2", answer="B")])


def own(qid: str, text: str = "", answer: str = "A") -> Question:
    q = make_question(qid, answer=answer)
    return replace(q, text=text or q.text)


async def save(store: SqlStore, clock: FakeClock, *questions: Question, ws: str = "T1") -> list:
    bodies = [(q.id, question_yaml(q)) for q in questions]
    return await store.save_revisions("slack", ws, bodies, author="U-admin", at=clock())


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


async def ask(e: QuizEngine, clock: FakeClock, channel: str, ws: str = "T1") -> Question:
    """Open a round in a channel, close it, and return the question it asked."""
    clock.advance(minutes=1)
    card = await e.start_round(Place("slack", ws, channel))
    await e.close(card.round_id)
    assert card.round.revision == card.question.revision
    return card.question


async def test_revisions_are_numbered_and_an_unchanged_body_writes_nothing(
    store: SqlStore, clock: FakeClock
) -> None:
    assert await store.bank_generation("slack", "T1") == 0
    assert await save(store, clock, own("mine")) == [("mine", 1)]
    assert await save(store, clock, own("mine")) == []
    assert await save(store, clock, own("mine", "Reworded?"), own("other")) == [
        ("mine", 2),
        ("other", 1),
    ]
    history = await store.question_history("slack", "T1", "mine")
    assert [r.revision for r in history] == [1, 2]
    assert "Reworded?" in history[1].body and history[1].author == "U-admin"
    layer = await store.bank_layer("slack", "T1")
    assert [(r.question_id, r.revision) for r in layer.questions] == [("mine", 2), ("other", 1)]
    assert layer.generation == await store.bank_generation("slack", "T1") == 3
    # Another workspace, another bank.
    assert (await store.bank_layer("slack", "T2")).questions == ()
    assert (await store.bank_layer("discord", "T1")).questions == ()


async def test_two_edits_at_once_take_two_revisions(store: SqlStore, clock: FakeClock) -> None:
    await asyncio.gather(
        save(store, clock, own("mine", "First?")), save(store, clock, own("mine", "Second?"))
    )
    history = await store.question_history("slack", "T1", "mine")
    assert [r.revision for r in history] == [1, 2]


async def test_hiding_is_per_workspace_and_undone(store: SqlStore, clock: FakeClock) -> None:
    banks = WorkspaceBanks(BASE, store)
    by = dict(by="U-admin", at=clock())
    assert await store.set_hidden("slack", "T1", ["shipped-1"], True, **by) == ["shipped-1"]
    assert await store.set_hidden("slack", "T1", ["shipped-1"], True, **by) == []
    assert [q.id for q in await banks.bank_for("slack", "T1")] == ["shipped-2"]
    assert [q.id for q in await banks.bank_for("slack", "T2")] == ["shipped-1", "shipped-2"]
    assert await store.set_hidden("slack", "T1", ["shipped-1"], False, **by) == ["shipped-1"]
    assert [q.id for q in await banks.bank_for("slack", "T1")] == ["shipped-1", "shipped-2"]


async def test_an_own_question_with_a_shipped_id_replaces_it(
    store: SqlStore, clock: FakeClock
) -> None:
    await save(store, clock, own("shipped-2", "Our wording?", answer="C"), own("extra"))
    bank = await WorkspaceBanks(BASE, store).bank_for("slack", "T1")
    assert [(q.id, q.revision) for q in bank] == [
        ("shipped-1", None),
        ("shipped-2", 1),
        ("extra", 1),
    ]
    assert bank.by_id("shipped-2").text == "Our wording?"


async def test_an_edit_on_one_replica_is_asked_by_the_others_next_round(
    replicas: tuple[SqlStore, SqlStore], clock: FakeClock
) -> None:
    one, two = replicas
    editor, asker = engine(one, clock), engine(two, clock)
    # The asker has built its copy of the workspace's bank before the edit.
    assert (await ask(asker, clock, "C0")).id == "shipped-1"
    await save(one, clock, own("ours", "Which revision is this? One."))
    await one.set_hidden("slack", "T1", ["shipped-1", "shipped-2"], True, by="U", at=clock())
    first = await ask(asker, clock, "C1")
    assert (first.id, first.revision, first.text) == ("ours", 1, "Which revision is this? One.")
    # A round open across the edit keeps the revision it asked, for grading and the reveal.
    clock.advance(minutes=1)
    card = await asker.start_round(Place("slack", "T1", "C2"))
    await save(one, clock, own("ours", "Which revision is this? Two.", answer="B"))
    outcome = await asker.answer("slack", "T1", card.round_id, "U1", "A")
    assert outcome.correct  # revision 1's key
    reveal = await asker.close(card.round_id)
    assert reveal is not None and reveal.question.revision == 1
    second = await ask(asker, clock, "C3")
    assert (second.revision, second.answer) == (2, "B")
    assert (await two.get_round(card.round_id)).revision == 1
    # The editor's own engine sees the same, and another workspace none of it.
    assert (await ask(editor, clock, "C4")).revision == 2
    assert (await ask(asker, clock, "C5", ws="T2")).id.startswith("shipped-")


async def test_a_question_hidden_on_one_replica_is_left_out_by_the_others_next_round(
    replicas: tuple[SqlStore, SqlStore], clock: FakeClock
) -> None:
    one, two = replicas
    hider, asker = engine(one, clock), engine(two, clock)
    await save(one, clock, own("ours"))
    # The asker has built its copy of the workspace's bank before the change.
    assert {q.id for q in await asker.bank_for("slack", "T1")} == {"shipped-1", "shipped-2", "ours"}
    assert await hider.hide("slack", "T1", "shipped-1", "U-admin")
    assert await hider.hide("slack", "T1", "ours", "U-admin")  # an own question hides too
    assert not await hider.hide("slack", "T1", "ours", "U-admin")  # already: nothing changes
    for _ in range(3):
        assert (await ask(asker, clock, "C1")).id == "shipped-2"
    with pytest.raises(UserError, match="no question `never-was`"):
        await hider.hide("slack", "T1", "never-was", "U-admin")
    layer = await two.bank_layer("slack", "T1")
    assert layer.hidden == frozenset({"shipped-1", "ours"})
    assert await hider.unhide("slack", "T1", "ours", "U-admin")
    assert {q.id for q in await asker.bank_for("slack", "T1")} == {"shipped-2", "ours"}
    assert {q.id for q in await asker.bank_for("slack", "T2")} == {"shipped-1", "shipped-2"}


async def test_answers_and_analytics_are_per_revision(store: SqlStore, clock: FakeClock) -> None:
    e = engine(store, clock)
    await store.set_hidden("slack", "T1", ["shipped-1", "shipped-2"], True, by="U", at=clock())
    await save(store, clock, own("ours"))

    async def answered(users: str, choice: str) -> None:
        clock.advance(minutes=1)
        card = await e.start_round(Place("slack", "T1", f"C{clock().minute}"))
        for user in users:
            await e.answer("slack", "T1", card.round_id, user, choice)
        await e.close(card.round_id)

    await answered("abc", "B")  # revision 1: three wrong
    await save(store, clock, own("ours", "Clearer now?"))
    await answered("de", "A")  # revision 2: two right
    [item] = [r for r in await e.question_report("slack", "T1") if r.question_id == "ours"]
    assert (item.answers, item.share_correct) == (2, 1.0)
    everything = await store.question_aggregates("slack", "T1")
    assert {a.question_id: a.answers for a in everything} == {"ours@1": 3, "ours@2": 2}


async def test_a_workspace_with_no_changes_reads_only_its_generation(
    store: SqlStore, clock: FakeClock
) -> None:
    banks = WorkspaceBanks(BASE, store)
    assert await banks.bank_for("slack", "T9") is BASE
    await save(store, clock, own("ours"), ws="T9")
    first = await banks.bank_for("slack", "T9")
    assert await banks.bank_for("slack", "T9") is first
    clock.advance(seconds=timedelta(minutes=1).total_seconds())
    await save(store, clock, own("ours", "Again?"), ws="T9")
    assert await banks.bank_for("slack", "T9") is not first


async def test_reports_pause_a_question_on_every_replica_until_a_revision(
    replicas: tuple[SqlStore, SqlStore], clock: FakeClock
) -> None:
    one, two = replicas
    reporter = WorkspaceBanks(BASE, one, pause_at=2)
    asker = QuizEngine(
        two, BASE, clock=clock, rng=random.Random(1), banks=WorkspaceBanks(BASE, two, pause_at=2)
    )
    place = Place("slack", "T1", "C1")
    assert (await ask(asker, clock, "C1")).id == "shipped-1"
    first = await reporter.flag(place, "U1", FlagReason.WRONG, "B is right", clock())
    assert (first.question_id, first.open, first.paused) == ("shipped-1", 1, False)
    with pytest.raises(UserError):
        await reporter.flag(place, "U1", FlagReason.TYPO, None, clock())
    # The other workspace's reports are its own.
    other = Place("slack", "T2", "C1")
    await ask(asker, clock, "C1", ws="T2")
    await reporter.flag(other, "U1", FlagReason.WRONG, None, clock())
    # One report short of the limit: still asked.
    assert "shipped-1" in await asker.bank_for("slack", "T1")
    second = await reporter.flag(place, "U2", FlagReason.UNCLEAR, None, clock())
    assert second.paused
    # The asking replica drops it at its next round.
    for channel in ("C2", "C3", "C4"):
        assert (await ask(asker, clock, channel)).id == "shipped-2"
    assert "shipped-1" in await asker.bank_for("slack", "T2")
    flags = await one.open_flags("slack", "T1")
    assert [(f.user, f.reason, f.note) for f in flags] == [
        ("U1", FlagReason.WRONG, "B is right"),
        ("U2", FlagReason.UNCLEAR, None),
    ]
    # A new revision (here, the workspace's own version of the file's question) resolves them.
    await save(one, clock, own("shipped-1", "Reworded?"))
    assert await one.open_flags("slack", "T1") == []
    assert await one.resolved_flags("slack", "T1", "shipped-1", 1) == ["U1", "U2"]
    assert (await asker.bank_for("slack", "T1")).by_id("shipped-1").revision == 1
    assert len(await one.open_flags("slack", "T2")) == 1


async def test_each_reporter_is_told_of_the_fix_once_across_replicas(
    replicas: tuple[SqlStore, SqlStore], clock: FakeClock
) -> None:
    one = replicas[0]
    engines = [engine(store, clock) for store in replicas]
    place = Place("slack", "T1", "C1")
    await ask(engines[0], clock, "C1")
    for user in ("U1", "U2"):
        await engines[0].flag(place, user, FlagReason.TYPO, None)
    publishers = [RecordingPublisher(), RecordingPublisher()]
    # Nothing resolved yet: nobody is told anything.
    assert await tell_reporters(engines[1], publishers[1]) == 0
    await save(one, clock, own("shipped-1", "Without the typo?"))
    told = await asyncio.gather(
        *(tell_reporters(e, p) for e, p in zip(engines, publishers, strict=True))
    )
    assert sum(told) == 2
    dms = [dm for p in publishers for dm in p.of("dm")]
    assert sorted(user for _, user, _ in dms) == ["U1", "U2"]
    assert all(
        where == place and "shipped-1" in text and "revision 1" in text for where, _, text in dms
    )
    # Told once: later passes tell nobody again.
    assert await tell_reporters(engines[0], publishers[0]) == 0
    assert await tell_reporters(engines[1], publishers[1]) == 0
