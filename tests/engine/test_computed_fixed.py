"""A computed round's question is fixed when it is asked: stored with the workspace, read back by
every later look-up (answers, reveal, review, report), whatever the template or the estimator
became since (a deploy, a replica on a newer version).

Run against SQLite always and PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.bank import QuestionBank, load_bank
from bot.bank import templates as templates_module
from bot.bank.templates import Instance, load_templates
from bot.engine import AnswerStatus, Place, QuizEngine
from bot.engine import instances as instances_module
from bot.engine.model import Choice, Question
from bot.errors import NotFound
from bot.storage import SqlStore, open_store
from tests.conftest import FakeClock

PLACE = Place("slack", "T1", "C1")
BANK = Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"


def engine_on(store: SqlStore, clock: FakeClock, seed: int = 3) -> QuizEngine:
    bank: QuestionBank = load_bank([BANK], load_templates())
    return QuizEngine(store, bank, clock=clock, rng=random.Random(seed))


def newer_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every draw gives other numbers and another key, as a changed template or
    estimator catalogue would for the same seed."""
    real_draw = templates_module.draw

    def changed(*args: Any, **kwargs: Any) -> Instance:
        drawn = real_draw(*args, **kwargs)
        q = drawn.question
        keys = q.keys
        moved = keys[(keys.index(q.answer) + 1) % len(keys)]
        changed_q = replace(
            q,
            text=q.text + " (recomputed)",
            choices=tuple(Choice(c.key, c.text + "0") for c in q.choices),
            answer=moved,
            full=q.full + " Recomputed.",
        )
        return replace(drawn, question=changed_q)

    monkeypatch.setattr(templates_module, "draw", changed)


async def test_reveal_grading_and_review_keep_the_drawn_question_after_a_change(
    database_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = await open_store(database_url), await open_store(database_url)
    try:
        card = await engine_on(first, clock, seed=1).start_round(PLACE, computed=True)
        asked = card.question
        newer_version(monkeypatch)
        # A replica on the newer version, with its own bank: rebuilding would ask otherwise.
        replica = engine_on(second, clock, seed=2)
        assert replica.bank.by_id(asked.id).answer != asked.answer
        assert await replica.question_of(await replica.get_round(card.round_id)) == asked
        right = await replica.answer("slack", "T1", card.round_id, "U1", asked.answer)
        assert right.status is AnswerStatus.ACCEPTED and right.correct
        wrong = next(k for k in asked.keys if k != asked.answer)
        missed = await replica.answer("slack", "T1", card.round_id, "U2", wrong)
        assert not missed.correct and missed.why_not == asked.why_not[wrong]
        reveal = await replica.close(card.round_id)
        assert reveal is not None and reveal.question == asked
        assert {t.choice.key for t in reveal.tallies if t.correct} == {asked.answer}
        # The missed card comes back for review as it was asked.
        clock.advance(days=2)
        due = await replica.next_review("slack", "T1", "U2")
        assert due == asked
        outcome = await replica.answer_review("slack", "T1", "U2", asked.id, asked.answer)
        assert outcome.correct
        # Reports, digests and the dashboard read it as asked too.
        assert await replica.computed_questions("slack", "T1", [asked.id]) == {asked.id: asked}
        assert await replica.question("slack", "T1", asked.id) == asked
    finally:
        await first.close()
        await second.close()


async def test_a_round_from_before_stored_instances_is_drawn_again_then_kept(
    store: SqlStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_on(store, clock)
    drawn = engine.bank.instance("dp-gradient-allreduce", 1234)
    # A round stored by a version that kept only the id.
    rnd = await store.create_round(PLACE, drawn.id, opened_at=clock(), closes_at=None)
    assert await store.computed_instances("slack", "T1", [drawn.id]) == {}
    assert await engine.question_of(rnd) == drawn
    # Its first look-up stored what it graded with: a newer version asks the same.
    assert drawn.id in await store.computed_instances("slack", "T1", [drawn.id])
    newer_version(monkeypatch)
    later = engine_on(store, clock, seed=8)
    assert await later.question_of(rnd) == drawn
    # Another workspace never asked it: there it is drawn as its version draws it.
    elsewhere = await later.question("slack", "T2", drawn.id)
    assert elsewhere.answer != drawn.answer


async def test_the_text_stored_first_is_the_question(store: SqlStore, clock: FakeClock) -> None:
    engine = engine_on(store, clock)
    drawn = engine.bank.instance("dp-gradient-allreduce", 77)
    other = replace(drawn, text="another drawing of the same id")
    first = await store.keep_instance(
        "slack", "T1", drawn.id, instances_module.dump(drawn), at=clock()
    )
    second = await store.keep_instance(
        "slack", "T1", drawn.id, instances_module.dump(other), at=clock()
    )
    assert instances_module.load(first) == drawn
    assert instances_module.load(second) == drawn


async def test_answers_on_a_replica_read_the_instance_once(
    database_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = await open_store(database_url), await open_store(database_url)
    try:
        poster, replica = engine_on(first, clock, seed=1), engine_on(second, clock, seed=2)
        reads: list[int] = []
        for store in (first, second):
            real = store.computed_instances

            async def counted(*args: Any, real: Any = real) -> dict[str, str]:
                reads.append(1)
                return await real(*args)  # type: ignore[no-any-return]

            monkeypatch.setattr(store, "computed_instances", counted)
        card = await poster.start_round(PLACE, computed=True)
        for n in range(5):
            await poster.answer("slack", "T1", card.round_id, f"P{n}", card.question.answer)
        assert reads == []  # the poster keeps what it stored
        for n in range(5):
            await replica.answer("slack", "T1", card.round_id, f"R{n}", card.question.answer)
        assert len(reads) == 1  # the replica reads it once, then keeps it
    finally:
        await first.close()
        await second.close()


async def test_a_crafted_instance_id_stores_nothing(store: SqlStore, clock: FakeClock) -> None:
    engine = engine_on(store, clock)
    crafted = "dp-gradient-allreduce#424242"
    with pytest.raises(NotFound, match="not in your review list"):
        await engine.answer_review("slack", "T1", "U1", crafted, "A")
    with pytest.raises(NotFound, match="no longer in the bank"):
        await engine.answer_practice("slack", "T1", "U1", crafted, "A")
    with pytest.raises(KeyError):
        await engine.question("slack", "T1", "no-such-template#5")
    assert await store.computed_instances("slack", "T1", [crafted, "no-such-template#5"]) == {}


def test_every_template_instance_reads_back_equal() -> None:
    bank = load_bank([BANK], load_templates())
    for template in bank.templates:
        for seed in range(20):
            try:
                q = bank.instance(template, seed)
            except KeyError:
                continue
            assert instances_module.load(instances_module.dump(q)) == q


@pytest.mark.parametrize(
    "text",
    ["", "[]", '{"format": 2}', '{"format": 1, "id": "x"}', "not json", '{"format": 1}'],
)
def test_unreadable_stored_text_is_refused(text: str) -> None:
    with pytest.raises(instances_module.InstanceFormatError):
        instances_module.load(text)


def test_a_question_keeps_its_chart_and_references() -> None:
    bank = load_bank([BANK], load_templates())
    charted = []
    for template in bank.templates:
        for seed in range(20):
            try:
                q = bank.instance(template, seed)
            except KeyError:
                continue
            if q.chart is not None:
                charted.append(q)
                break
    assert any(q.chart is not None and q.chart.plan is not None for q in charted)
    for q in charted:
        back: Question = instances_module.load(instances_module.dump(q))
        assert back.chart == q.chart and back.references == q.references
