"""Simulated learners study the bank for 60 days under the old review ladder and under FSRS.

Each learner follows a known forgetting model (below), not FSRS's own, so that the scheduler
is judged against memory it does not model exactly. Every day a learner has the same budget of
answers: the questions that are due come first (most overdue first), and what is left of the
budget goes to questions never asked, in the bank's order. The two schedulers differ only in
what they make due:

- ladder: the review of earlier releases: a missed question comes back after 1, 3, 7 and 21
  days while it is missed, and is done after two right answers in a row; a question answered
  right the first time never comes back;
- FSRS: ``bot.engine.learning.Memory`` at the default desired retention (0.9), every answer
  rated by ``learning.rating_for`` (a recalled answer is quick, a guess is slow).

The forgetting model, per learner and question: a question first answered is known with
probability ``prior`` (else the learner guesses among four choices); after any answer the
explanation leaves a memory of strength S (days) and recall after t days is exp(-t / S). A
recall at probability p multiplies S by 1 + GROWTH * (1 - p) + FLOOR (spacing helps most when
the memory had faded); a failure sets S to max(S_MIN, S * LAPSE). Every parameter is printed.

At day 60 the figure is the expected number of questions a learner recalls (the sum of their
recall probabilities; an unseen question counts 0), divided by the answers they gave.

    .venv/bin/python benchmarks/learning_sim.py [--learners N] [--days D] [--budget B]
                                                [--questions Q] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.engine.learning import CardKey, Memory, MemoryCard, Review, Study, is_due, rating_for

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
LADDER_DAYS = (1, 3, 7, 21)

S_FIRST = 3.0  # days: the memory an answer and its explanation leave the first time
GROWTH = 2.2
FLOOR = 0.25
LAPSE = 0.45
S_MIN = 0.6
CHOICES = 4
QUICK_MS, SLOW_MS = 6_000, 45_000  # a recall is answered quickly, a guess slowly


@dataclass
class Trace:
    """What the learner really remembers of one question."""

    strength: float
    last: datetime


@dataclass
class Learner:
    """One simulated person: their true memory, and the scheduler's view of it."""

    rng: random.Random
    priors: list[float]
    memory: dict[int, Trace] = field(default_factory=dict)
    answers: int = 0

    def answer(self, q: int, now: datetime) -> bool:
        """Answer question ``q`` now; return whether right, and update the true memory."""
        self.answers += 1
        trace = self.memory.get(q)
        if trace is None:
            recalled = self.rng.random() < self.priors[q]
            self.memory[q] = Trace(S_FIRST * (3.0 if recalled else 1.0), now)
            return recalled or self.rng.random() < 1 / CHOICES
        p = self.recall(q, now)
        recalled = self.rng.random() < p
        if recalled:
            trace.strength *= 1 + GROWTH * (1 - p) + FLOOR
        else:
            trace.strength = max(S_MIN, trace.strength * LAPSE)
        trace.last = now
        return recalled or self.rng.random() < 1 / CHOICES

    def recall(self, q: int, now: datetime) -> float:
        """Return the true probability of recalling question ``q`` now."""
        trace = self.memory.get(q)
        if trace is None:
            return 0.0
        days = (now - trace.last).total_seconds() / 86_400
        return math.exp(-days / trace.strength)


class Ladder:
    """The fixed ladder over missed questions (the review before FSRS)."""

    def __init__(self) -> None:
        self.items: dict[int, tuple[int, int, datetime]] = {}  # step, right in a row, due

    def due(self, now: datetime) -> list[int]:
        """Return the questions due now, most overdue first."""
        return sorted((q for q, (_, _, d) in self.items.items() if d <= now), key=self._due)

    def _due(self, q: int) -> datetime:
        return self.items[q][2]

    def answered(self, q: int, right: bool, now: datetime, first: bool) -> None:
        """Update the ladder after an answer."""
        if first:
            if not right:
                self.items[q] = (0, 0, now + timedelta(days=LADDER_DAYS[0]))
            return
        step, run, _ = self.items[q]
        if not right:
            step = min(step + 1, len(LADDER_DAYS) - 1)
            self.items[q] = (step, 0, now + timedelta(days=LADDER_DAYS[step]))
        elif run + 1 >= 2:
            del self.items[q]
        else:
            self.items[q] = (step, run + 1, now + timedelta(days=LADDER_DAYS[step]))


class Fsrs:
    """quizbot's FSRS cards (bot.engine.learning), every answer reviewed."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.cards: dict[int, MemoryCard] = {}

    def due(self, now: datetime) -> list[int]:
        """Return the questions due now, most overdue first."""
        due = [q for q, c in self.cards.items() if is_due(c, now)]
        return sorted(due, key=lambda q: self.cards[q].due_at)

    def answered(self, q: int, right: bool, now: datetime, recalled_fast: bool) -> None:
        """Review the card with the answer."""
        elapsed = QUICK_MS if recalled_fast else SLOW_MS
        review = Review(at=now, correct=right, rating=rating_for(right, None, elapsed))
        key = CardKey("sim", "sim", "learner", str(q))
        self.cards[q] = Study(key, review, self.memory).apply(self.cards.get(q))


def study(scheduler: str, learner: Learner, questions: int, days: int, budget: int) -> float:
    """Run one learner for ``days`` days; return the expected recall at the end."""
    memory = Memory()
    ladder, fsrs = Ladder(), Fsrs(memory)
    fresh = 0
    for day in range(days):
        now = START + timedelta(days=day)
        due = ladder.due(now) if scheduler == "ladder" else fsrs.due(now)
        asked = due[:budget]
        while len(asked) < budget and fresh < questions:
            asked.append(fresh)
            fresh += 1
        for q in asked:
            first = q not in learner.memory
            p_before = learner.recall(q, now)
            right = learner.answer(q, now)
            # A recall is quick; a right guess (or a first answer not known) is slow.
            fast = right and (p_before > 0.5 or (first and learner.memory[q].strength > S_FIRST))
            if scheduler == "ladder":
                ladder.answered(q, right, now, first)
            else:
                fsrs.answered(q, right, now, fast)
    end = START + timedelta(days=days)
    return sum(learner.recall(q, end) for q in range(questions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--budget", type=int, default=12, help="answers a day per learner")
    parser.add_argument("--questions", type=int, default=175)
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args()

    print(
        f"{args.learners} learners, {args.questions} questions, {args.days} days, "
        f"{args.budget} answers a day each, seed {args.seed}"
    )
    print(
        f"forgetting model: first strength {S_FIRST} d (x3 if known), recall exp(-t/S), "
        f"growth 1 + {GROWTH}(1-p) + {FLOOR}, lapse x{LAPSE} (min {S_MIN} d), "
        f"{CHOICES} choices to guess among; FSRS at retention 0.9"
    )
    results: dict[str, tuple[list[float], list[int]]] = {}
    for scheduler in ("ladder", "fsrs"):
        retained, answers = [], []
        rng = random.Random(args.seed)
        for _ in range(args.learners):
            seed = rng.random()
            priors_rng = random.Random(seed)
            priors = [priors_rng.uniform(0.05, 0.6) for _ in range(args.questions)]
            learner = Learner(random.Random(seed + 1), priors)
            retained.append(study(scheduler, learner, args.questions, args.days, args.budget))
            answers.append(learner.answers)
        results[scheduler] = (retained, answers)

    print(f"\n{'scheduler':<10}{'answers':>10}{'recalled at end':>18}{'per answer':>12}")
    per: dict[str, float] = {}
    for scheduler, (retained, answers) in results.items():
        per[scheduler] = sum(retained) / sum(answers)
        print(
            f"{scheduler:<10}{statistics.mean(answers):>10.1f}"
            f"{statistics.mean(retained):>18.1f}{per[scheduler]:>12.3f}"
        )
    ratio = per["fsrs"] / per["ladder"]
    print(f"\nFSRS recalls {ratio:.2f}x as many questions per answer as the ladder")
    print(f"aim: >= 1.2x: {'met' if ratio >= 1.2 else 'NOT met'}")


if __name__ == "__main__":
    main()
