"""The emoji that count as answers on Slack, and how a command's text names a person."""

from __future__ import annotations

import pytest

from bot.adapters.slack.handlers import emoji_choice, typed


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


@pytest.mark.parametrize(
    ("text", "neutral"),
    [
        ("stats <@U123ABC|ada>", "stats <@U123ABC>"),
        ("stats <@W0ENTERPRISE>", "stats <@W0ENTERPRISE>"),
        ("stats <!channel>", "stats <!channel>"),
        ("next storage", "next storage"),
    ],
)
def test_a_mention_reaches_the_grammar_in_the_neutral_form(text: str, neutral: str) -> None:
    assert typed(text) == neutral
