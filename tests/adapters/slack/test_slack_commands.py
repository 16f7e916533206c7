"""The emoji that count as answers on Slack."""

from __future__ import annotations

import pytest

from bot.adapters.slack.handlers import emoji_choice


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
