"""The platform-free quiz engine: questions, rounds, answers, grading, scores."""

from bot.engine.engine import COMPUTED, QuizEngine, pick_question, streaks
from bot.engine.model import (
    AnswerOutcome,
    AnswerStatus,
    ChannelSettings,
    Leaderboard,
    Period,
    Place,
    Question,
    QuestionCard,
    Reveal,
    Round,
    UserStats,
)
from bot.engine.ports import Clock, RoundAlreadyOpen, Store, utc_now

__all__ = [
    "COMPUTED",
    "AnswerOutcome",
    "AnswerStatus",
    "ChannelSettings",
    "Clock",
    "Leaderboard",
    "Period",
    "Place",
    "Question",
    "QuestionCard",
    "QuizEngine",
    "Reveal",
    "Round",
    "RoundAlreadyOpen",
    "Store",
    "UserStats",
    "pick_question",
    "streaks",
    "utc_now",
]
