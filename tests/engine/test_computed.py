"""Rounds that ask computed questions: stored as ``template#seed``, rebuilt from the id alone by
any engine on the same store (after a restart, on another replica), in reveals, reviews and
reports; the channel's share of computed questions mixed into the rotation.

Run against SQLite always and PostgreSQL when QUIZBOT_TEST_DATABASE_URL is set.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

import bot.engine.engine as engine_module
from bot.bank import QuestionBank, load_bank
from bot.bank import templates as templates_module
from bot.bank.templates import load_templates, parse_instance_id
from bot.engine import COMPUTED, AnswerStatus, ChannelSettings, Place, QuizEngine
from bot.engine.engine import template_of
from bot.engine.learning import CardKey
from bot.engine.model import DifficultyMode
from bot.errors import NotFound, UserError
from bot.storage import SqlStore, open_store
from tests.conftest import FakeClock

PLACE = Place("slack", "T1", "C1")
BANK = Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"
TEMPLATES = load_templates()


def fresh_bank() -> QuestionBank:
    """Return a bank loaded from the files, as a process starting up loads it."""
    return load_bank([BANK], load_templates())


def engine_on(store: SqlStore, clock: FakeClock, seed: int = 3) -> QuizEngine:
    return QuizEngine(store, fresh_bank(), clock=clock, rng=random.Random(seed))


def wrong_key(question) -> str:  # type: ignore[no-untyped-def]
    return next(k for k in question.keys if k != question.answer)


async def test_a_computed_round_stores_its_instance_id_and_survives_a_restart(
    database_url: str, clock: FakeClock
) -> None:
    store = await open_store(database_url)
    try:
        card = await engine_on(store, clock).start_round(PLACE, computed=True)
        parsed = parse_instance_id(card.question.id)
        assert parsed is not None
        assert parsed[0] in {t.id for t in TEMPLATES}
        stored = await store.get_round(card.round_id)
        assert stored is not None and stored.question_id == card.question.id
    finally:
        await store.close()

    # A new process: a new store, a bank loaded again, an engine that never saw the round.
    store = await open_store(database_url)
    try:
        engine = engine_on(store, clock, seed=99)
        again = await engine.question_of(await engine.get_round(card.round_id))
        assert again == card.question
        outcome = await engine.answer("slack", "T1", card.round_id, "U1", again.answer)
        assert outcome.status is AnswerStatus.ACCEPTED and outcome.correct
        assert outcome.short == card.question.short
        reveal = await engine.close(card.round_id)
        assert reveal is not None
        assert reveal.question == card.question
        assert reveal.correct == 1
        # The thread's explanation carries the working with the drawn numbers.
        assert "The estimator, asked `/bandwidth " in reveal.question.full
        assert [t.correct for t in reveal.tallies].count(True) == 1
    finally:
        await store.close()


async def test_two_replicas_grade_and_reveal_the_same_computed_question(
    database_url: str, clock: FakeClock
) -> None:
    first, second = await open_store(database_url), await open_store(database_url)
    try:
        poster, other = engine_on(first, clock, seed=1), engine_on(second, clock, seed=2)
        card = await poster.start_round(PLACE, computed=True)
        question = card.question
        wrong = wrong_key(question)
        late = await other.answer("slack", "T1", card.round_id, "U2", wrong)
        assert late.status is AnswerStatus.ACCEPTED and not late.correct
        assert late.why_not == question.why_not[wrong]
        right = await poster.answer("slack", "T1", card.round_id, "U1", question.answer)
        assert right.correct
        reveal = await other.close(card.round_id)
        assert reveal is not None and reveal.question == question
        counts = {t.choice.key: t.count for t in reveal.tallies}
        assert counts[question.answer] == 1 and counts[wrong] == 1
    finally:
        await first.close()
        await second.close()


async def test_computed_questions_rotate_through_the_templates(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = engine_on(store, clock)
    asked = []
    for _ in range(len(TEMPLATES)):
        card = await engine.start_round(PLACE, computed=True)
        asked.append(template_of(card.question.id))
        await engine.close(card.round_id)
        clock.advance(minutes=1)
    assert sorted(asked) == sorted(t.id for t in TEMPLATES)


async def test_the_channel_share_mixes_computed_questions_into_untagged_rounds(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = engine_on(store, clock)
    other = Place("slack", "T1", "C2")

    async def kinds(place: Place, rounds: int, tag: str | None = None) -> Counter[bool]:
        seen: Counter[bool] = Counter()
        for _ in range(rounds):
            card = await engine.start_round(place, tag=tag)
            seen[template_of(card.question.id) is not None] += 1
            await engine.close(card.round_id)
        return seen

    assert (await engine.channel_settings(PLACE)).computed_percent == 0
    assert await kinds(PLACE, 6) == Counter({False: 6})
    saved = await engine.change_channel_settings(PLACE, computed_percent=100)
    assert saved.computed_percent == 100
    assert await kinds(PLACE, 4) == Counter({True: 4})
    # A tag keeps to the bank's questions with that tag.
    assert await kinds(PLACE, 2, tag="storage") == Counter({False: 2})
    # Per channel: the other channel still asks bank questions only.
    assert await kinds(other, 3) == Counter({False: 3})
    await engine.change_channel_settings(PLACE, computed_percent=50)
    half = await kinds(PLACE, 40)
    assert half[True] > 5 and half[False] > 5
    # Other options leave the share alone.
    kept = await engine.change_channel_settings(PLACE, allow_change=True)
    assert kept.computed_percent == 50 and kept.allow_change


async def test_a_share_out_of_range_is_refused_and_changes_nothing(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = engine_on(store, clock)
    await engine.change_channel_settings(PLACE, computed_percent=30)
    for bad in (-1, 101):
        with pytest.raises(UserError, match="percent from 0 to 100"):
            await engine.change_channel_settings(PLACE, computed_percent=bad)
        with pytest.raises(UserError):
            await engine.set_channel_settings(PLACE, ChannelSettings(computed_percent=bad))
    assert (await store.channel_settings(PLACE)).computed_percent == 30


async def test_the_share_is_stored_per_channel(database_url: str, clock: FakeClock) -> None:
    store = await open_store(database_url)
    try:
        await store.set_channel_settings(PLACE, ChannelSettings(computed_percent=25))
    finally:
        await store.close()
    store = await open_store(database_url)
    try:
        assert (await store.channel_settings(PLACE)).computed_percent == 25
        assert (await store.channel_settings(Place("slack", "T1", "C9"))).computed_percent == 0
    finally:
        await store.close()


async def test_a_missed_computed_question_comes_back_for_review_rebuilt(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = engine_on(store, clock)
    card = await engine.start_round(PLACE, computed=True)
    await engine.answer("slack", "T1", card.round_id, "U1", wrong_key(card.question))
    await engine.close(card.round_id)
    clock.advance(days=2)
    # Another process: the card names the instance, and the review rebuilds it.
    later = engine_on(store, clock, seed=5)
    due = await later.next_review("slack", "T1", "U1")
    assert due == card.question
    outcome = await later.answer_review("slack", "T1", "U1", due.id, due.answer)
    assert outcome.correct and outcome.counted
    queue = await later.review_queue("slack", "T1", "U1")
    assert queue.pending == 1 and queue.due == 0


async def test_the_report_lists_answered_computed_instances_after_the_bank(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = engine_on(store, clock)
    card = await engine.start_round(PLACE, computed=True)
    await engine.answer("slack", "T1", card.round_id, "U1", card.question.answer)
    await engine.close(card.round_id)
    items = await engine.question_report("slack", "T1")
    bank_ids = [q.id for q in engine.bank.filter(None)]
    assert [r.question_id for r in items[: len(bank_ids)]] == bank_ids
    (computed,) = items[len(bank_ids) :]
    assert computed.question_id == card.question.id
    assert computed.answers == 1 and computed.correct == 1


async def test_a_bank_without_templates_refuses_a_computed_question(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(0))
    with pytest.raises(UserError, match="no computed-question templates"):
        await engine.start_round(PLACE, computed=True)
    assert await store.open_round(PLACE) is None
    # A share set anyway asks bank questions only.
    await engine.change_channel_settings(PLACE, computed_percent=100)
    card = await engine.start_round(PLACE)
    assert template_of(card.question.id) is None


def test_the_word_that_asks_a_computed_question() -> None:
    assert COMPUTED == "computed"


@pytest.mark.parametrize(
    "question_id",
    [
        "dp-gradient-allreduce#01",
        "dp-gradient-allreduce#-1",
        "dp-gradient-allreduce#+1",
        "dp-gradient-allreduce#1000000000",
        "dp-gradient-allreduce#",
        "dp-gradient-allreduce#1#2",
        "dp-gradient-allreduce#١",
        "no-such-template#1",
        "#1",
    ],
)
def test_an_id_that_names_no_instance_is_unknown(question_id: str) -> None:
    bank = fresh_bank()
    with pytest.raises(KeyError):
        bank.by_id(question_id)
    assert question_id not in bank


def test_the_bank_rebuilds_the_same_instance_from_its_id() -> None:
    one, two = fresh_bank(), fresh_bank()
    for template in TEMPLATES:
        question = one.instance(template.id, 12345)
        assert question.id == f"{template.id}#12345"
        assert two.by_id(question.id) == question
        assert question.id in two


async def test_mixed_in_computed_questions_keep_to_the_difficulty_mode(
    store: SqlStore, clock: FakeClock
) -> None:
    engine = engine_on(store, clock)
    hard = {t.id for t in TEMPLATES if t.difficulty.value == "hard"}
    assert hard and len(hard) < len(TEMPLATES)
    await engine.change_channel_settings(
        PLACE, computed_percent=100, difficulty=DifficultyMode.HARD
    )
    for _ in range(len(hard)):
        card = await engine.start_round(PLACE)
        assert template_of(card.question.id) in hard
        await engine.close(card.round_id)
    # Asked for, a computed question may come from any template, whatever the mode.
    asked = set()
    for _ in range(len(TEMPLATES)):
        card = await engine.start_round(PLACE, computed=True)
        asked.add(template_of(card.question.id))
        await engine.close(card.round_id)
    assert asked - hard


async def test_the_tag_computed_asks_a_computed_question(store: SqlStore, clock: FakeClock) -> None:
    engine = engine_on(store, clock)
    for spelled in ("computed", "Computed"):
        card = await engine.start_round(PLACE, tag=spelled)
        assert template_of(card.question.id) in {t.id for t in TEMPLATES}
        await engine.close(card.round_id)


async def test_the_report_rebuilds_only_the_most_answered_instances(
    store: SqlStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "COMPUTED_REPORTED", 1)
    engine = engine_on(store, clock)
    ids = []
    for answerers in (("U1",), ("U1", "U2")):
        card = await engine.start_round(PLACE, computed=True)
        for user in answerers:
            await engine.answer("slack", "T1", card.round_id, user, card.question.answer)
        await engine.close(card.round_id)
        ids.append(card.question.id)
    items = await engine.question_report("slack", "T1")
    computed = [r.question_id for r in items if template_of(r.question_id)]
    assert computed == [ids[1]]


@pytest.mark.parametrize(
    ("question_id", "template"),
    [
        ("dp-gradient-allreduce#12", "dp-gradient-allreduce"),
        ("dp-gradient-allreduce#0", "dp-gradient-allreduce"),
        ("dp-gradient-allreduce#012", None),
        ("dp-gradient-allreduce#1234567890", None),
        ("dp-gradient-allreduce#", None),
        ("#12", None),
        ("multinode-interconnect", None),
    ],
)
def test_template_of_reads_only_the_banks_spelling(question_id: str, template: str | None) -> None:
    assert template_of(question_id) == template


async def test_a_crafted_computed_id_outside_a_round_rebuilds_nothing(
    store: SqlStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_on(store, clock)
    drawn: list[int] = []
    real_draw = templates_module.draw

    def counting_draw(*args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(args[1])
        return real_draw(*args, **kwargs)

    monkeypatch.setattr(templates_module, "draw", counting_draw)
    # The counter counts: the bank's own lookup of a new instance draws it.
    engine.bank.by_id("dp-gradient-allreduce#4242")
    assert drawn == [4242]
    drawn.clear()
    with pytest.raises(NotFound, match="not in your review list"):
        await engine.answer_review("slack", "T1", "U1", "dp-gradient-allreduce#424242", "A")
    with pytest.raises(NotFound, match="no longer in the bank"):
        await engine.answer_practice("slack", "T1", "U1", "dp-gradient-allreduce#424242", "A")
    assert drawn == []
    assert await store.card(CardKey("slack", "T1", "U1", "dp-gradient-allreduce#424242")) is None
