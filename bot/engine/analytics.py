"""Answer analytics: how each question actually fares, and which ones need a second look.

The database sums; this module only does the statistics on those sums. Nothing here reads rows one
by one, so a year of answers costs one aggregate query and a pass over the questions.

Thresholds below are this project's own choices, tuned so that a flag means "read this question
again", not "this question is wrong"; docs/questions.md explains each.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.engine.model import Difficulty, DifficultyMode, Question

#: Answers a question needs before its measured rate replaces its label's prior, and before
#: difficulty and distractor flags are raised.
MIN_ANSWERS = 20
#: Only answerers with at least this many answers in the scope count towards discrimination.
MIN_USER_ANSWERS = 5
#: Discrimination below this (point-biserial r) is flagged.
LOW_DISCRIMINATION = 0.1
#: The default success rate an adaptive channel aims for.
DEFAULT_TARGET = 0.7

#: Measured difficulty from the share answered right: at least 75% easy, at least 45% medium.
EASY_FROM = 0.75
MEDIUM_FROM = 0.45
#: What a label promises before anyone has answered: the middle of its measured band.
PRIORS: Mapping[Difficulty, float] = {
    Difficulty.EASY: 0.85,
    Difficulty.MEDIUM: 0.60,
    Difficulty.HARD: 0.30,
}


class Flag(StrEnum):
    """Why a question deserves a second look."""

    LABEL = "label"  # measured difficulty disagrees with the label
    DISCRIMINATION = "discrimination"  # strong players miss it as often as weak ones
    DEAD_DISTRACTOR = "dead-distractor"  # a wrong choice nobody picks


@dataclass(frozen=True, slots=True)
class BiserialSums:
    """Sums over (answer, answerer) pairs for the point-biserial correlation.

    ``x`` is 1 when the answer was right, ``y`` the answerer's share right on every other question
    in the scope. Only answerers with ``MIN_USER_ANSWERS`` answers or more are summed.
    """

    n: int = 0
    sum_x: float = 0.0
    sum_y: float = 0.0
    sum_xy: float = 0.0
    sum_yy: float = 0.0


@dataclass(frozen=True, slots=True)
class QuestionAggregate:
    """What the database sums for one question in one scope (a workspace, or everything)."""

    question_id: str
    rounds: int
    answers: int
    correct: int
    picks: tuple[
        tuple[str, int], ...
    ] = ()  # (choice letter, answers), letters picked at least once
    median_ms: float | None = None
    biserial: BiserialSums = BiserialSums()


@dataclass(frozen=True, slots=True)
class FlagNote:
    """One flag with the sentence that explains it."""

    flag: Flag
    reason: str


@dataclass(frozen=True, slots=True)
class QuestionReport:
    """One question's analytics: the figures, and the flags raised on them."""

    question_id: str
    label: Difficulty
    rounds: int
    answers: int
    correct: int
    share_correct: float | None
    choice_shares: tuple[tuple[str, float], ...]  # every choice of the question, in order
    median_seconds: float | None
    discrimination: float | None
    measured: Difficulty | None
    flags: tuple[FlagNote, ...]

    @property
    def flagged(self) -> bool:
        """Return whether any flag was raised."""
        return bool(self.flags)


def point_biserial(sums: BiserialSums) -> float | None:
    """Return Pearson's r between right-or-wrong and the answerer's other rate (None if undefined).

    For a 0/1 variable Pearson's r is the point-biserial correlation; ``x * x == x`` gives
    ``sum_xx == sum_x``.
    """
    n = sums.n
    if n < 2:
        return None
    var_x = n * sums.sum_x - sums.sum_x**2
    var_y = n * sums.sum_yy - sums.sum_y**2
    if var_x <= 0 or var_y <= 1e-12:
        return None
    r = (n * sums.sum_xy - sums.sum_x * sums.sum_y) / math.sqrt(var_x * var_y)
    return max(-1.0, min(1.0, r))


def measured_difficulty(share_correct: float) -> Difficulty:
    """Return the difficulty a share of right answers shows."""
    if share_correct >= EASY_FROM:
        return Difficulty.EASY
    if share_correct >= MEDIUM_FROM:
        return Difficulty.MEDIUM
    return Difficulty.HARD


def report(question: Question, agg: QuestionAggregate | None) -> QuestionReport:
    """Return the analytics of one question from its aggregate (None: never asked)."""
    agg = agg or QuestionAggregate(question.id, 0, 0, 0)
    picks = dict(agg.picks)
    total_picks = sum(picks.values())
    shares = tuple(
        (key, picks.get(key, 0) / total_picks if total_picks else 0.0) for key in question.keys
    )
    share = agg.correct / agg.answers if agg.answers else None
    # A measured difficulty needs as many answers as a flag: one answer says nothing.
    enough = share is not None and agg.answers >= MIN_ANSWERS
    measured = measured_difficulty(share) if share is not None and enough else None
    r = point_biserial(agg.biserial)
    flags: list[FlagNote] = []
    if agg.answers >= MIN_ANSWERS and share is not None and measured is not None:
        if measured is not question.difficulty:
            flags.append(
                FlagNote(
                    Flag.LABEL,
                    f"labelled {question.difficulty.value}, but {share:.0%} of "
                    f"{agg.answers} answers were right, which is {measured.value}",
                )
            )
        for key in question.keys:
            if key != question.answer and picks.get(key, 0) == 0:
                flags.append(
                    FlagNote(
                        Flag.DEAD_DISTRACTOR,
                        f"nobody picked {key} in {agg.answers} answers: it distracts no one",
                    )
                )
    if r is not None and agg.biserial.n >= MIN_ANSWERS and r < LOW_DISCRIMINATION:
        flags.append(
            FlagNote(
                Flag.DISCRIMINATION,
                f"discrimination {r:.2f} (under {LOW_DISCRIMINATION}): strong players miss it "
                "as often as weak ones, so check the key and the wording",
            )
        )
    return QuestionReport(
        question_id=question.id,
        label=question.difficulty,
        rounds=agg.rounds,
        answers=agg.answers,
        correct=agg.correct,
        share_correct=share,
        choice_shares=shares,
        median_seconds=agg.median_ms / 1000 if agg.median_ms is not None else None,
        discrimination=r,
        measured=measured,
        flags=tuple(flags),
    )


def reports(
    questions: Iterable[Question], aggregates: Iterable[QuestionAggregate]
) -> list[QuestionReport]:
    """Return one report per question of the bank, in bank order.

    Aggregates of questions no longer in the bank are left out: there is nothing to rewrite.
    Aggregates are keyed by ``Question.asked_as`` (the id, and ``@N`` for revision N).
    """
    by_id = {a.question_id: a for a in aggregates}
    # A workspace's own question is counted per revision: its report is its latest revision's.
    return [report(q, by_id.get(q.asked_as)) for q in questions]


def hardest(items: Sequence[QuestionReport], count: int = 5) -> list[QuestionReport]:
    """Return the asked questions with the lowest share right (at least MIN_ANSWERS answers)."""
    measured = [r for r in items if r.share_correct is not None and r.answers >= MIN_ANSWERS]
    measured.sort(key=lambda r: (r.share_correct or 0.0, -r.answers, r.question_id))
    return measured[:count]


def expected_rate(question: Question, rates: Mapping[str, tuple[int, int]]) -> float:
    """Return the share expected right: measured once it has MIN_ANSWERS answers, else the prior.

    ``rates`` maps a question id to (answers, correct).
    """
    answers, correct = rates.get(question.id, (0, 0))
    if answers >= MIN_ANSWERS:
        return correct / answers
    return PRIORS[question.difficulty]


def pick_adaptive(
    candidates: Sequence[Question],
    asked: Mapping[str, int],
    rates: Mapping[str, tuple[int, int]],
    rng: random.Random,
    *,
    target: float = DEFAULT_TARGET,
) -> Question:
    """Pick, among the least-asked candidates, the one whose expected rate is nearest the target.

    Ties (the same distance) are broken at random, so a new bank does not always start with the
    same question of each label.
    """
    fewest = min(asked.get(q.id, 0) for q in candidates)
    pool = [q for q in candidates if asked.get(q.id, 0) == fewest]
    distance = {q.id: abs(expected_rate(q, rates) - target) for q in pool}
    best = min(distance.values())
    nearest = [q for q in pool if math.isclose(distance[q.id], best, abs_tol=1e-9)]
    return rng.choice(nearest)


def pick_for_level(
    candidates: Sequence[Question],
    asked: Mapping[str, int],
    rates: Mapping[str, tuple[int, int]],
    level: float,
    rng: random.Random,
    *,
    target: float = DEFAULT_TARGET,
) -> Question:
    """Pick, among the least-asked candidates, the one a player of ``level`` answers right with
    a chance nearest the target (a Rasch model: logistic(level - difficulty), where a question's
    difficulty is -logit of its expected rate). Ties are broken at random.

    At level 0 the chance is the expected rate itself, so this is ``pick_adaptive``.
    """
    fewest = min(asked.get(q.id, 0) for q in candidates)
    pool = [q for q in candidates if asked.get(q.id, 0) == fewest]
    distance = {q.id: abs(chance_at(level, expected_rate(q, rates)) - target) for q in pool}
    best = min(distance.values())
    nearest = [q for q in pool if math.isclose(distance[q.id], best, abs_tol=1e-9)]
    return rng.choice(nearest)


def chance_at(level: float, rate: float) -> float:
    """Return the chance that a player of ``level`` answers right a question whose expected
    rate (at level 0) is ``rate``: logistic(level + logit(rate)), rates clamped off 0 and 1."""
    p = min(max(rate, 1e-6), 1 - 1e-6)
    x = level + math.log(p / (1 - p))
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def filter_mode(candidates: Sequence[Question], mode: DifficultyMode) -> tuple[Question, ...]:
    """Return the candidates a channel's mode allows (easy or hard keep only that label)."""
    if mode is DifficultyMode.EASY:
        return tuple(q for q in candidates if q.difficulty is Difficulty.EASY)
    if mode is DifficultyMode.HARD:
        return tuple(q for q in candidates if q.difficulty is Difficulty.HARD)
    return tuple(candidates)
