"""Parsing ``/quiz`` text and emoji answers: every form of the command table, and bad input."""

from __future__ import annotations

from datetime import time

import pytest

from bot.adapters.slack._commands import (
    USAGE,
    ChannelOptions,
    CloseRound,
    NextQuestion,
    Review,
    Schedule,
    ShowHelp,
    ShowLeaderboard,
    ShowStats,
    emoji_choice,
    parse_quiz,
)
from bot.engine.model import Period
from bot.errors import UserError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", NextQuestion()),
        ("   ", NextQuestion()),
        ("next", NextQuestion()),
        ("next networking", NextQuestion("networking")),
        ("NEXT Networking", NextQuestion("networking")),
        ("close", CloseRound()),
        ("leaderboard", ShowLeaderboard(Period.WEEK)),
        ("leaderboard week", ShowLeaderboard(Period.WEEK)),
        ("leaderboard month", ShowLeaderboard(Period.MONTH)),
        ("leaderboard ALL", ShowLeaderboard(Period.ALL)),
        ("stats", ShowStats()),
        ("stats <@U123ABC|ada>", ShowStats("U123ABC")),
        ("stats <@W0ENTERPRISE>", ShowStats("W0ENTERPRISE")),
        ("help", ShowHelp()),
        ("settings", ChannelOptions()),
        ("settings changes on", ChannelOptions(allow_change=True)),
        ("settings changes off minutes 15", ChannelOptions(allow_change=False, round_minutes=15)),
        ("settings minutes 1", ChannelOptions(round_minutes=1)),
        ("schedule", Schedule()),
        ("schedule off", Schedule(off=True)),
        ("schedule 9:05", Schedule(at=time(9, 5))),
        (
            "schedule 09:30 Europe/Paris weekdays networking",
            Schedule(at=time(9, 30), zone="Europe/Paris", weekdays_only=True, tag="networking"),
        ),
        ("schedule 23:59 utc daily", Schedule(at=time(23, 59))),
        ("review", Review()),
    ],
)
def test_quiz_text_parses(text: str, expected: object) -> None:
    assert parse_quiz(text) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("frobnicate", "I don't know `/quiz frobnicate`"),
        ("next two tags", "A tag is one word"),
        ("next no_underscores", "A tag is one word"),
        ("close now", "I don't know"),
        ("leaderboard year", "`week`, `month` or `all`"),
        ("stats ada", "Mention the person with @"),
        ("stats <#C123|general>", "Mention the person with @"),
        ("settings changes maybe", "Settings are `changes on|off`"),
        ("settings minutes 0", "Settings are"),
        ("settings minutes 10081", "Settings are"),
        ("settings minutes", "Settings are"),
        ("schedule 25:00", "Give the time as HH:MM"),
        ("schedule 9am", "Give the time as HH:MM"),
        ("schedule 09:00 Mars/Olympus", "is not a time zone"),
        ("schedule 09:00 daily a b", "I can't read `b`"),
        ("review please", "I don't know"),
        ("next `rm -rf`", "A tag is one word"),
    ],
)
def test_bad_quiz_text_gets_a_short_message_and_the_usage(text: str, says: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_quiz(text)
    assert says in caught.value.message
    assert caught.value.usage == USAGE
    assert str(caught.value).endswith(USAGE)


def test_usage_lists_every_command_of_the_table() -> None:
    for command in (
        "next [tag]",
        "close",
        "leaderboard",
        "stats",
        "settings",
        "schedule",
        "review",
    ):
        assert f"/quiz {command}" in USAGE
    assert "/bandwidth SIZE" in USAGE


@pytest.mark.parametrize(
    ("reaction", "choice"),
    [
        ("one", "A"),
        ("two", "B"),
        ("three", "C"),
        ("four", "D"),
        ("five", "E"),
        ("a", "A"),
        ("b", "B"),
        ("c", "C"),
        ("letter-e", "E"),
        ("one::skin-tone-3", "A"),
        ("six", None),
        ("thumbsup", None),
        ("ab", None),
        ("", None),
    ],
)
def test_emoji_stand_for_choices(reaction: str, choice: str | None) -> None:
    assert emoji_choice(reaction) == choice
