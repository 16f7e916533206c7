"""Each person's memory of each question: FSRS cards, the rating rule, and the ladder's migration.

Every answer a person gives (a channel round, a daily post, a review, practice, the terminal)
reviews that person's card for the question with the `fsrs` package's scheduler. The card says
when the question is due again: soon after a miss, further out after each right answer, further
still when the answer was quick or the person was sure. The rating comes from ``rating_for``
(docs/learning.md has the table).

Intervals are whole days: the bot asks at most daily in a channel, so the scheduler runs without
FSRS's minute-long learning steps, and without fuzz, so a card is a pure function of its answers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import IntEnum, StrEnum
from pathlib import PurePath

from fsrs import Card, Rating, Scheduler, State

from bot.engine.model import Question

DEFAULT_RETENTION = 0.9
MIN_RETENTION = 0.7
MAX_RETENTION = 0.97

# How long after an answer a confidence may still be given for it.
CONFIDENCE_WINDOW = timedelta(minutes=30)

# Answer time, in seconds, that separates a quick recall from a slow one (docs/learning.md).
QUICK_SECONDS = 10.0
SLOW_SECONDS = 60.0


class Grade(IntEnum):
    """FSRS's four ratings, as stored."""

    AGAIN = Rating.Again.value
    HARD = Rating.Hard.value
    GOOD = Rating.Good.value
    EASY = Rating.Easy.value


class Confidence(StrEnum):
    """What a person says of an answer after giving it (optional)."""

    SURE = "sure"
    GUESSED = "guessed"


class Source(StrEnum):
    """Where an answer was given."""

    ROUND = "round"
    REVIEW = "review"
    PRACTICE = "practice"


def rating_for(correct: bool, confidence: Confidence | None, elapsed_ms: int | None) -> Grade:
    """Return the FSRS rating of an answer.

    A wrong answer is Again, sure or not. A right answer the person says they guessed is Hard.
    A right answer they are sure of is Easy when quick, else Good. A right answer with no
    confidence given is Good unless it was slow (Hard). An unknown time counts as neither quick
    nor slow.
    """
    if not correct:
        return Grade.AGAIN
    seconds = None if elapsed_ms is None else elapsed_ms / 1000
    if confidence is Confidence.GUESSED:
        return Grade.HARD
    if confidence is Confidence.SURE:
        return Grade.EASY if seconds is not None and seconds <= QUICK_SECONDS else Grade.GOOD
    return Grade.HARD if seconds is not None and seconds > SLOW_SECONDS else Grade.GOOD


@dataclass(frozen=True, slots=True)
class CardKey:
    """Whose card for which question."""

    platform: str
    workspace: str
    user: str
    question_id: str


@dataclass(frozen=True, slots=True)
class MemoryCard:
    """One person's FSRS state for one question; ``version`` 0 means not stored yet."""

    key: CardKey
    state: int
    stability: float | None
    difficulty: float | None
    due_at: datetime
    last_review: datetime | None
    reps: int = 0
    lapses: int = 0
    version: int = 0

    @property
    def seen(self) -> bool:
        """Return whether the person has answered the question at least once."""
        return self.last_review is not None


@dataclass(frozen=True, slots=True)
class Review:
    """One answer as the card's history keeps it."""

    at: datetime
    correct: bool
    rating: Grade
    source: Source = Source.ROUND
    elapsed_ms: int | None = None
    confidence: Confidence | None = None


@dataclass(frozen=True, slots=True)
class LastAnswer:
    """The answer a card's latest review came from, as a confidence given afterwards needs it."""

    at: datetime
    correct: bool
    elapsed_ms: int | None
    rated: bool  # a confidence has re-rated it already


@dataclass(frozen=True, slots=True)
class Rated:
    """A confidence given after an answer, and what it did to the card."""

    confidence: Confidence
    correct: bool
    rating: Grade
    due_at: datetime


@dataclass(frozen=True, slots=True)
class Study:
    """One answer's effect on its person's card: ``memory`` reviews it as ``review`` says."""

    key: CardKey
    review: Review
    memory: Memory

    def apply(self, prior: MemoryCard | None, *, version: int | None = None) -> MemoryCard:
        """Return the card after this answer (``prior`` None: the first answer), at ``version``
        (None: the prior's, 0 for a first answer)."""
        review = self.review
        if prior is None:
            return self.memory.first(self.key, review.rating, review.at, version=version or 0)
        return self.memory.review(prior, review.rating, review.at, version=version)


def new_card(key: CardKey, now: datetime) -> MemoryCard:
    """Return the card of a question the person has never answered."""
    return MemoryCard(
        key=key,
        state=State.Learning.value,
        stability=None,
        difficulty=None,
        due_at=now,
        last_review=None,
    )


class Memory:
    """The FSRS scheduler at one desired retention, over plain card values."""

    def __init__(self, retention: float = DEFAULT_RETENTION) -> None:
        if not MIN_RETENTION <= retention <= MAX_RETENTION:
            raise ValueError(
                f"desired retention {retention} is outside {MIN_RETENTION}-{MAX_RETENTION}"
            )
        self.retention = retention
        self._scheduler = Scheduler(
            desired_retention=retention,
            learning_steps=(),
            relearning_steps=(),
            enable_fuzzing=False,
        )
        self._firsts: dict[Grade, tuple[int, float, float, timedelta]] = {}

    def review(
        self, card: MemoryCard, rating: Grade, at: datetime, *, version: int | None = None
    ) -> MemoryCard:
        """Return the card after one answer rated ``rating`` at ``at``, at ``version`` (None:
        the card's)."""
        version = card.version if version is None else version
        new = card.last_review is None and card.stability is None and card.difficulty is None
        if new and card.state == _LEARNING:
            return self.first(
                card.key, rating, at, reps=card.reps, lapses=card.lapses, version=version
            )
        after, _ = self._scheduler.review_card(_to_fsrs(card), _RATINGS[rating], at)
        return MemoryCard(
            key=card.key,
            state=after.state.value,
            stability=after.stability,
            difficulty=after.difficulty,
            due_at=after.due,
            last_review=after.last_review,
            reps=card.reps + 1,
            lapses=card.lapses + (1 if rating is Grade.AGAIN and card.seen else 0),
            version=version,
        )

    def first(
        self,
        key: CardKey,
        rating: Grade,
        at: datetime,
        *,
        reps: int = 0,
        lapses: int = 0,
        version: int = 0,
    ) -> MemoryCard:
        """Return a new card after its first answer, rated ``rating`` at ``at``.

        The scheduler's answer for the rating (``_first``), its due date moved to ``at``.
        """
        state, stability, difficulty, interval = self._first(rating)
        return MemoryCard(
            key=key,
            state=state,
            stability=stability,
            difficulty=difficulty,
            due_at=at + interval,
            last_review=at,
            reps=reps + 1,
            lapses=lapses,
            version=version,
        )

    def _first(self, rating: Grade) -> tuple[int, float, float, timedelta]:
        """Return what the scheduler makes of a new card's first review rated ``rating``.

        A new card carries no stability, difficulty or last review, so the first review's
        state, stability, difficulty and interval depend on the rating alone (no learning steps,
        no fuzz): the scheduler reviews a new card once per rating, and later first reviews
        take its answer, its due date moved to their own time. Most answers are a person's
        first to a question; this spares each the scheduler's copy and arithmetic.
        """
        first = self._firsts.get(rating)
        if first is None:
            after, _ = self._scheduler.review_card(
                _to_fsrs(new_card(_NO_KEY, _EPOCH)), _RATINGS[rating], _EPOCH
            )
            assert after.stability is not None and after.difficulty is not None
            first = (after.state.value, after.stability, after.difficulty, after.due - _EPOCH)
            self._firsts[rating] = first
        return first

    def replay(self, key: CardKey, history: Iterable[Review], *, version: int = 0) -> MemoryCard:
        """Return the card that these answers, in time order, leave."""
        ordered = sorted(history, key=lambda r: r.at)
        card = new_card(key, ordered[0].at if ordered else _EPOCH)
        for step in ordered:
            card = self.review(card, step.rating, step.at)
        return replace(card, version=version)

    def retrievability(self, card: MemoryCard, at: datetime) -> float:
        """Return the probability that the person recalls the answer at ``at`` (0 if unseen)."""
        if not card.seen:
            return 0.0
        return float(self._scheduler.get_card_retrievability(_to_fsrs(card), at))

    @property
    def decay(self) -> float:
        """Return the forgetting curve's exponent (FSRS-6: minus the last parameter)."""
        return -float(self._scheduler.parameters[20])

    @property
    def factor(self) -> float:
        """Return the forgetting curve's factor, which puts recall at 90% after one stability."""
        return float(0.9 ** (1 / self.decay) - 1)

    def initial_difficulty(self, rating: Grade) -> float:
        """Return FSRS's difficulty of a card whose first answer got ``rating``."""
        card, _ = self._scheduler.review_card(
            Card(card_id=1, due=_EPOCH), Rating(int(rating)), _EPOCH
        )
        assert card.difficulty is not None
        return float(card.difficulty)


# ---------------------------------------------------------------- level

#: The success rate new practice questions aim for.
PRACTICE_TARGET = 0.7
#: The person's latest answers their level is estimated from.
LEVEL_ANSWERS = 200
_PRIOR_SD = 1.0
_NEWTON_STEPS = 25


def logistic(x: float) -> float:
    """Return 1 / (1 + e^-x)."""
    return 1.0 / (1.0 + math.exp(-x))


def question_difficulty(expected_rate: float) -> float:
    """Return a question's Rasch difficulty from the share of answers expected right."""
    p = min(max(expected_rate, 0.02), 0.98)
    return -math.log(p / (1 - p))


def level(results: Iterable[tuple[bool, float]]) -> float:
    """Return a person's Rasch ability from their answers: (right, question difficulty) pairs.

    The estimate maximises the likelihood of the answers, P(right) = logistic(level -
    difficulty), times a standard normal prior, so that a person with few answers (or only right
    ones) sits near 0, the level of a question half the players get right.
    """
    results = list(results)
    theta = 0.0
    for _ in range(_NEWTON_STEPS):
        gradient = -theta / _PRIOR_SD**2
        curvature = -1 / _PRIOR_SD**2
        for right, difficulty in results:
            p = logistic(theta - difficulty)
            gradient += (1.0 if right else 0.0) - p
            curvature -= p * (1 - p)
        step = gradient / curvature
        theta -= step
        if abs(step) < 1e-9:
            break
    return theta


def success_chance(person_level: float, difficulty: float) -> float:
    """Return the chance that a person at this level answers a question of this difficulty."""
    return logistic(person_level - difficulty)


class PracticeKind(StrEnum):
    """Why a question is asked in practice."""

    DUE = "due"  # a card that has come due
    NEW = "new"  # never answered, picked near the person's level


@dataclass(frozen=True, slots=True)
class PracticeItem:
    """The next question of a practice session, and why it was picked."""

    question: Question
    kind: PracticeKind
    chance: float | None  # the expected chance of a right answer, for a new question


# ---------------------------------------------------------------- mastery


@dataclass(frozen=True, slots=True)
class TopicMastery:
    """How well one person (or a team) knows one topic of the bank."""

    topic: str
    questions: int
    seen: int
    mastery: float


@dataclass(frozen=True, slots=True)
class PersonMastery:
    """One person's mastery of every topic, in the bank's topic order."""

    user: str
    topics: tuple[TopicMastery, ...]


def topic_of(source: str) -> str:
    """Return the topic of a question: the folder its file sits in (``other`` at the top)."""
    return PurePath(source).parent.name or "other"


def mastery(
    cards: Iterable[MemoryCard], topics: Mapping[str, str], memory: Memory, at: datetime
) -> dict[str, float]:
    """Return one person's mastery per topic at ``at``.

    A topic's mastery is the mean of the person's recall probability (FSRS retrievability) over
    the topic's questions, ``topics`` mapping every question id to its topic; a question never
    answered counts 0, and a card for a question no longer in the bank is left out.
    """
    sums = dict.fromkeys(topics.values(), 0.0)
    for card in cards:
        topic = topics.get(card.key.question_id)
        if topic is not None:
            sums[topic] += memory.retrievability(card, at)
    sizes = Counter(topics.values())
    return {topic: sums[topic] / sizes[topic] for topic in sums}


@dataclass(frozen=True, slots=True)
class TeamTopic:
    """How well a team knows one topic: the mean over its ``people`` of each one's mastery."""

    topic: str
    questions: int
    people: int
    learners: int
    mastery: float


def team_mastery(people: Iterable[PersonMastery]) -> tuple[TeamTopic, ...]:
    """Return a team's mastery per topic over the people given (``learners``: those of them
    who answered at least one of the topic's questions)."""
    people = list(people)
    if not people:
        return ()
    return tuple(
        TeamTopic(
            topic=t.topic,
            questions=t.questions,
            people=len(people),
            learners=sum(1 for p in people if p.topics[i].seen),
            mastery=sum(p.topics[i].mastery for p in people) / len(people),
        )
        for i, t in enumerate(people[0].topics)
    )


def is_due(card: MemoryCard, now: datetime) -> bool:
    """Return whether an answered card should be asked again now."""
    return card.seen and card.due_at <= now


# ---------------------------------------------------------------- the old ladder, migrated

LADDER_DAYS = (1, 3, 7, 21)


def from_ladder(
    key: CardKey,
    *,
    step: int,
    right_in_row: int,
    due_at: datetime,
    done: bool,
    memory: Memory,
) -> MemoryCard:
    """Return the FSRS card that stands for a review item of the old fixed ladder.

    The ladder asked a missed question after 1, 3, 7 and 21 days. An unfinished item becomes a
    review card whose stability is its current ladder interval, last reviewed one interval before
    its due date, with the difficulty FSRS gives a first miss. A finished item (right twice in a
    row at its interval) becomes a card with twice that stability, last reviewed at its final due
    date and due one stability later, with the difficulty of a first right answer.
    """
    days = LADDER_DAYS[min(max(step, 0), len(LADDER_DAYS) - 1)]
    if done:
        stability = 2.0 * days
        last = due_at
        return MemoryCard(
            key=key,
            state=State.Review.value,
            stability=stability,
            difficulty=memory.initial_difficulty(Grade.GOOD),
            due_at=last + timedelta(days=stability),
            last_review=last,
            reps=step + 1 + right_in_row,
            lapses=step + 1,
        )
    return MemoryCard(
        key=key,
        state=State.Review.value,
        stability=float(days),
        difficulty=memory.initial_difficulty(Grade.AGAIN),
        due_at=due_at,
        last_review=due_at - timedelta(days=days),
        reps=step + 1 + right_in_row,
        lapses=step + 1,
    )


_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_LEARNING = State.Learning.value
_NO_KEY = CardKey("", "", "", "")
_RATINGS = {grade: Rating(int(grade)) for grade in Grade}


def _to_fsrs(card: MemoryCard) -> Card:
    return Card(
        card_id=1,
        state=State(card.state),
        step=None if card.state != State.Learning.value else 0,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due_at,
        last_review=card.last_review,
    )
