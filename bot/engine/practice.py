"""A private practice session: its state, and which question it asks next.

A person has at most one session per workspace (starting one ends the last). It asks due cards
first, then new questions near the person's level (``QuizEngine.next_practice``), one at a time,
until ``target`` are answered; a due card answered wrong is owed and comes back in the same
session until it is answered right once (docs/learning.md). The session is stored, so a button
pressed after a restart, or on another replica, finds it; ``version`` guards each step.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from bot.engine.learning import PracticeItem, PracticeKind
from bot.engine.model import Question
from bot.engine.review import ReviewOutcome

#: How many questions a session asks when no count is given, and the most it may ask.
DEFAULT_COUNT = 5
MAX_COUNT = 50
_NUMBERED = re.compile(r"^[0-9]+-")


@dataclass(frozen=True, slots=True)
class PracticeSession:
    """One person's practice session as stored; ``version`` 0 means not stored yet."""

    platform: str
    workspace: str
    user: str
    target: int
    started_at: datetime
    topic: str | None = None
    tag: str | None = None
    answered: int = 0
    right: int = 0
    asked: tuple[str, ...] = ()  # every question asked so far, in order
    owed: tuple[str, ...] = ()  # due cards answered wrong and not yet right
    current: str | None = None  # the question waiting for an answer
    current_kind: PracticeKind | None = None
    asked_at: datetime | None = None  # when ``current`` was shown (the answer's time)
    version: int = 0

    @property
    def done(self) -> bool:
        """Return whether the session has asked all it should: ``target`` answered, none owed."""
        return self.answered >= self.target and not self.owed

    @property
    def left(self) -> int:
        """Return how many answers are still to give, owed re-asks included."""
        return max(self.target - self.answered, 0) + len(self.owed)


@dataclass(frozen=True, slots=True)
class PracticeTurn:
    """What a session shows next: a question (``item``), or nothing more (``item`` None)."""

    session: PracticeSession
    item: PracticeItem | None
    number: int  # the question's number in the session (1 for the first)


@dataclass(frozen=True, slots=True)
class PracticeResult:
    """A practice answer graded: the outcome, whether it was owed, and the session after it."""

    outcome: ReviewOutcome
    session: PracticeSession
    kind: PracticeKind  # due (or owed) card, or new question
    owed_again: bool  # a due card answered wrong: it comes back in this session
    question: Question


def after_answer(
    session: PracticeSession, question_id: str, correct: bool, kind: PracticeKind
) -> PracticeSession:
    """Return the session after its current question is answered."""
    owed = tuple(q for q in session.owed if q != question_id)
    if kind is PracticeKind.DUE and not correct:
        owed += (question_id,)
    return PracticeSession(
        platform=session.platform,
        workspace=session.workspace,
        user=session.user,
        target=session.target,
        started_at=session.started_at,
        topic=session.topic,
        tag=session.tag,
        answered=session.answered + 1,
        right=session.right + (1 if correct else 0),
        asked=session.asked,
        owed=owed,
        current=None,
        current_kind=None,
        asked_at=None,
        version=session.version,
    )


def asking(session: PracticeSession, item: PracticeItem, at: datetime) -> PracticeSession:
    """Return the session with ``item`` shown at ``at`` and waiting for its answer."""
    return PracticeSession(
        platform=session.platform,
        workspace=session.workspace,
        user=session.user,
        target=session.target,
        started_at=session.started_at,
        topic=session.topic,
        tag=session.tag,
        answered=session.answered,
        right=session.right,
        asked=(*session.asked, item.question.id),
        owed=session.owed,
        current=item.question.id,
        current_kind=item.kind,
        asked_at=at,
        version=session.version,
    )


def owed_next(session: PracticeSession) -> str | None:
    """Return the owed card to ask now, or None to ask a due or new question first.

    An owed card waits for one other question in between while there are answers still to
    give, so that it is not asked twice in a row; once the count is reached, it comes at once.
    """
    if not session.owed:
        return None
    last = session.asked[-1] if session.asked else None
    spaced = [q for q in session.owed if q != last]
    if spaced:
        return spaced[0]
    return session.owed[0] if session.answered >= session.target else None


def find_topic(asked: str, topics: Collection[str]) -> str | None:
    """Return the bank topic a person named: the folder's name, or it without its number
    (``collectives`` for ``03-collectives``), any case; None when none matches."""
    wanted = asked.strip().casefold()
    for topic in topics:
        if wanted in (topic.casefold(), _NUMBERED.sub("", topic).casefold()):
            return topic
    return None
