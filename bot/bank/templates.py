"""Computed questions: templates whose key is the ``/bandwidth`` estimator's own answer.

A template (YAML in ``bot/bank/templates/``, its format in ``questions/template.schema.json``)
names parameters drawn from lists (model size, dtype, nodes, fabric...), a ``/bandwidth``
request written with them, and the named mistakes that give its distractors. Each mistake is
either another request (the estimator run on the mistaken input: ``nics=1`` for a NIC per node)
or a factor on the key (bits for bytes: an eighth). An instance is drawn from a seed, so the
same ``template#seed`` id always gives the same question: reveals, review and analytics rebuild
it from the id alone.

Choices are rounded to two significant figures and must lie at least ``SPREAD`` apart (the next
is 1.5 times the last or more); a draw whose choices crowd is redrawn from the same seed's
stream, so the seed still decides everything.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.bandwidth import Catalogue, estimate, load_catalogue, parse_request
from bot.engine.model import CHOICE_KEYS, ChartSpec, Choice, Difficulty, Question, Reference

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
SCHEMA = Path(__file__).resolve().parents[2] / "questions" / "template.schema.json"
# No two choices closer than this ratio.
SPREAD = 1.5
# Draws tried for one seed before the template is judged unable to spread its choices.
MAX_DRAWS = 200
# Seeds run from 0 to this: an id with a larger seed names no question (nine digits at most, so
# an id fits a button and a stored round).
MAX_SEED = 999_999_999
_FIELD = re.compile(r"\{([a-z_]+)\}")


class TemplateError(ValueError):
    """A template file that breaks the format; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Mistake:
    """A named mistake: how it is made, and what the why_not says about it."""

    name: str
    why_not: str
    request: str = ""
    factor: float = 1.0
    ring: bool = False


@dataclass(frozen=True, slots=True)
class Template:
    """A question whose numbers are drawn and whose key the estimator computes."""

    id: str
    topic: str
    question: str
    request: str
    fabric: str
    params: Mapping[str, tuple[Any, ...]]
    mistakes: tuple[Mistake, ...]
    explanation: str
    tags: tuple[str, ...]
    difficulty: Difficulty
    references: tuple[Reference, ...]
    source: str = ""


@dataclass(frozen=True, slots=True)
class Instance:
    """One drawn question: its parameters, the key and each mistake's value, in seconds."""

    template: Template
    seed: int
    values: Mapping[str, Any]
    request: str
    key_seconds: float
    mistakes: Mapping[str, float]
    question: Question

    @property
    def id(self) -> str:
        """Return the id that rebuilds this instance: ``template#seed``."""
        return f"{self.template.id}#{self.seed}"


# ---------------------------------------------------------------- loading


def load_templates(folder: Path = TEMPLATES_DIR) -> list[Template]:
    """Return every template in the folder, sorted by file name; raise on a broken one."""
    out = [parse_template(path) for path in sorted(folder.glob("*.yaml"))]
    seen: dict[str, str] = {}
    for t in out:
        if t.id in seen:
            raise TemplateError(f"{t.source}: duplicate id '{t.id}' (first in {seen[t.id]})")
        seen[t.id] = t.source
    return out


def parse_template(path: Path) -> Template:
    """Return the template in one file, checked against the format."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TemplateError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise TemplateError(f"{path}: a template is a mapping of fields")
    return template_from(data, str(path))


def template_from(data: Mapping[str, Any], source: str = "") -> Template:
    """Return a template from its parsed YAML, checking every field the schema names."""
    problems = list(_problems(data))
    if problems:
        raise TemplateError(f"{source}: " + "; ".join(problems))
    mistakes = tuple(
        Mistake(
            name=str(m["name"]),
            why_not=str(m["why_not"]),
            request=str(m.get("request", "")),
            factor=1.0 if m.get("factor") == "ring" else float(m.get("factor", 1.0)),
            ring=m.get("factor") == "ring",
        )
        for m in data["mistakes"]
    )
    params = {str(k): tuple(v) for k, v in data["params"].items()}
    template = Template(
        id=str(data["id"]),
        topic=str(data["topic"]),
        question=str(data["question"]),
        request=str(data["request"]),
        fabric=str(data["fabric"]),
        params=params,
        mistakes=mistakes,
        explanation=str(data["explanation"]),
        tags=tuple(str(t) for t in data.get("tags", ())),
        difficulty=Difficulty(data.get("difficulty", "medium")),
        references=tuple(Reference(str(r["title"]), str(r["url"])) for r in data["references"]),
        source=source,
    )
    unknown = sorted(
        {
            name
            for text in (
                template.question,
                template.request,
                template.fabric,
                template.explanation,
                *(m.request for m in mistakes),
                *(m.why_not for m in mistakes),
            )
            for name in _FIELD.findall(text)
        }
        - set(params)
        - set(_DERIVED)
    )
    if unknown:
        raise TemplateError(f"{source}: unknown parameter(s) {', '.join(unknown)}")
    return template


_REQUIRED: tuple[str, ...] = ("id", "topic", "question", "request", "fabric", "params")
_REQUIRED += ("mistakes", "explanation", "references")
_ALLOWED = set(_REQUIRED) | {"tags", "difficulty"}


def _problems(data: Mapping[str, Any]) -> list[str]:
    """Return what is wrong with a template's fields, as the schema would say it."""
    out = [f"missing field '{k}'" for k in _REQUIRED if k not in data]
    out += [f"unknown field '{k}'" for k in data if k not in _ALLOWED]
    if out:
        return out
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", str(data["id"])):
        out.append("id: lower-case letters, digits and hyphens")
    params = data["params"]
    if not isinstance(params, dict) or not params:
        out.append("params: a mapping of names to non-empty lists")
    else:
        out += [
            f"params.{k}: a non-empty list"
            for k, v in params.items()
            if not isinstance(v, list) or not v
        ]
    mistakes = data["mistakes"]
    if not isinstance(mistakes, list) or len(mistakes) < 3:
        out.append("mistakes: three or more, three drawn per instance")
    else:
        for i, m in enumerate(mistakes):
            if not isinstance(m, dict) or "name" not in m or "why_not" not in m:
                out.append(f"mistakes.{i}: needs name and why_not")
            elif "request" not in m and "factor" not in m:
                out.append(f"mistakes.{i}: give a request, a factor or both")
    refs = data["references"]
    if not isinstance(refs, list) or not refs:
        out.append("references: at least one")
    elif any(not isinstance(r, dict) or "title" not in r or "url" not in r for r in refs):
        out.append("references: each needs title and url")
    if data.get("difficulty", "medium") not in {d.value for d in Difficulty}:
        out.append("difficulty: easy, medium or hard")
    return out


def schema() -> dict[str, Any]:
    """Return the JSON Schema of a template file."""
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


# ---------------------------------------------------------------- drawing


# Values every template may use besides its own parameters.
_DERIVED = ("ranks", "fabric_name", "key", "value", "size")


def seconds(request: str, fabric: str, catalogue: Catalogue) -> float:
    """Return the estimator's seconds for a request on one interconnect."""
    result = estimate(parse_request(f"{request} over={fabric}"), catalogue)
    for r in result.results:
        if r.key == fabric:
            return r.seconds
    raise TemplateError(f"the estimator gave no result for {fabric}")


def round_sig(value: float, digits: int = 2) -> float:
    """Return a value rounded to this many significant figures."""
    if value <= 0:
        return value
    return round(value, digits - 1 - math.floor(math.log10(value)))


def show(value: float) -> str:
    """Return seconds as a choice: two significant figures and a time unit (``About 1.4 s``)."""
    for limit, scale, unit in ((1e-3, 1e6, "µs"), (1.0, 1e3, "ms"), (120.0, 1.0, "s")):
        if value < limit:
            return f"About {_number(round_sig(value * scale))} {unit}"
    return f"About {_number(round_sig(value / 60))} min"


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:g}"


def shown_value(value: float) -> float:
    """Return the seconds a choice shows, after rounding (the figure players compare)."""
    from bot.bank.lint import quantity

    found = quantity(show(value))
    assert found is not None
    return found.value


def spread_ok(values: Sequence[float]) -> bool:
    """Return whether the shown values lie at least ``SPREAD`` apart, pairwise."""
    shown = sorted(shown_value(v) for v in values)
    return all(b >= SPREAD * a for a, b in itertools.pairwise(shown)) and shown[0] > 0


def draw(template: Template, seed: int, catalogue: Catalogue | None = None) -> Instance:
    """Return the instance of a template for a seed; the same seed gives the same question."""
    catalogue = catalogue or load_catalogue()
    rng = random.Random(f"{template.id}#{seed}")
    for _ in range(MAX_DRAWS):
        values = {k: rng.choice(v) for k, v in template.params.items()}
        values["_position"] = rng.randrange(4)
        found = _compute(template, values, catalogue, rng)
        if found is not None:
            request, key, mistakes = found
            del values["_position"]
            question = _question(template, seed, values, request, key, mistakes, catalogue)
            return Instance(template, seed, values, request, key, mistakes, question)
    raise TemplateError(f"{template.source}: no draw of {MAX_DRAWS} spreads its choices")


def _fill(text: str, values: Mapping[str, Any]) -> str:
    return _FIELD.sub(lambda m: str(values[m.group(1)]), text)


def _compute(
    template: Template, values: dict[str, Any], catalogue: Catalogue, rng: random.Random
) -> tuple[str, float, dict[str, float]] | None:
    """Return the request, key and each mistake's seconds, or None when choices crowd."""
    values["ranks"] = int(values.get("nodes", 1)) * int(values.get("gpus", 1))
    fabric = _fill(template.fabric, values)
    values["fabric_name"] = catalogue.get(fabric).name
    request = _fill(template.request, values)
    key = seconds(request, fabric, catalogue)
    every = {m.name: mistake_seconds(m, values, key, fabric, catalogue) for m in template.mistakes}
    # The key's place among the sorted choices is drawn first, so every letter is keyed about
    # as often: ``below`` mistakes that give less than the key, the rest more.
    below = int(values["_position"])
    under = sorted(n for n, v in every.items() if v < key)
    over = sorted(n for n, v in every.items() if v > key)
    if len(under) < below or len(over) < 3 - below:
        return None
    chosen = [*rng.sample(under, below), *rng.sample(over, 3 - below)]
    mistakes = {n: every[n] for n in chosen}
    if not spread_ok([key, *mistakes.values()]):
        return None
    return request, key, mistakes


def mistake_seconds(
    mistake: Mistake, values: Mapping[str, Any], key: float, fabric: str, catalogue: Catalogue
) -> float:
    """Return the seconds a mistake gives: its request run by the estimator (else the key),
    times its factor."""
    base = seconds(_fill(mistake.request, values), fabric, catalogue) if mistake.request else key
    if mistake.ring:
        # Forgetting the ring's 2(n-1)/n: the buffer counted once instead of about twice.
        n = int(values["ranks"])
        return base * n / (2 * (n - 1))
    return base * mistake.factor


def _question(
    template: Template,
    seed: int,
    values: Mapping[str, Any],
    request: str,
    key: float,
    mistakes: Mapping[str, float],
    catalogue: Catalogue,
) -> Question:
    """Return the question players see: choices sorted, each distractor its mistake's value."""
    entries = sorted([(key, ""), *((v, n) for n, v in mistakes.items())])
    letters = CHOICE_KEYS[: len(entries)]
    choices = tuple(Choice(k, show(v)) for k, (v, _) in zip(letters, entries, strict=True))
    answer = next(k for k, (_, name) in zip(letters, entries, strict=True) if not name)
    by_name = {m.name: m for m in template.mistakes}
    shown = {**values, "key": show(key)}
    why_not = {
        k: _fill(by_name[name].why_not, {**shown, "value": show(v)})
        for k, (v, name) in zip(letters, entries, strict=True)
        if name
    }
    fabric = _fill(template.fabric, values)
    result = estimate(parse_request(f"{request} over={fabric}"), catalogue)
    mine = next(r for r in result.results if r.key == fabric)
    working = (
        f"The estimator, asked `/bandwidth {request} over={fabric}`, gives {show(key)[6:]} on "
        f"{mine.name}: {result.assumptions.removeprefix('Assumes: ')} It runs {mine.algorithm} "
        f"at {mine.busbw_gbps:.0f} GB/s of bus bandwidth ({mine.effective_gbps:.0f} GB/s of "
        "algorithm bandwidth). Each distractor is one named mistake: "
        + "; ".join(f"{show(v)} is {name}" for name, v in sorted(mistakes.items()))
        + "."
    )
    req = parse_request(request)
    return Question(
        id=f"{template.id}#{seed}",
        text=_fill(template.question, shown),
        choices=choices,
        answer=answer,
        short=f"{show(key)} on {mine.name}, by the /bandwidth estimator.",
        full=_fill(template.explanation, shown) + "\n\n" + working,
        why_not=why_not,
        tags=template.tags,
        difficulty=template.difficulty,
        references=template.references,
        chart=ChartSpec(
            size=_size_text(request),
            op=req.op,
            nodes=req.nodes,
            gpus=req.gpus,
            over=(fabric,),
        ),
        source=template.source,
        line=1,
    )


_OPS = ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "transfer")


def _size_text(request: str) -> str:
    """Return the size part of a request: the words before its operation or first option."""
    out = []
    for word in request.split():
        if word in _OPS or "=" in word:
            break
        out.append(word)
    return " ".join(out)


def parse_instance_id(question_id: str) -> tuple[str, int] | None:
    """Return (template id, seed) for a computed question's id, or None for a bank question."""
    head, sep, tail = question_id.partition("#")
    # One spelling per instance: no sign, no leading zero, ASCII digits only.
    if not sep or not (tail.isascii() and tail.isdigit()) or str(int(tail)) != tail:
        return None
    if int(tail) > MAX_SEED:
        return None
    return head, int(tail)


def rebuild(
    question_id: str, templates: Sequence[Template], catalogue: Catalogue | None = None
) -> Question | None:
    """Return the question a computed id names, drawn again from its seed; None if unknown."""
    parsed = parse_instance_id(question_id)
    if parsed is None:
        return None
    by_id = {t.id: t for t in templates}
    template = by_id.get(parsed[0])
    if template is None:
        return None
    return draw(template, parsed[1], catalogue).question
