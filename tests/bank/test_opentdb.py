"""Open Trivia DB responses turned into question files: encodings, skips, stable output."""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import jsonschema
import pytest
import yaml

from bot.bank import lint
from bot.bank.loader import load_bank
from bot.bank.opentdb import (
    Encoding,
    InvalidResponse,
    convert,
    detect_encoding,
    question_id,
    slugify,
)
from bot.errors import UserError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "questions" / "schema.json"

Entry = dict[str, Any]


def entry(
    question: str = "Which protocol lets a NIC write into remote memory?",
    correct: str = "RDMA",
    wrong: tuple[str, ...] = ("SMTP", "FTP", "DNS"),
    kind: str = "multiple",
    difficulty: str = "easy",
    category: str = "Science: Computers",
) -> Entry:
    return {
        "type": kind,
        "difficulty": difficulty,
        "category": category,
        "question": question,
        "correct_answer": correct,
        "incorrect_answers": list(wrong),
    }


def response(*entries: Entry, code: int = 0) -> dict[str, Any]:
    return {"response_code": code, "results": list(entries)}


def encode_all(entries: list[Entry], encode: Callable[[str], str]) -> list[Entry]:
    """Encode every string value, as the API does for encode=base64 and encode=url3986."""

    def value(v: Any) -> Any:
        if isinstance(v, str):
            return encode(v)
        if isinstance(v, list):
            return [value(x) for x in v]
        return v

    return [{k: value(v) for k, v in e.items()} for e in entries]


def b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def url3986(text: str) -> str:
    return quote(text, safe="")


# One question as the API sends it in each encoding; every one decodes to the same text.
PLAIN = entry(
    question='Which "collective" sums gradients & shares the result? Café',
    correct="All-reduce",
    wrong=("Broadcast", "Scatter", "Gather"),
)
HTML = entry(
    question="Which &quot;collective&quot; sums gradients &amp; shares the result? Caf&eacute;",
    correct="All-reduce",
    wrong=("Broadcast", "Scatter", "Gather"),
)


@pytest.mark.parametrize(
    ("raw", "encoding"),
    [
        pytest.param([HTML], Encoding.HTML, id="html-entities"),
        pytest.param(encode_all([PLAIN], b64), Encoding.BASE64, id="base64"),
        pytest.param(encode_all([PLAIN], url3986), Encoding.URL, id="url3986"),
        pytest.param(encode_all([PLAIN], quote_plus), Encoding.URL, id="url-legacy"),
    ],
)
def test_every_encoding_decodes_to_the_same_question(raw: list[Entry], encoding: Encoding) -> None:
    result = convert(response(*raw))
    assert result.encoding is encoding
    assert result.skipped == ()
    (q,) = result.questions
    assert q.question == 'Which "collective" sums gradients & shares the result? Café'
    assert sorted(text for _, text in q.choices) == ["All-reduce", "Broadcast", "Gather", "Scatter"]
    assert dict(q.choices)[q.answer] == "All-reduce"
    assert q.difficulty == "easy"
    assert q.tags == ("science-computers",)
    assert q == convert(response(HTML)).questions[0]


def test_detect_encoding_of_an_empty_or_odd_response_defaults_to_html() -> None:
    assert detect_encoding([]) is Encoding.HTML
    assert detect_encoding(["not an entry"]) is Encoding.HTML
    assert detect_encoding([entry(question="Short?")]) is Encoding.HTML


@pytest.mark.parametrize(
    ("correct", "answer"),
    [("True", "A"), ("False", "B")],
)
def test_boolean_questions_become_true_false_choices(correct: str, answer: str) -> None:
    other = "False" if correct == "True" else "True"
    raw = entry(question="NVLink connects GPUs.", correct=correct, wrong=(other,), kind="boolean")
    (q,) = convert(response(raw)).questions
    assert q.choices == (("A", "True"), ("B", "False"))
    assert q.answer == answer
    text = q.to_yaml()
    assert "A: 'True'" in text
    assert "B: 'False'" in text
    loaded = yaml.safe_load(text)
    assert loaded["choices"] == {"A": "True", "B": "False"}


@pytest.mark.parametrize(
    ("entries", "index", "reason"),
    [
        pytest.param(
            [entry(correct="x" * 76)], 1, "choice too long for a button (76 > 75", id="too-long"
        ),
        pytest.param(
            [entry(wrong=("a", "b", "c", "d", "e"))], 1, "6 choices; at most 5", id="six-choices"
        ),
        pytest.param([entry(), entry()], 2, "duplicate of result 1", id="duplicate"),
        pytest.param(["a string"], 1, "malformed entry: entry is not an object", id="not-object"),
        pytest.param(
            [{**entry(), "question": None}], 1, "'question' is missing or not text", id="no-text"
        ),
        pytest.param([entry(question="   ")], 1, "'question' is empty", id="blank-question"),
        pytest.param([entry(kind="essay")], 1, "unknown type 'essay'", id="unknown-type"),
        pytest.param([entry(wrong=())], 1, "'incorrect_answers' is missing", id="no-wrong"),
        pytest.param(
            [{**entry(), "incorrect_answers": ["a", 3]}], 1, "not text", id="non-text-answer"
        ),
        pytest.param([entry(wrong=("RDMA", "b"))], 1, "same text", id="repeated-answer"),
        pytest.param(
            [entry(kind="boolean", correct="Yes", wrong=("No",))],
            1,
            "needs True and False",
            id="boolean-yes-no",
        ),
    ],
)
def test_unusable_entries_are_skipped_with_a_reason(
    entries: list[Any], index: int, reason: str
) -> None:
    result = convert(response(*entries))
    assert len(result.questions) == len(entries) - 1
    (skip,) = result.skipped
    assert skip.index == index
    assert reason in skip.reason


@pytest.mark.parametrize(
    ("encode", "field", "bad", "reason"),
    [
        pytest.param(b64, "correct_answer", "%%% not base64 %%%", "not valid base64", id="b64"),
        pytest.param(b64, "category", b64("x")[:-1] + "!", "not valid base64", id="b64-category"),
        pytest.param(url3986, "category", "Caf%E9", "does not decode to UTF-8", id="url-latin1"),
        pytest.param(url3986, "difficulty", "%FF", "does not decode to UTF-8", id="url-level"),
    ],
)
def test_a_badly_encoded_string_skips_only_its_entry(
    encode: Callable[[str], str], field: str, bad: str, reason: str
) -> None:
    raw = encode_all([entry(), entry(question="Second question here?")], encode)
    raw[1][field] = bad
    result = convert(response(*raw))
    assert len(result.questions) == 1
    (skip,) = result.skipped
    assert skip.index == 2
    assert reason in skip.reason


@pytest.mark.parametrize(
    ("code", "meaning"),
    [(1, "no results"), (2, "invalid parameter"), (5, "rate limit"), (42, "unknown code")],
)
def test_a_failed_response_code_imports_nothing_and_says_why(code: int, meaning: str) -> None:
    result = convert(response(entry(), code=code))
    assert result.questions == ()
    (skip,) = result.skipped
    assert f"response_code {code}" in skip.reason
    assert meaning in skip.reason


@pytest.mark.parametrize(
    "document",
    [
        [],
        "text",
        {"results": []},
        {"response_code": "0", "results": []},
        {"response_code": True, "results": []},
        {"response_code": 0, "results": {}},
    ],
)
def test_something_that_is_not_a_response_is_refused(document: object) -> None:
    with pytest.raises(InvalidResponse, match="not an Open Trivia DB response"):
        convert(document)


def test_choice_order_is_stable_and_ignores_the_input_order() -> None:
    first = convert(response(entry(wrong=("SMTP", "FTP", "DNS")))).questions[0]
    second = convert(response(entry(wrong=("DNS", "SMTP", "FTP")))).questions[0]
    assert first == second
    assert first.to_yaml() == second.to_yaml()


def test_right_answers_land_on_every_letter() -> None:
    entries = [entry(question=f"Question number {i} about links?") for i in range(40)]
    letters = Counter(q.answer for q in convert(response(*entries)).questions)
    assert set(letters) == {"A", "B", "C", "D"}
    assert max(letters.values()) <= 20


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('What does "RAM" stand for?', "what-does-ram-stand-for"),
        ("Qu'est-ce que l'élan?", "qu-est-ce-que-l-elan"),
        ("???", ""),
        # Ten words would take 49 characters, so the cut falls after the ninth.
        ("word " * 20, "-".join(["word"] * 9)),
    ],
    ids=["quotes", "accents", "symbols-only", "long"],
)
def test_slugify(text: str, expected: str) -> None:
    assert slugify(text) == expected
    assert len(slugify(text)) <= 48


def test_ids_are_a_slug_plus_a_hash_and_stable() -> None:
    qid = question_id("What is RDMA?")
    assert qid.startswith("what-is-rdma-")
    assert len(qid.rsplit("-", 1)[1]) == 8
    assert qid == question_id("What is RDMA?")
    assert qid != question_id("What is RDMA ?")
    assert question_id("???").startswith("q-")


def test_tags_come_from_the_caller_and_the_category() -> None:
    (q,) = convert(response(entry(category="Entertainment: Video Games")), ["trivia"]).questions
    assert q.tags == ("trivia", "entertainment-video-games")
    (q,) = convert(response({**entry(), "category": None}), ["trivia"]).questions
    assert q.tags == ("trivia",)


@pytest.mark.parametrize("tag", ["Trivia", "two words", "", "under_score"])
def test_a_bad_tag_is_a_user_error(tag: str) -> None:
    with pytest.raises(UserError, match="not valid"):
        convert(response(entry()), [tag])


@pytest.mark.parametrize(
    ("difficulty", "expected"), [("hard", "hard"), ("medium", "medium"), ("weird", "medium")]
)
def test_difficulty_is_kept_or_defaults_to_medium(difficulty: str, expected: str) -> None:
    (q,) = convert(response(entry(difficulty=difficulty))).questions
    assert q.difficulty == expected


def test_explanation_states_the_answer_and_the_source_honestly() -> None:
    (q,) = convert(response(entry())).questions
    answer = dict(q.choices)[q.answer]
    assert q.short == f"The answer is {q.answer}: {answer}."
    # Nothing invented: the full text is the question and its answer; the source and licence
    # are in the references.
    assert q.full == f"{q.question} Answer: {answer}."
    data = yaml.safe_load(q.to_yaml())
    assert [r["url"] for r in data["references"]] == [
        "https://opentdb.com/",
        "https://creativecommons.org/licenses/by-sa/4.0/",
    ]


def test_imported_questions_are_not_near_duplicates_of_each_other() -> None:
    # Twenty different questions from one category: the importer's own wording must not make
    # them alike (it used to add the same three sentences to every full explanation).
    stems = [
        ("What does CPU stand for?", "Central Processing Unit"),
        ("In web design, what does CSS stand for?", "Cascading Style Sheet"),
        ("Which company designed the ARM instruction set?", "Acorn Computers"),
        ("How many bits are in a byte?", "8"),
        ("Which programming language did Guido van Rossum create?", "Python"),
        ("What port does HTTPS use by default?", "443"),
        ("Who is known as the father of computing?", "Charles Babbage"),
        ("Which protocol lets a NIC write into remote memory?", "RDMA"),
        ("Linux was first released in 1991.", "True"),
        ("The first iPhone shipped with a removable battery.", "False"),
        ("HTML is a programming language.", "False"),
        ("Ethernet was invented at Xerox PARC.", "True"),
    ]
    entries = [
        entry(
            question=stem,
            kind="boolean",
            correct=key,
            wrong=("False" if key == "True" else "True",),
        )
        if key in ("True", "False")
        else entry(question=stem, correct=key, wrong=("Alpha", "Bravo", "Charlie"))
        for stem, key in stems
    ]
    questions = convert(response(*entries)).questions
    assert len(questions) == len(stems)
    texts = [q.full for q in questions]
    limit = lint.Limits().full_similarity_percent
    assert lint.similarities(texts, (3,), limit) == []


def test_imported_true_false_questions_give_no_length_cue(tmp_path: Path) -> None:
    entries = [
        entry(
            question="Is 1 GbE about 125 MB/s?", kind="boolean", correct="True", wrong=("False",)
        ),
        entry(question="Is 1 GbE 1 GB/s?", kind="boolean", correct="False", wrong=("True",)),
    ]
    for q in convert(response(*entries)).questions:
        (tmp_path / q.filename).write_text(q.to_yaml(), encoding="utf-8")
    report = lint.lint(load_bank([tmp_path]).questions)
    assert [f for f in report.findings if f.rule in ("length-cue", "near-duplicate")] == []
    assert report.text_choice == 0


def test_written_files_pass_the_loader_and_the_schema(tmp_path: Path) -> None:
    entries = [
        entry(),
        entry(
            question="Is 1 GbE about 125 MB/s?", kind="boolean", correct="True", wrong=("False",)
        ),
        entry(question="Pick: yes", correct="yes", wrong=("no", "on", "1969")),
        entry(question="Fünf Möglichkeiten?", correct="e", wrong=("a", "b", "c", "d")),
    ]
    result = convert(response(*entries), ["imported"])
    assert len(result.questions) == 4
    for q in result.questions:
        (tmp_path / q.filename).write_text(q.to_yaml(), encoding="utf-8")
    bank = load_bank([tmp_path])
    assert {q.id for q in bank} == {q.id for q in result.questions}
    tricky = next(q for q in bank if q.text == "Pick: yes")
    assert sorted(c.text for c in tricky.choices) == ["1969", "no", "on", "yes"]
    assert tricky.answer_choice.text == "yes"
    if SCHEMA_PATH.exists():
        validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
        for path in tmp_path.glob("*.yaml"):
            errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
            assert errors == [], path
