"""Answer analytics from the database: SQL aggregates on a hand-computed table, both databases."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from bot.engine import ChannelSettings, Place, QuizEngine
from bot.engine.model import AnswerRecord, Difficulty, DifficultyMode
from bot.errors import UserError
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

# Who answered what: every question's key is A. Users U1..U4 answer all six questions; U5 only
# three (under the five answers discrimination needs, so left out of it but counted elsewhere).
#            q1       q2   q3   q4   q5   q6
TABLE = {
    "U1": ["A", "A", "A", "A", "A", "B"],  # 4 of 5 right on q2..q6
    "U2": ["A", "A", "A", "A", "C", "C"],  # 3 of 5
    "U3": ["B", "A", "A", "B", "B", "D"],  # 2 of 5
    "U4": ["C", "A", "B", "B", "C", "B"],  # 1 of 5
    "U5": ["A", "A", "B"],
}
ELAPSED_Q1 = {"U1": 1000, "U2": 2000, "U3": 3000, "U4": 4000, "U5": 5000}


async def fill(store: SqlStore, workspace: str = "T1") -> None:
    for i in range(6):
        qid = f"q{i + 1}"
        rnd = await store.create_round(
            Place("slack", workspace, "C1"), qid, opened_at=T0, closes_at=None
        )
        for user, picks in TABLE.items():
            if i < len(picks):
                ms = ELAPSED_Q1[user] if i == 0 else 1000
                right = picks[i] == "A"
                await store.record_answer(
                    AnswerRecord(rnd.id, user, picks[i], right, 2 if right else 0, T0, ms)
                )
        assert await store.close_round(rnd.id, T0 + timedelta(minutes=5))


async def test_aggregates_match_the_hand_computed_table(store: SqlStore):
    await fill(store)
    by_id = {a.question_id: a for a in await store.question_aggregates("slack", "T1")}
    q1 = by_id["q1"]
    assert (q1.rounds, q1.answers, q1.correct) == (1, 5, 3)
    assert dict(q1.picks) == {"A": 3, "B": 1, "C": 1}
    assert q1.median_ms == pytest.approx(3000)  # of 1000..5000
    # U5 is out of the pairs; U1..U4 give x = 1,1,0,0 and y = 0.8,0.6,0.4,0.2.
    s = q1.biserial
    assert s.n == 4
    assert s.sum_x == pytest.approx(2)
    assert s.sum_y == pytest.approx(2.0)
    assert s.sum_xy == pytest.approx(1.4)
    assert s.sum_yy == pytest.approx(1.2)
    # An even count takes the mean of the middle two: q4 has four answers of 1000 ms.
    assert by_id["q4"].median_ms == pytest.approx(1000)


async def test_engine_report_discrimination_from_sql(store: SqlStore, clock: FakeClock):
    await fill(store)
    bank = SimpleBank([make_question(f"q{i}") for i in range(1, 8)])
    engine = QuizEngine(store, bank, clock=clock)
    out = {r.question_id: r for r in await engine.question_report("slack", "T1")}
    assert out["q1"].discrimination == pytest.approx(2 / math.sqrt(5))
    assert out["q1"].share_correct == pytest.approx(0.6)
    assert out["q7"].answers == 0 and out["q7"].rounds == 0  # in the bank, never asked


async def test_scope_keeps_workspaces_apart(store: SqlStore):
    await fill(store, "T1")
    await fill(store, "T2")
    one = {a.question_id: a for a in await store.question_aggregates("slack", "T1")}
    both = {a.question_id: a for a in await store.question_aggregates()}
    assert one["q1"].answers == 5 and both["q1"].answers == 10
    assert both["q1"].rounds == 2
    # Users are per workspace: T2's U1 is another person, so the pairs double, r stays put.
    assert both["q1"].biserial.n == 8
    assert await store.question_aggregates("discord", "T1") == []
    assert (await store.answer_rates("slack", "T1"))["q1"] == (5, 3)


async def test_channel_difficulty_setting_round_trips(store: SqlStore):
    place = Place("slack", "T1", "C9")
    assert (await store.channel_settings(place)).difficulty is DifficultyMode.MIXED
    await store.set_channel_settings(place, ChannelSettings(difficulty=DifficultyMode.ADAPTIVE))
    assert (await store.channel_settings(place)).difficulty is DifficultyMode.ADAPTIVE


BANK = [
    make_question("seed", difficulty=Difficulty.EASY),
    make_question("e2", difficulty=Difficulty.EASY),
    make_question("m1", difficulty=Difficulty.MEDIUM),
    make_question("h1", difficulty=Difficulty.HARD),
]


async def next_id(engine: QuizEngine, place: Place, clock: FakeClock) -> str:
    card = await engine.start_round(place)
    await engine.close(card.round.id)
    clock.advance(minutes=1)
    return card.question.id


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (DifficultyMode.EASY, {"seed", "e2"}),
        (DifficultyMode.HARD, {"h1"}),
        (DifficultyMode.MIXED, {"seed", "e2", "m1", "h1"}),
    ],
)
async def test_label_modes_pick_only_their_label(store, clock, mode, expected):
    engine = QuizEngine(store, SimpleBank(BANK), clock=clock, rng=random.Random(3))
    place = Place("slack", "T1", "C1")
    await engine.set_channel_settings(place, ChannelSettings(difficulty=mode))
    picked = {await next_id(engine, place, clock) for _ in range(len(expected))}
    assert picked == expected


async def test_mode_without_matching_questions_says_so(store, clock):
    engine = QuizEngine(store, SimpleBank(BANK[:3]), clock=clock)
    place = Place("slack", "T1", "C1")
    await engine.set_channel_settings(place, ChannelSettings(difficulty=DifficultyMode.HARD))
    with pytest.raises(UserError, match="labelled hard"):
        await engine.start_round(place)
    assert await engine.open_round(place) is None


async def test_adaptive_follows_the_measured_rates(store, clock):
    engine = QuizEngine(store, SimpleBank(BANK), clock=clock, rng=random.Random(5))
    place = Place("slack", "T1", "C1")
    await engine.set_channel_settings(place, ChannelSettings(difficulty=DifficultyMode.ADAPTIVE))
    # The first question is still the bank's first, as in every mode.
    assert await next_id(engine, place, clock) == "seed"
    # History in another channel of the workspace: "h1" turns out to be answered right 70% of
    # the time, the target, so it comes next although its label's prior (30%) is far from it.
    other = Place("slack", "T1", "C2")
    rnd = await store.create_round(other, "h1", opened_at=T0, closes_at=None)
    for i in range(20):
        right = i < 14
        await store.record_answer(
            AnswerRecord(rnd.id, f"P{i}", "A" if right else "B", right, 3 * right, T0, 900)
        )
    assert await next_id(engine, place, clock) == "h1"
    # Without history the priors decide: medium (60%) is nearer 70% than easy (85%).
    assert await next_id(engine, place, clock) == "m1"
    assert await next_id(engine, place, clock) == "e2"
