"""The question form: one definition of the fields a person fills in to write a question.

The chat form (``/quiz add``) and the terminal's prompts (``quizbot questions add``) both ask
for these fields, with these labels and limits. What is filled in becomes the question format's
mapping (``data_of``) and passes the same checks as a file added with ``quizbot questions add``
(``check_submission``: the loader's rules, chat markup, a new id, the lint rules); each problem
comes back under the field it is about (``check_form``).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from bot.bank.bank import Problem, QuestionBank
from bot.bank.lint import Finding
from bot.bank.loader import ID_PATTERN, MAX_CHOICE_CHARS, MAX_FULL_CHARS, MAX_SHORT_CHARS
from bot.bank.workspace import check_submission, dump
from bot.engine.model import CHOICE_KEYS, Difficulty, Question

# The form's own bounds where the format sets none: what a card and a reply can show.
MAX_QUESTION_CHARS = 1000
MAX_ID_CHARS = 60
MAX_TAGS_CHARS = 200
MAX_SOURCE_CHARS = 300
# A lint rule about something the form asks for in a field of its own.
RULE_FIELDS = {"primary-source": "source_url", "why-not": "short"}
# Where a refusal about the question as a whole is shown.
WHOLE = "question"


@dataclass(frozen=True, slots=True)
class Field:
    """One field of the form: its name, label, whether it must be filled, and its bounds."""

    name: str  # the form's name of it: ``question``, ``A``..``E``, ``answer``, ``short``...
    label: str  # at most 45 characters (Discord's label)
    path: str  # the question format's key: ``choices.A``, ``explanation.short``
    required: bool = False
    max_chars: int | None = None
    long: bool = False  # several lines
    options: tuple[str, ...] = ()  # the only values allowed, if any
    hint: str = ""  # what to write (a placeholder): at most 100 characters


def _choice(key: str) -> Field:
    required = CHOICE_KEYS.index(key) < 2
    return Field(
        key,
        f"Choice {key}" + ("" if required else " (optional)"),
        f"choices.{key}",
        required=required,
        max_chars=MAX_CHOICE_CHARS,
        hint=f"{MAX_CHOICE_CHARS} characters at most: it must fit on a button",
    )


QUESTION_FIELDS: tuple[Field, ...] = (
    Field(
        "question",
        "Question",
        "question",
        required=True,
        max_chars=MAX_QUESTION_CHARS,
        long=True,
        hint="The question, as it is posted in the channel",
    ),
    *(_choice(key) for key in CHOICE_KEYS),
    Field(
        "answer",
        "Answer (the right choice's letter)",
        "answer",
        required=True,
        max_chars=1,
        options=CHOICE_KEYS,
        hint="A, B, C, D or E",
    ),
    Field(
        "short",
        "Short explanation",
        "explanation.short",
        required=True,
        max_chars=MAX_SHORT_CHARS,
        long=True,
        hint=f"Shown privately right after answering; {MAX_SHORT_CHARS} characters at most",
    ),
    Field(
        "full",
        "Full explanation",
        "explanation.full",
        required=True,
        max_chars=MAX_FULL_CHARS,
        long=True,
        hint="Posted in the thread when the round closes",
    ),
    Field(
        "id",
        "Id (a-z, 0-9 and -)",
        "id",
        required=True,
        max_chars=MAX_ID_CHARS,
        hint="A short name nobody else's question has, such as ring-allreduce-bytes",
    ),
    Field(
        "tags",
        "Tags (optional)",
        "tags",
        max_chars=MAX_TAGS_CHARS,
        hint="Separated by spaces: a-z, 0-9 and -",
    ),
    Field(
        "source_title",
        "Source title",
        "references.0.title",
        max_chars=MAX_SOURCE_CHARS,
        hint="The spec, paper or vendor document the answer rests on",
    ),
    Field(
        "source_url",
        "Source URL",
        "references.0.url",
        max_chars=MAX_SOURCE_CHARS,
        hint="https://... of that source",
    ),
    Field(
        "difficulty",
        "Difficulty (optional)",
        "difficulty",
        max_chars=6,
        options=tuple(d.value for d in Difficulty),
        hint="easy, medium (the default) or hard",
    ),
)
FIELDS_BY_NAME = {f.name: f for f in QUESTION_FIELDS}


@dataclass(frozen=True, slots=True)
class FormCheck:
    """A filled-in form, checked: the question's YAML text to save, or the errors per field."""

    body: str = ""
    question: Question | None = None
    errors: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Return whether the question may be saved."""
        return self.question is not None and not self.errors


def field_error(f: Field, value: str) -> str | None:
    """Return what is wrong with one field's value on its own (required, length, options)."""
    if not value:
        return "Required." if f.required else None
    if f.max_chars is not None and len(value) > f.max_chars:
        return f"{len(value)} characters; at most {f.max_chars}."
    if f.options and value not in f.options:
        return f"One of {', '.join(f.options)}."
    if f.name == "id" and ID_PATTERN.fullmatch(value) is None:
        return "Only a-z, 0-9 and -, starting with a letter or a digit."
    return None


def cleaned(values: Mapping[str, object]) -> dict[str, str]:
    """Return the form's values as text, trimmed; letters and difficulty as the format writes
    them (``b`` is ``B``, ``Hard`` is ``hard``)."""
    out: dict[str, str] = {}
    for f in QUESTION_FIELDS:
        value = values.get(f.name)
        text = value.strip() if isinstance(value, str) else ""
        if f.name == "answer":
            text = text.upper()
        elif f.name == "difficulty":
            text = text.lower()
        out[f.name] = text
    return out


def data_of(values: Mapping[str, str]) -> dict[str, Any]:
    """Return filled-in values as the question format's mapping (empty fields left out)."""
    data: dict[str, Any] = {}
    if values.get("id"):
        data["id"] = values["id"]
    if values.get("question"):
        data["question"] = values["question"]
    data["choices"] = {k: values[k] for k in CHOICE_KEYS if values.get(k)}
    if values.get("answer"):
        data["answer"] = values["answer"]
    explanation = {k: values[k] for k in ("short", "full") if values.get(k)}
    data["explanation"] = explanation
    if values.get("tags"):
        data["tags"] = values["tags"].replace(",", " ").split()
    if values.get("difficulty"):
        data["difficulty"] = values["difficulty"]
    if values.get("source_title") or values.get("source_url"):
        data["references"] = [
            {"title": values.get("source_title", ""), "url": values.get("source_url", "")}
        ]
    return data


def values_of(question: Question) -> dict[str, str]:
    """Return a question as the form's values: what a form opened on it is prefilled with."""
    values = {
        "id": question.id,
        "question": question.text,
        "answer": question.answer,
        "short": question.short,
        "full": question.full,
        "tags": " ".join(question.tags),
        "difficulty": question.difficulty.value,
    }
    values |= {c.key: c.text for c in question.choices}
    if question.references:
        values |= {
            "source_title": question.references[0].title,
            "source_url": question.references[0].url,
        }
    return values


def check_form(
    values: Mapping[str, object], current: QuestionBank, *, new_only: bool = True
) -> FormCheck:
    """Check a filled-in form for a workspace as ``quizbot questions add`` checks a file.

    Each field is checked on its own first (required, length, allowed values); then the
    question passes the loader's rules, the chat markup check, a new id and the lint rules
    (``check_submission`` with ``new_only``) against the workspace's bank as it is. Every
    problem comes back under the field it is about; nothing is saved by checking. An edit of a
    proposal (``new_only`` False) may keep an id the bank has.
    """
    given = cleaned(values)
    errors = {f.name: e for f in QUESTION_FIELDS if (e := field_error(f, given[f.name]))}
    if errors:
        return FormCheck(errors=errors)
    body = dump(data_of(given))
    checked = check_submission(body, "form", current, new_only=new_only)
    where = _fields_by_line(body)
    found: list[Problem | Finding] = [*checked.problems, *checked.warnings]
    for problem in found:
        rule = getattr(problem, "rule", "")
        name = RULE_FIELDS.get(rule) or where(problem.line)
        message = _plain(problem.message, FIELDS_BY_NAME.get(name))
        errors[name] = f"{errors[name]} {message}" if name in errors else message
    if errors or len(checked.questions) != 1:
        return FormCheck(body=body, errors=errors or {WHOLE: "Not one question."})
    return FormCheck(body=body, question=checked.questions[0])


_PATHS = {f.path: f.name for f in QUESTION_FIELDS}


def _fields_by_line(body: str) -> Any:
    """Return a lookup from a line of the dumped body to the form field written there."""
    starts: list[int] = []
    names: list[str] = []

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, SequenceNode):
            for n, item in enumerate(node.value):
                walk(item, f"{prefix}{n}.")
            return
        if not isinstance(node, MappingNode):
            return
        for key, value in node.value:
            if not isinstance(key, ScalarNode):
                continue
            path = f"{prefix}{key.value}"
            name = _PATHS.get(path)
            if name is not None:
                starts.append(key.start_mark.line + 1)
                names.append(name)
            walk(value, path + ".")

    walk(yaml.compose(body), "")
    order = sorted(range(len(starts)), key=lambda i: starts[i])
    starts, names = [starts[i] for i in order], [names[i] for i in order]

    def at(line: int) -> str:
        i = bisect.bisect_right(starts, line) - 1
        return names[i] if i >= 0 else WHOLE

    return at


# What a problem says that only fits a file: a form's refusal leaves it out.
_FILE_ONLY = " (import the file to make a new revision of it)"


def _plain(message: str, field: Field | None) -> str:
    """Return a problem's message as the form shows it beside its field: without the field's
    key in front (the label names it), and without advice that only fits a file."""
    text = message.replace(_FILE_ONLY, "")
    if field is not None and text.startswith(f"{field.path} "):
        text = text[len(field.path) + 1 :]
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith(".") else text + "."


__all__ = [
    "FIELDS_BY_NAME",
    "QUESTION_FIELDS",
    "WHOLE",
    "Field",
    "FormCheck",
    "check_form",
    "cleaned",
    "data_of",
    "field_error",
    "values_of",
]
