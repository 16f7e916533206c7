"""What the chat layer says and does: neutral content, and the actions a platform carries out.

Content is what a message shows (a sentence, a question card, the results); an action is what
to do with it where no interaction is being answered (post a card, edit it, reply in its thread,
tell someone privately). The renderers of each platform turn content into Block Kit, embeds or
terminal text.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot import messages as M
from bot.chat.buttons import (
    DASHBOARD,
    PRACTICE,
    START_REVIEW,
    Button,
    PracticeChoice,
    ReviewChoice,
    TrackChoice,
)
from bot.engine.model import Place, Question, QuestionCard, Reveal
from bot.text import Text


@dataclass(frozen=True, slots=True)
class Offer:
    """A button offered under a private reply: what it does, its label, whether it leads."""

    button: Button
    label: str
    primary: bool = False


@dataclass(frozen=True, slots=True)
class Chart:
    """A drawn chart, ready to upload."""

    png: bytes
    filename: str
    title: str


@dataclass(frozen=True, slots=True)
class Feedback:
    """The private reply to an answer (``replaces``: it takes the place of the message clicked)."""

    text: Text
    replaces: bool = False
    offers: tuple[Offer, ...] = ()  # buttons under it (practice: Next, Stop)


@dataclass(frozen=True, slots=True)
class Panel:
    """A titled list, such as a leaderboard."""

    title: Text
    body: Text
    note: Text | None = None
    start_review: bool = False  # offer a button that starts a review (where buttons can)
    dashboard: bool = False  # offer an admin the button that sends a dashboard link
    practice: bool = False  # offer the button that starts a practice session

    @property
    def offers(self) -> tuple[Offer, ...]:
        """Return the buttons the panel offers, in their order: Practice (leading), "Start a
        review", the dashboard link; each platform draws them as it draws a reply's offers."""
        wanted = (
            (self.practice, Offer(PRACTICE, M.PRACTICE_BUTTON, primary=True)),
            (self.start_review, Offer(START_REVIEW, M.START_REVIEW)),
            (self.dashboard, Offer(DASHBOARD, M.DASHBOARD_LINK_TITLE)),
        )
        return tuple(offer for shown, offer in wanted if shown)


@dataclass(frozen=True, slots=True)
class ReviewAsk:
    """A question asked privately with its own buttons: due for review, in practice, or
    (``track``) the asker's next question of a learning track."""

    question: Question
    title: Text
    footer: Text
    track: bool = False
    practice: bool = False  # its buttons answer the practice session

    def button(self, key: str) -> ReviewChoice | TrackChoice | PracticeChoice:
        """Return the button of one choice."""
        if self.practice:
            return PracticeChoice(self.question.id, key)
        if self.track:
            return TrackChoice(self.question.id, key)
        return ReviewChoice(self.question.id, key)


@dataclass(frozen=True, slots=True)
class EstimateView:
    """A /bandwidth answer: the table, its one-line summary and the chart."""

    table: str
    headline: str
    chart: Chart


@dataclass(frozen=True, slots=True)
class Explanation:
    """The thread reply of a reveal: the full explanation, and the chart if the question has one."""

    reveal: Reveal
    chart: Chart | None = None


Content = Text | Feedback | Panel | ReviewAsk | EstimateView | QuestionCard | Reveal


@dataclass(frozen=True, slots=True)
class PostCard:
    """Post a card (a question, or the results when the question's card is gone)."""

    place: Place
    card: QuestionCard | Reveal


@dataclass(frozen=True, slots=True)
class FindCard:
    """Look for a round's question card posted in the channel since ``since``.

    An earlier try may have reached the channel and died before it heard the answer: the port
    returns that card's reference, or None when it finds none (or its platform cannot look).
    """

    place: Place
    round_id: int
    since: datetime


@dataclass(frozen=True, slots=True)
class UpdateCard:
    """Edit a posted card: its answer count, or its results once closed."""

    place: Place
    ref: str
    card: QuestionCard | Reveal


@dataclass(frozen=True, slots=True)
class ReplyInThread:
    """Answer a card in its thread."""

    place: Place
    ref: str
    explanation: Explanation


@dataclass(frozen=True, slots=True)
class PostText:
    """Post a message in a channel."""

    place: Place
    text: Text


@dataclass(frozen=True, slots=True)
class MessageUser:
    """Tell one person something privately, unprompted (``about``: the message it concerns;
    ``offers``: buttons under it, where the platform's private messages can carry them)."""

    place: Place
    user: str
    text: Text
    about: str | None = None
    offers: tuple[Offer, ...] = ()


Action = PostCard | FindCard | UpdateCard | ReplyInThread | PostText | MessageUser
