"""The platform-free quiz engine: questions, rounds, answers, grading, scores."""

from bot.engine.engine import QuizEngine, pick_question, streaks
from bot.engine.loader import BankError, Problem, QuestionBank, check_paths, load_bank
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
    "AnswerOutcome",
    "AnswerStatus",
    "BankError",
    "ChannelSettings",
    "Clock",
    "Leaderboard",
    "Period",
    "Place",
    "Problem",
    "Question",
    "QuestionBank",
    "QuestionCard",
    "QuizEngine",
    "Reveal",
    "Round",
    "RoundAlreadyOpen",
    "Store",
    "UserStats",
    "check_paths",
    "load_bank",
    "pick_question",
    "streaks",
    "utc_now",
]
