"""Frozen values the engine takes and returns: questions, places, rounds and results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

CHOICE_KEYS = ("A", "B", "C", "D", "E")


class Difficulty(StrEnum):
    """How hard a question is; decides the points a right answer earns."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"

    @property
    def points(self) -> int:
        """Return the points a correct answer is worth."""
        return {"easy": 1, "medium": 2, "hard": 3}[self.value]


class DifficultyMode(StrEnum):
    """How a channel picks its next question."""

    MIXED = "mixed"  # any difficulty, in random order
    EASY = "easy"  # only questions labelled easy
    HARD = "hard"  # only questions labelled hard
    ADAPTIVE = "adaptive"  # the unasked question whose success rate is nearest the target
    LEVEL = "level"  # the unasked question whose chance at the recent players' level is nearest


@dataclass(frozen=True, slots=True)
class Choice:
    """One lettered choice of a question."""

    key: str
    text: str


@dataclass(frozen=True, slots=True)
class Reference:
    """A source to read more."""

    title: str
    url: str


@dataclass(frozen=True, slots=True)
class PlanSpec:
    """A training step (``/bandwidth plan``) a question's reveal shows per interconnect."""

    model: str
    gpus: int
    tp: int | None = None
    pp: int = 1
    cp: int = 1
    zero: int = 1
    seq: int | None = None
    batch: int | None = None
    gpu: str | None = None


@dataclass(frozen=True, slots=True)
class ChartSpec:
    """A ``/bandwidth`` chart attached to a question's reveal: an estimate, or a plan."""

    size: str = ""
    op: str = "allreduce"
    nodes: int = 2
    gpus: int = 1
    over: tuple[str, ...] = ()
    plan: PlanSpec | None = None


class FlagReason(StrEnum):
    """Why a player reports a question."""

    WRONG = "wrong"  # the keyed answer is wrong
    UNCLEAR = "unclear"
    OUTDATED = "outdated"
    TYPO = "typo"


@dataclass(frozen=True, slots=True)
class Flag:
    """One player's open report of a problem with a question."""

    question_id: str
    revision: int | None
    user: str
    reason: FlagReason
    note: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Flagged:
    """What a report did: the question, its open reports now, and whether it is paused."""

    question_id: str
    open: int
    paused: bool


@dataclass(frozen=True, slots=True)
class ResolvedReport:
    """A player's report that a new revision resolved, to tell them of in ``place``."""

    place: Place
    user: str
    question_id: str
    revision: int


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of the bank."""

    id: str
    text: str
    choices: tuple[Choice, ...]
    answer: str
    short: str
    full: str
    why_not: Mapping[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    difficulty: Difficulty = Difficulty.MEDIUM
    references: tuple[Reference, ...] = ()
    image: str | None = None
    chart: ChartSpec | None = None
    source: str = ""
    line: int = 0
    # The revision of a workspace's own question (1, 2, ...); None for a question of the files.
    revision: int | None = None
    # Where each key sits in the source file: "answer", "choices.B", "explanation.why_not.C",
    # "references.0"... so that a check can point at the line it is about.
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def line_of(self, *names: str) -> int:
        """Return the line of the first of these keys the file has, else the question's line."""
        for name in names:
            found = self.lines.get(name)
            if found is not None:
                return found
        return self.line

    @property
    def asked_as(self) -> str:
        """Return the key answers are counted under: the id, and ``@N`` for revision N."""
        return self.id if self.revision is None else f"{self.id}@{self.revision}"

    @property
    def keys(self) -> tuple[str, ...]:
        """Return the choice letters in order."""
        return tuple(c.key for c in self.choices)

    def choice(self, key: str) -> Choice:
        """Return the choice with this letter (KeyError if there is none)."""
        for c in self.choices:
            if c.key == key:
                return c
        raise KeyError(key)

    @property
    def answer_choice(self) -> Choice:
        """Return the right choice."""
        return self.choice(self.answer)


@dataclass(frozen=True, slots=True)
class Place:
    """A channel: where a round is posted. Data never crosses (platform, workspace)."""

    platform: str
    workspace: str
    channel: str


@dataclass(frozen=True, slots=True)
class Round:
    """A question posted in a channel, open until ``closed_at`` is set."""

    id: int
    place: Place
    question_id: str
    opened_at: datetime
    closes_at: datetime | None
    closed_at: datetime | None = None
    message_ref: str | None = None
    scheduled: bool = False
    slot: str | None = None
    # The revision of a workspace's own question asked; None for a question of the files.
    revision: int | None = None

    @property
    def is_closed(self) -> bool:
        """Return whether the round has been closed."""
        return self.closed_at is not None


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """One user's stored answer to one round."""

    round_id: int
    user: str
    choice: str
    correct: bool
    points: int
    answered_at: datetime
    elapsed_ms: int


class AnswerStatus(StrEnum):
    """What happened to an answer."""

    ACCEPTED = "accepted"
    CHANGED = "changed"
    ALREADY = "already"
    CLOSED = "closed"


class ReviewScope(StrEnum):
    """Whose questions, written in chat, wait for an admin's approval before they are live."""

    OTHERS = "others"  # everyone's but the admins' (the default)
    EVERYONE = "everyone"  # admins' too


@dataclass(frozen=True, slots=True)
class ChannelSettings:
    """Per-channel options."""

    allow_change: bool = False
    round_minutes: int | None = None  # None: the bot's default (QUIZBOT_ROUND_MINUTES)
    difficulty: DifficultyMode = DifficultyMode.MIXED
    computed_percent: int = 0  # the share of rounds that ask a computed question (0-100)


@dataclass(frozen=True, slots=True)
class WorkspaceSettings:
    """Options that hold for a whole workspace (Slack) or server (Discord)."""

    retention: float | None = None  # None: the bot's default (docs/learning.md)
    review: ReviewScope = (
        ReviewScope.OTHERS
    )  # whose questions wait for an admin (docs/questions.md)


class ProposalStatus(StrEnum):
    """Where a proposal stands: pending until an admin decides, once."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class Proposal:
    """A question proposed for a workspace's bank, as the store keeps it."""

    id: int
    platform: str
    workspace: str
    question_id: str
    body: str  # the question's YAML text, as proposed
    author: str
    channel: str | None  # where it was proposed (to tell its author); None: elsewhere
    created_at: datetime
    status: ProposalStatus
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None  # a rejection's, when one was given
    revision: int | None = None  # the revision its approval stored
    edited: bool = False  # approved with an admin's edit of the text


@dataclass(frozen=True, slots=True)
class Published:
    """A question that went live: its id and the revision stored."""

    question_id: str
    revision: int


@dataclass(frozen=True, slots=True)
class Proposed:
    """A question that waits for an admin: its proposal's id and the question's id."""

    proposal_id: int
    question_id: str


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """Aggregated answers of one user over a period."""

    user: str
    points: int
    answered: int
    correct: int
    total_ms: int


# ---------------------------------------------------------------- results for adapters


@dataclass(frozen=True, slots=True)
class QuestionCard:
    """What to post: the question of a new round, with its buttons."""

    round: Round
    question: Question
    answered: int = 0
    note: str | None = None

    @property
    def round_id(self) -> int:
        """Return the round's id."""
        return self.round.id


@dataclass(frozen=True, slots=True)
class AnswerOutcome:
    """What to tell the user who answered, privately."""

    status: AnswerStatus
    round_id: int
    user: str
    choice: Choice
    correct: bool
    answer: Choice
    short: str
    points: int = 0
    streak: int = 0
    previous: Choice | None = None
    why_not: str | None = None  # why the chosen (wrong) choice is wrong, from the question
    question_id: str = ""


@dataclass(frozen=True, slots=True)
class ChoiceTally:
    """How many people picked one choice."""

    choice: Choice
    count: int
    fraction: float
    correct: bool


@dataclass(frozen=True, slots=True)
class Answerer:
    """A user and how long they took to answer."""

    user: str
    seconds: float


@dataclass(frozen=True, slots=True)
class Reveal:
    """What to show when a round closes: the answer, the results and the explanation."""

    round: Round
    question: Question
    answered: int
    correct: int
    tallies: tuple[ChoiceTally, ...]
    fastest: tuple[Answerer, ...]

    @property
    def percent_correct(self) -> float:
        """Return the share of right answers, 0 to 100 (0 when nobody answered)."""
        return 100.0 * self.correct / self.answered if self.answered else 0.0


class Period(StrEnum):
    """A leaderboard window."""

    WEEK = "week"
    MONTH = "month"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One ranked line of a leaderboard."""

    rank: int
    user: str
    points: int
    correct: int
    answered: int


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """The top of a workspace's scores, plus the caller's own line."""

    period: Period
    since: datetime | None
    entries: tuple[LeaderboardEntry, ...]
    caller: LeaderboardEntry | None


@dataclass(frozen=True, slots=True)
class PlayerSummary:
    """A player's page in chat (Slack's Home tab, Discord's /quiz me): totals, streak, reviews."""

    user: str
    points: int
    answered: int
    correct: int
    current_streak: int  # the longest current streak of any channel
    best_streak: int
    reviews_due: int
    reviews_waiting: int
    next_review_due: datetime | None
    week: Leaderboard


@dataclass(frozen=True, slots=True)
class UserStats:
    """One user's totals in a workspace, and streaks in a channel."""

    user: str
    answered: int
    correct: int
    points: int
    current_streak: int
    best_streak: int

    @property
    def accuracy(self) -> float:
        """Return the share of right answers, 0 to 100."""
        return 100.0 * self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class QuestionStats:
    """How a question has fared in a workspace."""

    question_id: str
    rounds: int
    answered: int
    correct: int
