"""The one button-id codec: every button the bot makes reads back as itself, within the limit."""

from __future__ import annotations

import pytest

from bot import messages as M
from bot.chat.buttons import (
    DASHBOARD,
    ID_MAX,
    START_REVIEW,
    AddPage,
    Button,
    Choice,
    Decide,
    Report,
    ReviewChoice,
    button_id,
    fits,
    of_round,
    read_button,
    refusal_of,
)


@pytest.mark.parametrize(
    ("button", "value"),
    [
        (Choice(1, "A"), "quiz:1:A"),
        (Choice(10**19, "E"), f"quiz:{10**19}:E"),
        (ReviewChoice("gpu-nvlink-4", "C"), "review:gpu-nvlink-4:C"),
        # A computed question's instance id.
        (ReviewChoice("dp-gradient-allreduce#123", "B"), "review:dp-gradient-allreduce#123:B"),
        (ReviewChoice("moe-alltoall#0", "A"), "review:moe-alltoall#0:A"),
        (START_REVIEW, "quiz:start-review"),
        (DASHBOARD, "quiz:dashboard"),
        (Decide(1, "approve"), "proposal:1:approve"),
        (Decide(2147483647, "edit"), "proposal:2147483647:edit"),
        (Decide(12, "reject"), "proposal:12:reject"),
        (AddPage(1), "add:1"),
        (AddPage(3), "add:3"),
        (Report("gpu-nvlink-4"), "report:gpu-nvlink-4"),
        (Report("dp-gradient-allreduce#123"), "report:dp-gradient-allreduce#123"),
    ],
)
def test_every_button_reads_back_as_itself(button: Button, value: str) -> None:
    assert button_id(button) == value
    assert read_button(value) == button
    assert len(value) <= ID_MAX


@pytest.mark.parametrize(
    "value",
    [
        "quiz:1:F",
        "quiz::A",
        "quiz:1:A:x",
        "other:1:A",
        "quiz:1:a",
        "review:Bad:A",
        "quiz:close",
        "review:t#:A",
        "review:t#01:A",
        "review:t#1234567890:A",
        "review:t#1#2:A",
        "review:#1:A",
        "add:0",
        "add:10",
        "report:",
        "report:Bad",
        "proposal:0:approve",
        "proposal:01:approve",
        "proposal:1:delete",
        "proposal:12345678901:reject",
        "proposal::edit",
    ],
)
def test_ids_the_bot_did_not_make_are_not_read(value: str) -> None:
    assert read_button(value) is None


def test_an_id_past_the_limit_is_refused_both_ways() -> None:
    long_id = ReviewChoice("q" * ID_MAX, "A")
    with pytest.raises(ValueError, match="bad button id"):
        button_id(long_id)
    assert read_button(f"review:{'q' * ID_MAX}:A") is None


def test_the_verb_buttons_run_their_quiz_verbs() -> None:
    assert (START_REVIEW.verb, DASHBOARD.verb) == ("review", "dashboard")


def test_a_question_id_too_long_for_a_button_gets_no_report_button() -> None:
    longest = "q" * (ID_MAX - len("report:"))
    assert fits(Report(longest)) and not fits(Report(longest + "q"))


def test_a_cards_buttons_are_known_by_their_round() -> None:
    assert of_round(button_id(Choice(12, "C")), 12)
    assert not of_round(button_id(Choice(123, "C")), 12)  # not a prefix match
    assert not of_round(button_id(ReviewChoice("q12", "A")), 12)
    assert not of_round("quiz:12:Z", 12)


def test_an_unreadable_review_button_is_refused_as_one() -> None:
    assert refusal_of("review:Bad Id:A") == M.NOT_A_REVIEW_BUTTON
    assert refusal_of("quiz:x:A") == refusal_of("somebody-elses") == M.NOT_A_BUTTON
