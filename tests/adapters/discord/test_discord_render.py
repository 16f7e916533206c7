"""Discord rendering: ids and labels within Discord's limits, feedback, reveal, explanation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import discord
import pytest

from bot.adapters.discord import render
from bot.chat import Explanation, words
from bot.chat.forms import ADD_FIELDS, add_form, add_pages, report_form
from bot.engine.model import (
    Answerer,
    AnswerOutcome,
    AnswerStatus,
    Choice,
    ChoiceTally,
    Place,
    Question,
    QuestionCard,
    Reference,
    Reveal,
    Round,
)
from tests.standins.discord_api import check_modal

OPENED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def question(**changes: object) -> Question:
    values: dict[str, object] = {
        "id": "q",
        "text": "Which network?",
        "choices": (Choice("A", "InfiniBand"), Choice("B", "1 Gbps Ethernet")),
        "answer": "A",
        "short": "RDMA at 400 Gb/s.",
        "full": "InfiniBand is fast.",
        "why_not": {"B": "Too slow."},
        "tags": ("networking",),
    }
    values.update(changes)
    return Question(**values)  # type: ignore[arg-type]


def a_round(round_id: int = 7) -> Round:
    place = Place("discord", "1", "2")
    return Round(round_id, place, "q", OPENED, OPENED + timedelta(minutes=10))


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("InfiniBand", "A. InfiniBand"),
        ("x" * 75, "A. " + "x" * 75),
        ("y" * 100, "A. " + "y" * 76 + "…"),
    ],
)
def test_labels_fit_discords_80_characters(text: str, label: str) -> None:
    assert render.label("A", text) == label
    assert len(label) <= render.LABEL_MAX


def test_card_view_has_one_enabled_button_per_choice() -> None:
    card = QuestionCard(a_round(), question())
    buttons = [b for b in render.card_view(card).children if isinstance(b, discord.ui.Button)]
    assert [(b.custom_id, b.disabled) for b in buttons] == [
        ("quiz:7:A", False),
        ("quiz:7:B", False),
    ]


def outcome(status: AnswerStatus, correct: bool, **extra: object) -> AnswerOutcome:
    q = question()
    chosen = q.choice("A" if correct else "B")
    values: dict[str, object] = {
        "status": status,
        "round_id": 7,
        "user": "1",
        "choice": chosen,
        "correct": correct,
        "answer": q.answer_choice,
        "short": q.short,
        "points": 2 if correct else 0,
    }
    values.update(extra)
    return AnswerOutcome(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("result", "expected", "absent"),
    [
        (
            outcome(AnswerStatus.ACCEPTED, True),
            ["✅ **Right!** You chose **A. InfiniBand** (+2 points).", "RDMA at 400 Gb/s."],
            ["🔥"],
        ),
        (
            outcome(AnswerStatus.ACCEPTED, False),
            ["❌ **Not this time.** You chose **B. 1 Gbps Ethernet**.", "RDMA"],
            ["Right!"],
        ),
        (
            outcome(AnswerStatus.ACCEPTED, True, streak=3),
            ["🔥 3 daily questions right in a row."],
            [],
        ),
        (
            outcome(AnswerStatus.ACCEPTED, True, streak=1),
            ["Right!"],
            ["🔥"],
        ),
        (
            outcome(AnswerStatus.CHANGED, True, previous=Choice("B", "1 Gbps Ethernet")),
            ["You changed your answer from **B** to **A**."],
            [],
        ),
        (
            outcome(AnswerStatus.ALREADY, False),
            ["You already answered **B. 1 Gbps Ethernet**"],
            ["RDMA"],
        ),
        (outcome(AnswerStatus.CLOSED, True), ["This question is closed"], ["Right!"]),
    ],
)
def test_answer_feedback(result: AnswerOutcome, expected: list[str], absent: list[str]) -> None:
    text = render.markdown(words.feedback(result).text)
    for part in expected:
        assert part in text
    for part in absent:
        assert part not in text


def test_the_reveal_embed_marks_the_answer_and_shows_results() -> None:
    q = question()
    tallies = (
        ChoiceTally(q.choices[0], 3, 0.75, True),
        ChoiceTally(q.choices[1], 1, 0.25, False),
    )
    reveal = Reveal(a_round(), q, 4, 3, tallies, (Answerer("11", 1.25), Answerer("12", 3.0)))
    embed = render.reveal_embed(reveal).to_dict()
    assert "✅ **A.** InfiniBand\n`█████████░░░` 3 (75%)" in embed["description"]
    assert "▫️ **B.** 1 Gbps Ethernet\n`███░░░░░░░░░` 1 (25%)" in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Results"] == "4 people answered; 3 right (75%)."
    assert fields["Fastest right"] == "<@11> (1.2 s), <@12> (3.0 s)"
    assert fields["Tags"] == "`networking`"
    view = render.reveal_view(reveal)
    buttons = [b for b in view.children if isinstance(b, discord.ui.Button)]
    assert [(b.disabled, b.style.value, b.label) for b in buttons] == [
        (True, 3, "✓ A. InfiniBand"),
        (True, 2, "B. 1 Gbps Ethernet"),
        (False, 2, "Report a problem"),
    ]
    assert buttons[-1].custom_id == f"report:{q.id}" and buttons[-1].row == 1


def test_nobody_answered() -> None:
    q = question()
    tallies = tuple(ChoiceTally(c, 0, 0.0, c.key == "A") for c in q.choices)
    reveal = Reveal(a_round(), q, 0, 0, tallies, ())
    fields = {f["name"]: f["value"] for f in render.reveal_embed(reveal).to_dict()["fields"]}
    assert fields["Results"] == "Nobody answered this one."
    assert "Fastest right" not in fields


def test_a_huge_explanation_still_fits_one_embed() -> None:
    q = question(
        full="f" * 10_000,
        why_not={"B": "w" * 5000},
        references=tuple(Reference(f"ref {i}", f"https://example.org/{i}") for i in range(60)),
    )
    reveal = Reveal(a_round(), q, 0, 0, (), ())
    embed = render.explanation_embed(Explanation(reveal))
    assert len(embed) <= render.EMBED_TOTAL_MAX
    assert len(embed.description or "") <= render.EMBED_DESCRIPTION_MAX
    assert all(len(f.value or "") <= render.EMBED_FIELD_MAX for f in embed.fields)
    assert len(render.thread_name(reveal)) <= render.THREAD_NAME_MAX


def test_a_long_question_keeps_every_choice_on_the_card() -> None:
    card = QuestionCard(a_round(), question(text="t" * 5000))
    description = render.card_embed(card).description or ""
    assert len(description) <= render.EMBED_DESCRIPTION_MAX
    assert description.endswith("**B.** 1 Gbps Ethernet")


# ---------------------------------------------------------------- forms

PLACE = Place("discord", "1", "2")
FULL_VALUES = {
    **{f.name: "x" * (f.max_chars or 5000) for f in ADD_FIELDS},
    "answer": "B",
    "difficulty": "hard",
}


def test_every_page_of_the_question_form_fits_a_modal() -> None:
    pages = add_pages(render.MODAL_FIELDS)
    assert [len(p) for p in pages] == [5, 5, 4]
    seen: list[str] = []
    for n in range(1, len(pages) + 1):
        modal = render.form_modal(add_form(PLACE, render.MODAL_FIELDS, page=n, values=FULL_VALUES))
        data = modal.to_dict()
        check_modal(data)  # Discord's limits, as the stand-in enforces them
        assert data["custom_id"] == f"add:{n}"
        seen += list(render.form_values(data["components"]))
    assert seen == [f.name for f in ADD_FIELDS]


def test_the_answer_and_a_reports_reason_are_pick_lists_read_back_by_name() -> None:
    data = render.form_modal(report_form(PLACE, "q", values={"reason": "typo"})).to_dict()
    check_modal(data)
    label, note = data["components"]
    assert label["type"] == 18 and label["component"]["type"] == 3
    assert note["components"][0]["max_length"] == 300
    assert [o["value"] for o in label["component"]["options"] if o["default"]] == ["typo"]
    sent = [
        {"type": 18, "id": 1, "component": {"type": 3, "custom_id": "reason", "values": ["wrong"]}},
        {"type": 1, "components": [{"type": 4, "custom_id": "note", "value": "the key is B"}]},
    ]
    assert render.form_values(sent) == {"reason": "wrong", "note": "the key is B"}


def test_a_question_id_too_long_for_a_button_has_no_report_button() -> None:
    q = question(id="q" * 120)
    tallies = (ChoiceTally(q.choices[0], 1, 1.0, True),)
    view = render.reveal_view(Reveal(a_round(), q, 1, 1, tallies, ()))
    assert all(b.custom_id.startswith("quiz:") for b in view.children)  # type: ignore[attr-defined]
