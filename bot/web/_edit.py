"""The question page's edit form: its fields from a question, a question's text from its fields,
and each problem the checks find placed next to the field it is about.

What a form submits is written as the YAML of one question and checked by the same code as
``quizbot questions import`` (``bot.bank.workspace.check_submission``: the loader's rules, the
chat markup check, the lint rules), so the dashboard accepts exactly what the command line does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.bank.workspace import dump, question_data
from bot.engine.model import CHOICE_KEYS, Difficulty, Question

# Empty reference rows the form offers beyond a question's own.
SPARE_REFERENCES = 1
MAX_REFERENCES = 10
# Where a problem with no field of its own is shown: above the form.
GENERAL = "general"
_TAG_SPLIT = re.compile(r"[\s,]+")


@dataclass
class Form:
    """What the edit form shows: each field's value, and the problems found in each."""

    values: dict[str, str]
    references: list[tuple[str, str]]
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)

    def add(self, where: dict[str, list[str]], name: str, message: str) -> None:
        """Note a message against a field."""
        where.setdefault(name, []).append(message)

    @property
    def failed(self) -> bool:
        """Return whether any problem or warning was found."""
        return bool(self.errors or self.warnings)


def form_of(q: Question) -> Form:
    """Return the form prefilled with a question's fields."""
    values = {
        "question": q.text,
        "answer": q.answer,
        "short": q.short,
        "full": q.full,
        "tags": " ".join(q.tags),
        "difficulty": q.difficulty.value,
    }
    for c in q.choices:
        values[f"choice_{c.key}"] = c.text
    for key, why in q.why_not.items():
        values[f"why_not_{key}"] = why
    refs = [(r.title, r.url) for r in q.references]
    return Form(values, refs + [("", "")] * SPARE_REFERENCES)


def _text(posted: Mapping[str, Any], name: str) -> str:
    value = posted.get(name, "")
    # A browser sends a text area's line ends as CRLF; the bank's text has LF.
    return value.replace("\r\n", "\n").replace("\r", "\n") if isinstance(value, str) else ""


def posted_form(posted: Mapping[str, Any]) -> Form:
    """Return the form as it was submitted (to show it again with its problems)."""
    names = ["question", "answer", "short", "full", "tags", "difficulty"]
    names += [f"choice_{k}" for k in CHOICE_KEYS] + [f"why_not_{k}" for k in CHOICE_KEYS]
    values = {n: _text(posted, n) for n in names}
    refs = []
    for n in range(MAX_REFERENCES):
        title, url = _text(posted, f"ref_title_{n}"), _text(posted, f"ref_url_{n}")
        if title.strip() or url.strip():
            refs.append((title, url))
    return Form(values, refs + [("", "")] * SPARE_REFERENCES)


def form_yaml(form: Form, qid: str, current: Question) -> str:
    """Return the submitted fields as the YAML text of one question with the id ``qid``.

    The image and the chart, which the form does not edit, are kept as the current question
    has them. A field left empty is written empty, so the loader names it.
    """
    v = form.values
    data: dict[str, Any] = {"id": qid, "question": v["question"]}
    data["choices"] = {k: v[f"choice_{k}"].strip() for k in CHOICE_KEYS if v[f"choice_{k}"].strip()}
    data["answer"] = v["answer"].strip()
    explanation: dict[str, Any] = {"short": v["short"], "full": v["full"]}
    why_not = {k: v[f"why_not_{k}"] for k in CHOICE_KEYS if v[f"why_not_{k}"].strip()}
    if why_not:
        explanation["why_not"] = why_not
    data["explanation"] = explanation
    tags = [t for t in _TAG_SPLIT.split(v["tags"]) if t]
    if tags:
        data["tags"] = tags
    if v["difficulty"].strip() and v["difficulty"].strip() != Difficulty.MEDIUM.value:
        data["difficulty"] = v["difficulty"].strip()
    refs = [{"title": t.strip(), "url": u.strip()} for t, u in form.references if t or u]
    if refs:
        data["references"] = refs
    kept = question_data(current)
    for name in ("image", "chart"):
        if name in kept:
            data[name] = kept[name]
    return dump(data)


# ---------------------------------------------------------------- problems next to fields


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _walk(node: Node, prefix: str, out: list[tuple[int, str]]) -> None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                name = f"{prefix}{key.value}"
                out.append((_line(key), name))
                _walk(value, name + ".", out)
    elif isinstance(node, SequenceNode):
        for n, item in enumerate(node.value):
            out.append((_line(item), f"{prefix}{n}"))
            _walk(item, f"{prefix}{n}.", out)


def key_lines(text: str) -> list[tuple[int, str]]:
    """Return (line, dotted key) for every key of the YAML text, in line order."""
    found: list[tuple[int, str]] = []
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return found
    if root is not None:
        _walk(root, "", found)
    return sorted(found)


def field_of(key: str) -> str:
    """Return the form field a dotted key of the question's YAML is shown next to."""
    parts = key.split(".")
    head = parts[0]
    if head == "choices":
        return f"choice_{parts[1]}" if len(parts) > 1 and parts[1] in CHOICE_KEYS else "choices"
    if head == "explanation":
        if len(parts) == 1:
            return "short"
        if parts[1] == "why_not":
            if len(parts) > 2 and parts[2] in CHOICE_KEYS:
                return f"why_not_{parts[2]}"
            return "why_not"
        return parts[1] if parts[1] in ("short", "full") else GENERAL
    if head in ("question", "answer", "tags", "difficulty", "references"):
        return head
    return GENERAL


def place(lines: list[tuple[int, str]], line: int) -> str:
    """Return the field of the last key at or before a line (GENERAL when none is)."""
    found = GENERAL
    for at, key in lines:
        if at > line:
            break
        found = field_of(key)
    return found


def note_problems(
    form: Form,
    text: str,
    problems: Iterable[tuple[int, str]],
    warnings: Iterable[tuple[int, str]],
) -> None:
    """Place each (line, message) problem and lint warning next to its field of the form."""
    lines = key_lines(text)
    for line, message in problems:
        form.add(form.errors, place(lines, line), message)
    for line, message in warnings:
        form.add(form.warnings, place(lines, line), message)
