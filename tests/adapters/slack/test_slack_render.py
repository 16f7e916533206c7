"""Block Kit rendering: Slack's limits kept, text escaped, results and feedback worded right."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.adapters.slack import render
from bot.chat import Explanation, words
from bot.chat.buttons import button_id
from bot.chat.forms import ADD_FIELDS, add_form, report_form
from bot.engine.model import (
    Answerer,
    AnswerOutcome,
    AnswerStatus,
    ChannelSettings,
    Choice,
    ChoiceTally,
    Difficulty,
    Leaderboard,
    LeaderboardEntry,
    Period,
    Place,
    Question,
    QuestionCard,
    Reference,
    Reveal,
    Round,
    UserStats,
)

OPENED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def question(**changes: object) -> Question:
    values: dict = {
        "id": "q",
        "text": "Which link has <1 µs latency & RDMA?",
        "choices": (Choice("A", "InfiniBand"), Choice("B", "1 Gbps Ethernet")),
        "answer": "A",
        "short": "RDMA & kernel bypass.",
        "full": "InfiniBand NDR runs at 400 Gb/s.",
        "why_not": {"B": "Far too slow."},
        "tags": ("networking", "rdma"),
        "difficulty": Difficulty.EASY,
        "references": (Reference("IBTA <spec>", "https://example.org/ib"),),
    }
    values.update(changes)
    return Question(**values)


def card(q: Question | None = None, *, round_id: int = 7, answered: int = 0) -> QuestionCard:
    rnd = Round(
        id=round_id,
        place=Place("slack", "T1", "C1"),
        question_id="q",
        opened_at=OPENED,
        closes_at=OPENED + timedelta(minutes=10),
    )
    return QuestionCard(round=rnd, question=q or question(), answered=answered)


def reveal(q: Question, counts: dict[str, int], fastest: tuple[Answerer, ...] = ()) -> Reveal:
    total = sum(counts.values())
    tallies = tuple(
        ChoiceTally(
            c,
            counts.get(c.key, 0),
            counts.get(c.key, 0) / total if total else 0.0,
            c.key == q.answer,
        )
        for c in q.choices
    )
    return Reveal(
        round=card(q).round,
        question=q,
        answered=total,
        correct=counts.get(q.answer, 0),
        tallies=tallies,
        fastest=fastest,
    )


def test_the_card_has_a_button_per_choice_and_escapes_text() -> None:
    message = render.question_card(card(answered=3))
    header, section, actions, context = message.blocks
    assert header["text"]["text"] == "Quiz question"
    assert section["text"]["text"] == "Which link has &lt;1 µs latency &amp; RDMA?"
    assert actions["block_id"] == "quiz_round_7_choices"
    assert [e["text"]["text"] for e in actions["elements"]] == [
        "A · InfiniBand",
        "B · 1 Gbps Ethernet",
    ]
    assert [e["action_id"] for e in actions["elements"]] == ["quiz:7:A", "quiz:7:B"]
    text = context["elements"][0]["text"]
    # The tags wait for the reveal: one could name the answer.
    assert "networking" not in json.dumps(message.blocks)
    assert text.startswith("easy, 1 point · closes <!date^")
    assert "|2026-03-02 09:10 UTC>" in text
    assert text.endswith(" · 3 answered")
    assert message.text == "Quiz: Which link has &lt;1 µs latency &amp; RDMA?"


def test_a_choice_too_long_for_a_button_is_clipped_and_shown_in_full() -> None:
    long = "x" * 75
    q = question(choices=(Choice("A", long), Choice("B", "short")))
    message = render.question_card(card(q))
    button = message.blocks[2]["elements"][0]["text"]["text"]
    assert len(button) == 75
    assert button.endswith("…")
    assert f"*A* · {long}" in message.blocks[1]["text"]["text"]


def test_a_long_explanation_is_split_into_sections_within_slack_limits() -> None:
    full = "\n".join(f"Paragraph {n}: " + "word " * 120 for n in range(30))
    message = render.explanation(Explanation(reveal(question(full=full), {"A": 1})))
    assert len(message.blocks) > 2
    assert all(len(b["text"]["text"]) <= 3000 for b in message.blocks)
    assert len({b["block_id"] for b in message.blocks}) == len(message.blocks)
    joined = "\n".join(b["text"]["text"] for b in message.blocks)
    assert "Paragraph 29" in joined


def test_the_reveal_marks_the_answer_and_shows_results_not_who_chose_what() -> None:
    q = question()
    message = render.reveal_card(
        reveal(q, {"A": 3, "B": 1}, (Answerer("U1", 2.04), Answerer("U9", 7.5)))
    )
    # No choice buttons; one button reports a problem with the question.
    [actions] = [b for b in message.blocks if b["type"] == "actions"]
    assert [e["action_id"] for e in actions["elements"]] == [f"report:{q.id}"]
    rows = message.blocks[2]["text"]["text"].splitlines()
    assert rows == [
        "`████████░░`  75% (3)  :white_check_mark: *A · InfiniBand*",
        "`██░░░░░░░░`  25% (1)  :white_small_square: B · 1 Gbps Ethernet",
    ]
    context = message.blocks[3]["elements"][0]["text"]
    assert context.startswith("4 people answered; 3 right (75%). · Fastest right: <@U1> (2.0 s)")
    assert " · Tags: `networking`, `rdma` · " in context


def test_nobody_answered() -> None:
    message = render.reveal_card(reveal(question(), {}))
    assert "Nobody answered this one" in json.dumps(message.blocks)
    assert "`░░░░░░░░░░`   0% (0)" in message.blocks[2]["text"]["text"]


def test_the_thread_explains_the_answer_the_wrong_choices_and_links_references() -> None:
    text = json.dumps(
        render.explanation(Explanation(reveal(question(), {"A": 1}))).blocks, ensure_ascii=False
    )
    assert "*The answer is A · InfiniBand*" in text
    assert "• *B · 1 Gbps Ethernet*: Far too slow." in text
    assert "<https://example.org/ib|IBTA &lt;spec&gt;>" in text


@pytest.mark.parametrize(
    ("status", "key", "correct", "extra", "says"),
    [
        (AnswerStatus.ACCEPTED, "A", True, {"points": 2}, ":white_check_mark: *Right!* You chose"),
        (AnswerStatus.ACCEPTED, "A", True, {"points": 1}, "(+1 point)."),
        (AnswerStatus.ACCEPTED, "B", False, {}, ":x: *Not this time.* You chose *B · 1 Gbps"),
        (AnswerStatus.ACCEPTED, "A", True, {"streak": 4}, ":fire: 4 daily questions right"),
        (AnswerStatus.ALREADY, "B", False, {}, "You already answered *B · 1 Gbps Ethernet*"),
        (AnswerStatus.CLOSED, "A", True, {}, "This question is closed"),
        (
            AnswerStatus.CHANGED,
            "A",
            True,
            {"previous": Choice("B", "1 Gbps Ethernet")},
            "You changed your answer from *B* to *A*.",
        ),
    ],
)
def test_answer_feedback(
    status: AnswerStatus, key: str, correct: bool, extra: dict, says: str
) -> None:
    q = question()
    outcome = AnswerOutcome(
        status=status,
        round_id=7,
        user="U1",
        choice=q.choice(key),
        correct=correct,
        answer=q.answer_choice,
        short=q.short,
        **extra,
    )
    text = render.mrkdwn(words.feedback(outcome).text)
    assert says in text
    if status in (AnswerStatus.ACCEPTED, AnswerStatus.CHANGED):
        assert "RDMA &amp; kernel bypass." in text
    else:
        assert "kernel bypass" not in text


def test_a_streak_of_one_is_not_mentioned() -> None:
    q = question()
    outcome = AnswerOutcome(
        AnswerStatus.ACCEPTED, 7, "U1", q.choice("A"), True, q.answer_choice, q.short, 1, 1
    )
    assert ":fire:" not in render.mrkdwn(words.feedback(outcome).text)


def test_the_leaderboard_adds_the_callers_rank_when_outside_the_top() -> None:
    entries = tuple(LeaderboardEntry(n, f"U{n}", 30 - n, 10, 12) for n in range(1, 11))
    board = Leaderboard(Period.MONTH, None, entries, LeaderboardEntry(14, "U14", 3, 1, 5))
    lines = render.panel(words.leaderboard(board)).splitlines()
    assert lines[0] == "*Leaderboard, this month*"
    assert lines[1] == "1. <@U1>: 29 pts, 10/12 right"
    assert len(lines) == 12
    assert lines[-1] == "You: #14 with 3 pts, 1/5 right"


def test_an_empty_leaderboard() -> None:
    text = render.panel(words.leaderboard(Leaderboard(Period.ALL, None, (), None)))
    assert "Nobody has scored" in text
    assert "You have not answered" in text


def test_stats_and_settings_read_as_sentences() -> None:
    assert render.mrkdwn(words.stats(UserStats("U2", 4, 3, 6, 2, 5))) == (
        "<@U2>: 4 answered, 3 right (75%), 6 points; daily streak 2 (best 5)."
    )
    shown = words.settings(ChannelSettings(True, 15), 0.85).plain()
    assert "open 15 minutes" in shown and "are allowed" in shown
    assert "has fallen to 85%." in shown


@pytest.mark.parametrize(
    ("fraction", "bar"), [(0, "░" * 10), (0.04, "░" * 10), (0.06, "█" + "░" * 9), (1, "█" * 10)]
)
def test_bars(fraction: float, bar: str) -> None:
    assert words.bar(fraction, render.BAR_WIDTH) == bar


# ---------------------------------------------------------------- forms

PLACE = Place("slack", "T1", "C1")
FULL_VALUES = {
    **{f.name: "x" * (f.max_chars or 5000) for f in ADD_FIELDS},
    "answer": "B",
    "difficulty": "hard",
}


def test_every_form_fits_a_modal_with_its_values_kept() -> None:
    for form in (
        add_form(PLACE, None, values=FULL_VALUES),
        report_form(PLACE, "q", values={"reason": "typo", "note": "x" * 300}),
    ):
        view = render.form_view(form).to_dict()  # validate_json: Slack's modal limits
        assert view["callback_id"] == button_id(form.button)
        assert view["private_metadata"] == "C1"
        blocks = {b["block_id"]: b["element"] for b in view["blocks"]}
        assert list(blocks) == [f.name for f in form.fields]
    answer = render.form_view(add_form(PLACE, None, values=FULL_VALUES)).to_dict()["blocks"]
    picked = {b["block_id"]: b["element"] for b in answer}
    assert picked["answer"]["initial_option"]["value"] == "B"
    # A text input holds 3,000 characters: a longer full explanation opens clipped.
    assert len(picked["full"]["initial_value"]) == render.INPUT_MAX == picked["full"]["max_length"]


def test_errors_are_named_by_the_block_of_their_field() -> None:
    form = add_form(PLACE, None, errors={"B": "76 characters; at most 75.", "nowhere": "odd"})
    assert render.form_errors(form) == {"B": "76 characters; at most 75.", "question": "odd"}


def test_a_question_id_too_long_for_a_button_has_no_report_button() -> None:
    message = render.reveal_card(reveal(question(id="q" * 120), {"A": 1}))
    assert all(b["type"] != "actions" for b in message.blocks)
