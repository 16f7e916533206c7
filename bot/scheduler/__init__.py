"""Posting on time: round timers, daily schedules, and the port adapters implement to post."""

from bot.scheduler._parse import parse_duration, parse_weekday, parse_zone
from bot.scheduler.daily import (
    ScheduleRequest,
    ScheduleService,
    ScheduleView,
    describe_schedule,
    next_post_time,
    run_scheduler,
    schedule_request,
    schedule_store_of,
)
from bot.scheduler.port import Publisher
from bot.scheduler.timers import close_due_rounds, run_timers

__all__ = [
    "Publisher",
    "ScheduleRequest",
    "ScheduleService",
    "ScheduleView",
    "close_due_rounds",
    "describe_schedule",
    "next_post_time",
    "parse_duration",
    "parse_weekday",
    "parse_zone",
    "run_scheduler",
    "run_timers",
    "schedule_request",
    "schedule_store_of",
]
