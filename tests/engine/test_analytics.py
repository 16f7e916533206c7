"""Answer analytics: the statistics on hand-worked tables, the flags, adaptive selection."""

from __future__ import annotations

import math
import random

import pytest

from bot.engine import analytics
from bot.engine.analytics import (
    BiserialSums,
    Flag,
    QuestionAggregate,
    expected_rate,
    filter_mode,
    pick_adaptive,
    point_biserial,
    report,
)
from bot.engine.model import Difficulty, DifficultyMode
from tests.conftest import make_question


def sums_of(pairs: list[tuple[int, float]]) -> BiserialSums:
    return BiserialSums(
        n=len(pairs),
        sum_x=sum(x for x, _ in pairs),
        sum_y=sum(y for _, y in pairs),
        sum_xy=sum(x * y for x, y in pairs),
        sum_yy=sum(y * y for _, y in pairs),
    )


def test_point_biserial_worked_by_hand():
    # Four answerers; x = right on this question, y = their share right on the others.
    #   x: 1    1    0    0
    #   y: 0.8  0.6  0.4  0.2
    # Textbook form: r = (M1 - M0) / s * sqrt(p q), s the population sd of y.
    #   M1 = 0.7, M0 = 0.3, mean y = 0.5, s = sqrt(0.30 - 0.25) = sqrt(0.05), p = q = 0.5
    #   r = 0.4 / sqrt(0.05) * 0.5 = 2 / sqrt(5) = 0.8944...
    r = point_biserial(sums_of([(1, 0.8), (1, 0.6), (0, 0.4), (0, 0.2)]))
    assert r == pytest.approx(2 / math.sqrt(5))
    assert r == pytest.approx(0.894427, abs=1e-6)


def test_point_biserial_negative_when_the_weak_get_it_right():
    r = point_biserial(sums_of([(0, 0.8), (0, 0.6), (1, 0.4), (1, 0.2)]))
    assert r == pytest.approx(-2 / math.sqrt(5))


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [(1, 0.5)],
        [(1, 0.8), (1, 0.6), (1, 0.4)],  # everyone right: x has no variance
        [(1, 0.5), (0, 0.5), (1, 0.5)],  # everyone equally strong: y has no variance
    ],
)
def test_point_biserial_undefined(pairs):
    assert point_biserial(sums_of(pairs)) is None


@pytest.mark.parametrize(
    ("share", "measured"),
    [
        (1.0, Difficulty.EASY),
        (0.75, Difficulty.EASY),
        (0.7499, Difficulty.MEDIUM),
        (0.45, Difficulty.MEDIUM),
        (0.4499, Difficulty.HARD),
        (0.0, Difficulty.HARD),
    ],
)
def test_measured_difficulty_bands(share, measured):
    assert analytics.measured_difficulty(share) is measured


def agg(qid: str, answers: int, correct: int, picks: dict[str, int], **kw) -> QuestionAggregate:
    return QuestionAggregate(
        qid,
        rounds=kw.pop("rounds", 1),
        answers=answers,
        correct=correct,
        picks=tuple(sorted(picks.items())),
        **kw,
    )


def test_report_figures_and_no_flags_below_twenty_answers():
    q = make_question("q1", answer="B", difficulty=Difficulty.HARD)
    r = report(q, agg("q1", 10, 9, {"A": 1, "B": 9}, median_ms=4200.0))
    assert r.share_correct == pytest.approx(0.9)
    assert r.choice_shares == (("A", 0.1), ("B", 0.9), ("C", 0.0), ("D", 0.0))
    assert r.median_seconds == pytest.approx(4.2)
    # Too few answers to judge: no flag, and no measured difficulty either.
    assert r.measured is None
    assert r.flags == ()
    assert report(q, agg("q1", 20, 18, {"A": 2, "B": 18})).measured is Difficulty.EASY


def test_report_flags_label_and_dead_distractors():
    q = make_question("q1", answer="B", difficulty=Difficulty.HARD)
    r = report(q, agg("q1", 40, 36, {"A": 4, "B": 36}))
    kinds = [f.flag for f in r.flags]
    assert kinds == [Flag.LABEL, Flag.DEAD_DISTRACTOR, Flag.DEAD_DISTRACTOR]
    assert "labelled hard, but 90% of 40 answers were right, which is easy" in r.flags[0].reason
    assert "nobody picked C" in r.flags[1].reason and "nobody picked D" in r.flags[2].reason


def test_report_flags_low_discrimination_only_with_enough_pairs():
    q = make_question("q1", answer="A")
    flat = [(1, 0.5), (0, 0.6)] * 10  # r is negative: strong players miss it
    r = report(q, agg("q1", 20, 10, {"A": 10, "B": 4, "C": 3, "D": 3}, biserial=sums_of(flat)))
    assert r.discrimination is not None and r.discrimination < 0.1
    assert [f.flag for f in r.flags] == [Flag.DISCRIMINATION]
    few = report(q, agg("q1", 20, 10, {"A": 10, "B": 10}, biserial=sums_of(flat[:6])))
    assert Flag.DISCRIMINATION not in [f.flag for f in few.flags]


def test_never_asked_question_has_empty_report():
    r = report(make_question("q9"), None)
    assert (r.rounds, r.answers, r.share_correct, r.discrimination, r.flags) == (
        0,
        0,
        None,
        None,
        (),
    )


def test_reports_follow_bank_order_and_drop_unknown_questions():
    bank = [make_question("a"), make_question("b")]
    out = analytics.reports(bank, [agg("b", 1, 1, {"A": 1}), agg("gone", 5, 5, {"A": 5})])
    assert [r.question_id for r in out] == ["a", "b"]


def test_hardest_needs_twenty_answers_and_sorts_by_share():
    bank = [make_question(q) for q in "abc"]
    out = analytics.reports(
        bank,
        [
            agg("a", 20, 15, {"A": 15, "B": 5}),
            agg("b", 25, 5, {"A": 5, "B": 20}),
            agg("c", 5, 0, {"B": 5}),  # too few answers to call it hard
        ],
    )
    assert [r.question_id for r in analytics.hardest(out)] == ["b", "a"]


EASY = make_question("easy", difficulty=Difficulty.EASY)
MEDIUM = make_question("medium", difficulty=Difficulty.MEDIUM)
HARD = make_question("hard", difficulty=Difficulty.HARD)


@pytest.mark.parametrize(
    ("rates", "target", "expected"),
    [
        # No history: the labels' priors (easy 0.85, medium 0.60, hard 0.30) decide.
        ({}, 0.7, "medium"),
        ({}, 0.9, "easy"),
        ({}, 0.2, "hard"),
        # Measured rates take over at 20 answers: this "hard" one is answered right 70% of the time.
        ({"hard": (20, 14)}, 0.7, "hard"),
        # ...but not before.
        ({"hard": (19, 14)}, 0.7, "medium"),
        # A medium question everyone gets right now looks easy.
        ({"medium": (40, 40), "easy": (30, 21)}, 0.7, "easy"),
    ],
)
def test_adaptive_pick_nearest_target(rates, target, expected):
    picked = pick_adaptive([EASY, MEDIUM, HARD], {}, rates, random.Random(1), target=target)
    assert picked.id == expected


def test_adaptive_pick_only_among_least_asked():
    asked = {"medium": 1}
    picked = pick_adaptive([EASY, MEDIUM, HARD], asked, {}, random.Random(1), target=0.6)
    assert picked.id in {"easy", "hard"}
    assert picked.id == "easy"  # |0.85 - 0.6| < |0.30 - 0.6|


def test_adaptive_ties_are_random_but_seeded():
    twins = [make_question(f"m{i}") for i in range(6)]
    seen = {pick_adaptive(twins, {}, {}, random.Random(seed)).id for seed in range(30)}
    assert len(seen) > 1


def test_expected_rate_prior_then_measured():
    assert expected_rate(HARD, {}) == analytics.PRIORS[Difficulty.HARD]
    assert expected_rate(HARD, {"hard": (25, 20)}) == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("mode", "ids"),
    [
        (DifficultyMode.MIXED, ["easy", "medium", "hard"]),
        (DifficultyMode.ADAPTIVE, ["easy", "medium", "hard"]),
        (DifficultyMode.EASY, ["easy"]),
        (DifficultyMode.HARD, ["hard"]),
    ],
)
def test_filter_mode(mode, ids):
    assert [q.id for q in filter_mode([EASY, MEDIUM, HARD], mode)] == ids


@pytest.mark.parametrize(
    ("level", "rates", "expected"),
    [
        # Level 0 is a newcomer: the chance is the expected rate, as in the adaptive mode.
        (0.0, {}, "medium"),
        # Strong players: the hard question's chance rises to about 70%.
        (1.5, {}, "hard"),
        # Weak players: only the easy question comes near 70%... and still under it.
        (-1.5, {}, "easy"),
        # A measured rate moves a question: everyone gets this "hard" one right now.
        (1.5, {"hard": (40, 40), "medium": (40, 10)}, "medium"),
    ],
)
def test_level_pick_nearest_target_at_the_players_level(level, rates, expected):
    picked = analytics.pick_for_level([EASY, MEDIUM, HARD], {}, rates, level, random.Random(1))
    assert picked.id == expected


@pytest.mark.parametrize("rate", [0.05, 0.3, 0.6, 0.85, 0.99])
def test_the_chance_at_level_zero_is_the_rate_and_rises_with_level(rate):
    assert math.isclose(analytics.chance_at(0.0, rate), rate, rel_tol=1e-9)
    assert analytics.chance_at(1.0, rate) > rate > analytics.chance_at(-1.0, rate)
    assert 0 < analytics.chance_at(-10.0, rate) < analytics.chance_at(10.0, rate) < 1


def test_level_pick_only_among_least_asked():
    picked = analytics.pick_for_level([EASY, MEDIUM, HARD], {"hard": 1}, {}, 1.5, random.Random(1))
    assert picked.id == "medium"  # hard was asked; at 1.5 medium (0.87) beats easy (0.96)
