"""Export then import gives the same bank, in YAML and in CSV (a property test), and bad CSV."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.bank.exchange import COLUMNS, Format, export, format_of, from_csv, parse, to_csv
from bot.bank.loader import load_bank
from bot.engine.model import ChartSpec, Choice, Difficulty, Question, Reference

ROOT = Path(__file__).resolve().parents[2]

# Text as people type it: letters, digits, punctuation, symbols and spaces from any script, with
# no control characters and no line or paragraph separators (YAML reads those as line breaks).
_CHARS = st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters="\x85\u2028\u2029")


def _text(max_size: int, *, lines: bool = False) -> st.SearchStrategy[str]:
    alphabet = st.one_of(_CHARS, st.just("\n")) if lines else _CHARS
    # The loader strips the ends of every text: a question as read never has spaces there.
    return (
        st.text(alphabet, min_size=1, max_size=max_size)
        .map(str.strip)
        .filter(lambda t: bool(t) and "\n\n\n" not in t)
    )


_WORD = st.from_regex(r"[a-z0-9][a-z0-9-]{0,12}", fullmatch=True)
_URL = st.from_regex(r"https://example\.org/[a-z0-9_.~-]{1,20}", fullmatch=True)


@st.composite
def questions(draw: st.DrawFn, qid: str) -> Question:
    keys = "ABCDE"[: draw(st.integers(2, 5))]
    answer = draw(st.sampled_from(keys))
    wrong = [k for k in keys if k != answer]
    why_keys = draw(st.lists(st.sampled_from(wrong), unique=True)) if wrong else []
    chart = draw(
        st.none()
        | st.builds(
            ChartSpec,
            size=st.sampled_from(("140GB", "7B grads bf16", "800MB")),
            op=st.sampled_from(("allreduce", "transfer", "alltoall")),
            nodes=st.integers(1, 64),
            gpus=st.integers(1, 8),
            over=st.lists(st.sampled_from(("ib-ndr", "100gbe", "roce-400")), unique=True).map(
                tuple
            ),
        )
    )
    return Question(
        id=qid,
        text=draw(_text(200, lines=True)),
        choices=tuple(Choice(k, draw(_text(75))) for k in keys),
        answer=answer,
        short=draw(_text(300)),
        full=draw(_text(600, lines=True)),
        why_not={k: draw(_text(120)) for k in sorted(why_keys)},
        tags=tuple(draw(st.lists(_WORD, unique=True, max_size=4))),
        difficulty=draw(st.sampled_from(list(Difficulty))),
        references=tuple(
            draw(st.lists(st.builds(Reference, title=_text(60), url=_URL), max_size=3))
        ),
        image=draw(st.none() | _URL),
        chart=chart,
    )


@st.composite
def banks(draw: st.DrawFn) -> list[Question]:
    ids = draw(st.lists(_WORD, min_size=1, max_size=5, unique=True))
    return [draw(questions(qid)) for qid in ids]


def _plain(q: Question) -> Question:
    return replace(q, source="", line=0, revision=None)


@pytest.mark.parametrize("fmt", list(Format))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bank=banks())
def test_export_then_import_gives_the_same_bank(fmt: Format, bank: list[Question]) -> None:
    text = export(bank, fmt)
    back, problems = parse(text, f"bank.{fmt.value}", fmt)
    assert not problems, [str(p) for p in problems]
    assert [_plain(q) for q in back] == [_plain(q) for q in bank]
    assert export(back, fmt) == text


@pytest.mark.parametrize("fmt", list(Format))
def test_the_shipped_bank_goes_through_both_formats(fmt: Format) -> None:
    shipped = list(load_bank([ROOT / "questions"]))
    text = export(shipped, fmt)
    back, problems = parse(text, "all", fmt)
    assert not problems
    assert [_plain(q) for q in back] == [_plain(q) for q in shipped]


def test_the_csv_header_is_the_documented_one() -> None:
    header = to_csv([]).splitlines()[0]
    assert header == ",".join(COLUMNS)
    doc = (ROOT / "docs" / "questions.md").read_text(encoding="utf-8")
    assert header in doc


def test_format_by_suffix() -> None:
    assert format_of("a.YAML") is Format.YAML and format_of("b.yml") is Format.YAML
    assert format_of("c.csv") is Format.CSV and format_of("d.json") is None


HEAD = "id,question,A,B,answer,short,full\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the file is empty"),
        ("id,question,A,B,answer,short,full,extra\n", "unknown column 'extra'"),
        ("id,question,A,answer,short,full\n", "at least two choice columns"),
        ("id,id,question,A,B,answer,short,full\n", "'id' appears more than once"),
        ("question,A,B,answer,short,full\n", "missing column 'id'"),
        (HEAD, "no question rows"),
        (HEAD + "q1,Why?," + "x" * 76 + ",b,A,s,f\n", "at most 75"),
        (HEAD + "q1,Why?,a,b,C,s,f\n", "not one of the choice keys"),
        (HEAD + "q1,Why?,a,b,A,s,f\nq1,Again?,a,b,A,s,f\n", "duplicate id 'q1'"),
        (HEAD + "q1,Why?,a,b,A,s,f,more\n", "8 cells"),
        (HEAD + 'q1,"Why?,a\n', "not valid CSV"),
    ],
)
def test_bad_csv_is_refused_with_the_row_and_reason(text: str, reason: str) -> None:
    found, problems = from_csv(text, "in.csv")
    assert found == []
    assert any(reason in str(p) for p in problems), [str(p) for p in problems]


def test_a_row_problem_names_the_file_and_row() -> None:
    _, problems = from_csv(HEAD + "q1,Why?,a,b,A,s,f\nq2,Why?,a,b,Z,s,f\n", "in.csv")
    assert [str(p).split(": ")[0] for p in problems] == ["in.csv:3"]
