"""The question form's fields and checks: one definition for the chat form and the prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bank.form import QUESTION_FIELDS, check_form, data_of, field_error, values_of
from bot.bank.loader import MAX_CHOICE_CHARS, MAX_SHORT_CHARS, load_bank

BANK = load_bank([Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"])
FIELDS = {f.name: f for f in QUESTION_FIELDS}
GOOD = {
    "question": "Which tool prints the GPU topology matrix of a node, NVLink paths included?",
    "A": "nvidia-smi topo -m",
    "B": "lspci -t -v -nn",
    "C": "numactl --hardware",
    "answer": "a",
    "short": "nvidia-smi topo -m prints how each pair of GPUs and NICs is connected.",
    "full": "It prints a matrix of every GPU and NIC pair with the link between them.",
    "id": "gpu-topology-matrix",
    "tags": "tools, gpus",
    "difficulty": "Easy",
    "source_title": "NCCL environment variables",
    "source_url": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
}


def test_the_fields_carry_the_formats_limits() -> None:
    assert [f.name for f in QUESTION_FIELDS if f.path.startswith("choices.")] == list("ABCDE")
    assert {FIELDS[k].max_chars for k in "ABCDE"} == {MAX_CHOICE_CHARS}
    assert FIELDS["short"].max_chars == MAX_SHORT_CHARS
    required = {f.name for f in QUESTION_FIELDS if f.required}
    assert required == {"question", "A", "B", "answer", "short", "full", "id"}
    # Discord's label is 45 characters at most, its placeholder 100.
    assert all(len(f.label) <= 45 and len(f.hint) <= 100 for f in QUESTION_FIELDS)


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("A", "x" * MAX_CHOICE_CHARS, None),
        ("A", "x" * (MAX_CHOICE_CHARS + 1), "76 characters; at most 75."),
        ("A", "", "Required."),
        ("C", "", None),
        ("answer", "F", "One of A, B, C, D, E."),
        ("difficulty", "tough", "One of easy, medium, hard."),
        ("id", "Bad Id", "Only a-z, 0-9 and -, starting with a letter or a digit."),
    ],
)
def test_each_field_on_its_own(name: str, value: str, error: str | None) -> None:
    assert field_error(FIELDS[name], value) == error


def test_a_good_form_is_the_question_it_says() -> None:
    checked = check_form(GOOD, BANK)
    assert checked.ok, checked.errors
    q = checked.question
    assert q is not None
    assert (q.id, q.answer, q.tags, q.difficulty.value) == (
        "gpu-topology-matrix",
        "A",
        ("tools", "gpus"),
        "easy",
    )
    assert [c.key for c in q.choices] == ["A", "B", "C"]
    # Prefilled with a question, the form sends the same question back.
    again = check_form(values_of(q) | {"id": "gpu-topology-matrix-2"}, BANK)
    assert again.question is not None
    assert again.question.text == q.text and again.question.references == q.references
    assert data_of(values_of(q))["references"][0]["url"] == GOOD["source_url"]


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"B": "y" * 76}, "B", "at most 75"),
        ({"full": ""}, "full", "Required"),
        ({"id": "slack-test-checkpoint"}, "id", "Duplicate id"),
        ({"question": "Ping <!channel> now?"}, "question", "<!channel>"),
        ({"B": "@everyone"}, "B", "@everyone"),
        ({"short": "Ask <@U1>, who knows."}, "short", "<@U1>"),
        ({"answer": "D"}, "answer", "not one of the choice keys"),
        ({"source_url": "", "source_title": ""}, "source_url", "primary source"),
    ],
)
def test_a_refusal_is_named_beside_its_field(change: dict[str, str], field: str, says: str) -> None:
    checked = check_form(GOOD | change, BANK)
    assert not checked.ok and checked.question is None
    assert list(checked.errors) == [field], checked.errors
    assert says in checked.errors[field]
