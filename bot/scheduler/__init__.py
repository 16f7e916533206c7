"""Posting on time: round timers, daily schedules, and the port adapters implement to post."""

from bot.scheduler.port import Publisher
from bot.scheduler.timers import close_due_rounds, run_timers

__all__ = ["Publisher", "close_due_rounds", "run_timers"]
