"""A workspace's questions in and out: the YAML format, and CSV with a fixed header.

Export then import gives the same questions, and exporting again gives the same text: both
formats are written from the questions in one canonical way, and read back through the loader
(a CSV row becomes the YAML mapping of its question first), so a CSV file is checked by exactly
the rules a question file is.

The CSV header (docs/questions.md#csv-columns)::

    id,question,A,B,C,D,E,answer,short,full,why_not_A,why_not_B,why_not_C,why_not_D,why_not_E,
    tags,difficulty,references,image,chart

``tags`` are separated by spaces; ``references`` hold one reference a line, ``URL TITLE``;
``chart`` is the chart mapping in YAML's flow style (``{size: 140GB, op: transfer}``). An empty
cell is a field left out. Columns may come in any order; ``id``, ``question``, ``answer``,
``short`` and ``full`` and at least two choices are needed, and an unknown column is refused.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any

import yaml

from bot.bank.bank import Problem
from bot.bank.loader import check_text
from bot.bank.workspace import bank_yaml, dump, question_data
from bot.engine.model import CHOICE_KEYS, Question


class Format(StrEnum):
    """The formats a workspace's questions are exported and imported in."""

    YAML = "yaml"
    CSV = "csv"


CHOICE_COLUMNS = tuple(CHOICE_KEYS)
WHY_NOT_COLUMNS = tuple(f"why_not_{k}" for k in CHOICE_KEYS)
COLUMNS = (
    "id",
    "question",
    *CHOICE_COLUMNS,
    "answer",
    "short",
    "full",
    *WHY_NOT_COLUMNS,
    "tags",
    "difficulty",
    "references",
    "image",
    "chart",
)
REQUIRED_COLUMNS = ("id", "question", "answer", "short", "full")


class ExportError(ValueError):
    """A question that a format cannot hold exactly (the message says which and why)."""


def format_of(name: str) -> Format | None:
    """Return the format a file name's suffix says, or None."""
    lowered = name.lower()
    if lowered.endswith((".yaml", ".yml")):
        return Format.YAML
    if lowered.endswith(".csv"):
        return Format.CSV
    return None


# ---------------------------------------------------------------- out


def export(questions: Sequence[Question], fmt: Format) -> str:
    """Return the questions as the text of one file in ``fmt`` (ExportError if one cannot be)."""
    if fmt is Format.YAML:
        return bank_yaml(questions)
    return to_csv(questions)


def to_csv(questions: Iterable[Question]) -> str:
    """Return the questions as CSV with the documented header, one question a row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for q in questions:
        writer.writerow(_row(q))
    return out.getvalue()


def _row(q: Question) -> list[str]:
    data = question_data(q)
    row = {name: "" for name in COLUMNS}
    row["id"], row["question"], row["answer"] = q.id, q.text, q.answer
    row["short"], row["full"] = q.short, q.full
    for c in q.choices:
        row[c.key] = c.text
    for key, why in q.why_not.items():
        row[f"why_not_{key}"] = why
    row["tags"] = " ".join(q.tags)
    row["difficulty"] = q.difficulty.value
    lines = []
    for r in q.references:
        if "\n" in r.title or "\r" in r.title:
            raise ExportError(
                f"{q.id}: a reference title runs over several lines, which the CSV format "
                "cannot hold; export it as YAML"
            )
        lines.append(f"{r.url} {r.title}")
    row["references"] = "\n".join(lines)
    row["image"] = q.image or ""
    if "chart" in data:
        flow: str = yaml.safe_dump(
            data["chart"], default_flow_style=True, sort_keys=False, width=10_000
        )
        row["chart"] = flow.strip()
    return [row[name] for name in COLUMNS]


# ---------------------------------------------------------------- in


def parse(text: str, name: str, fmt: Format) -> tuple[list[Question], list[Problem]]:
    """Read questions in ``fmt``; return them (none if any problem) and every problem found."""
    if fmt is Format.YAML:
        return check_text(text, name)
    return from_csv(text, name)


def from_csv(text: str, name: str) -> tuple[list[Question], list[Problem]]:
    """Read CSV questions: each row is checked as the YAML question it stands for.

    A problem reads ``NAME:N: message``, N the row (the header is row 1).
    """
    text = text.removeprefix("\ufeff")
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        return [], [Problem(name, 1, f"not valid CSV: {exc}")]
    if not rows or not any(cell.strip() for cell in rows[0]):
        return [], [Problem(name, 1, "the file is empty: expected the header row first")]
    header = [cell.strip() for cell in rows[0]]
    problems = _header_problems(header, name)
    if problems:
        return [], problems
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue  # a blank line, as spreadsheets leave at the end
        where = f"{name} row {number}"
        if len(cells) > len(header):
            problems.append(
                Problem(name, number, f"{len(cells)} cells, but the header names {len(header)}")
            )
            continue
        row = dict(zip(header, cells, strict=False))
        data, errors = _row_data(row)
        if errors:
            problems += [Problem(name, number, e) for e in errors]
            continue
        found, row_problems = check_text(dump(data), where, seen)
        questions += found
        # The loader's messages name the field; the line is of the row's YAML, not the file's.
        problems += [Problem(name, number, p.message) for p in row_problems]
    if not questions and not problems:
        problems.append(Problem(name, 2, "no question rows under the header"))
    return ([] if problems else questions), problems


def _header_problems(header: Sequence[str], name: str) -> list[Problem]:
    out = []
    for column in header:
        if column not in COLUMNS:
            out.append(
                Problem(name, 1, f"unknown column '{column}'; the columns: {','.join(COLUMNS)}")
            )
    repeated = sorted({c for c in header if header.count(c) > 1})
    for column in repeated:
        out.append(Problem(name, 1, f"the column '{column}' appears more than once"))
    for column in REQUIRED_COLUMNS:
        if column not in header:
            out.append(Problem(name, 1, f"missing column '{column}'"))
    if sum(k in header for k in CHOICE_COLUMNS) < 2:
        out.append(Problem(name, 1, "at least two choice columns (A, B, ...) are needed"))
    return out


def _row_data(row: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Return the YAML mapping a CSV row stands for, and what keeps it from being one."""
    errors: list[str] = []

    def cell(column: str) -> str:
        return row.get(column, "").strip()

    data: dict[str, Any] = {}
    for column in ("id", "question"):
        if cell(column):
            data[column] = cell(column)
    choices = {k: cell(k) for k in CHOICE_COLUMNS if cell(k)}
    if choices:
        data["choices"] = choices
    if cell("answer"):
        data["answer"] = cell("answer")
    explanation: dict[str, Any] = {}
    for column in ("short", "full"):
        if cell(column):
            explanation[column] = cell(column)
    why_not = {k: cell(f"why_not_{k}") for k in CHOICE_COLUMNS if cell(f"why_not_{k}")}
    if why_not:
        explanation["why_not"] = why_not
    if explanation:
        data["explanation"] = explanation
    if cell("tags"):
        data["tags"] = cell("tags").split()
    if cell("difficulty"):
        data["difficulty"] = cell("difficulty")
    if cell("references"):
        refs = []
        for line in cell("references").splitlines():
            if not line.strip():
                continue
            url, _, title = line.strip().partition(" ")
            if not title.strip():
                errors.append(f"references: '{line.strip()}' needs a title after its URL")
                continue
            refs.append({"title": title.strip(), "url": url})
        data["references"] = refs
    if cell("image"):
        data["image"] = cell("image")
    if cell("chart"):
        try:
            chart = yaml.safe_load(cell("chart"))
        except yaml.YAMLError:
            chart = None
        if not isinstance(chart, dict):
            errors.append(
                "chart must be a mapping in YAML's flow style, like {size: 140GB, op: transfer}"
            )
        else:
            data["chart"] = chart
    return data, errors
