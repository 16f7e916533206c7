"""Computed questions: templates whose key is the ``/bandwidth`` estimator's or planner's answer.

A template (YAML in ``bot/bank/templates/``, its format in ``questions/template.schema.json``)
names parameters drawn from lists (model size, dtype, nodes, fabric...), a ``/bandwidth``
request written with them, and the named mistakes that give its distractors. Each mistake is
another request (the estimator run on the mistaken input: ``nics=1`` for a NIC per node), a
factor on the key (bits for bytes: an eighth), or both. A request that starts with ``plan``
asks the training-step planner, and its key is the step's seconds; its mistakes may also give a
formula over the planned step's parts (``step - bubble``: ignoring the pipeline bubble). An
instance is drawn from a seed, so the same ``template#seed`` id always gives the same question:
reveals, review and analytics rebuild it from the id alone.

Choices are rounded to two significant figures and must lie at least ``SPREAD`` apart (the next
is 1.5 times the last or more); a draw whose choices crowd is redrawn from the same seed's
stream, so the seed still decides everything.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import operator
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot.bandwidth import (
    Catalogue,
    Plan,
    PlanResult,
    estimate,
    load_catalogue,
    parse_plan,
    parse_request,
    plan,
)
from bot.engine.model import (
    CHOICE_KEYS,
    ChartSpec,
    Choice,
    Difficulty,
    PlanSpec,
    Question,
    Reference,
)
from bot.errors import ConfigError

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


class TemplateError(ConfigError, ValueError):
    """A template file that breaks the format; the message names the file and the field.

    A ConfigError: the command line reports it in one line, like a broken question file.
    """


@dataclass(frozen=True, slots=True)
class Mistake:
    """A named mistake: how it is made, and what the why_not says about it."""

    name: str
    why_not: str
    request: str = ""
    factor: float = 1.0
    ring: bool = False
    formula: str = ""  # planner templates: seconds from the planned step's parts


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
    derived: Mapping[str, str] = field(default_factory=dict)

    @property
    def planner(self) -> bool:
        """Return whether the key is the training-step planner's (a ``plan`` request)."""
        return is_plan_request(self.request)


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
            formula=str(m.get("formula", "")),
        )
        for m in data["mistakes"]
    )
    params = {str(k): tuple(v) for k, v in data["params"].items()}
    derived = {str(k): str(v) for k, v in data.get("derived", {}).items()}
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
        derived=derived,
    )
    formula_problems = _formula_problems(template)
    if formula_problems:
        raise TemplateError(f"{source}: " + "; ".join(formula_problems))
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
        - set(derived)
        - set(_DERIVED)
        - (set(_PLAN_DERIVED) if template.planner else set())
    )
    if unknown:
        raise TemplateError(f"{source}: unknown parameter(s) {', '.join(unknown)}")
    return template


_REQUIRED: tuple[str, ...] = ("id", "topic", "question", "request", "fabric", "params")
_REQUIRED += ("mistakes", "explanation", "references")
_ALLOWED = set(_REQUIRED) | {"tags", "difficulty", "derived"}


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
            elif "request" not in m and "factor" not in m and "formula" not in m:
                out.append(f"mistakes.{i}: give a request, a factor or both")
    refs = data["references"]
    if not isinstance(refs, list) or not refs:
        out.append("references: at least one")
    elif any(not isinstance(r, dict) or "title" not in r or "url" not in r for r in refs):
        out.append("references: each needs title and url")
    if data.get("difficulty", "medium") not in {d.value for d in Difficulty}:
        out.append("difficulty: easy, medium or hard")
    derived = data.get("derived", {})
    if not isinstance(derived, dict) or not all(isinstance(v, str) for v in derived.values()):
        out.append("derived: a mapping of names to formulas")
    return out


def _formula_problems(template: Template) -> list[str]:
    """Return what is wrong with a template's formulas: derived values, then mistakes'."""
    out = []
    known = set(template.params)
    for name, formula in template.derived.items():
        if name in known:
            out.append(f"derived.{name}: already a parameter")
        out += [f"derived.{name}: {p}" for p in formula_problems(formula, known)]
        known.add(name)
    for m in template.mistakes:
        if not m.formula:
            continue
        if not template.planner:
            out.append(f"mistake '{m.name}': a formula needs a plan request")
        elif m.ring:
            out.append(f"mistake '{m.name}': a formula and factor: ring do not mix")
        out += [f"mistake '{m.name}': {p}" for p in formula_problems(m.formula, set(STEP_PARTS))]
    return out


def schema() -> dict[str, Any]:
    """Return the JSON Schema of a template file."""
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


# ---------------------------------------------------------------- drawing


# Values every template may use besides its own parameters.
_DERIVED = ("ranks", "fabric_name", "key", "value", "size")
# And a planner template: the planned layout's micro-batches a replica, and its step's parts.
_PLAN_DERIVED = ("microbatches", "bubble_share")
# The parts of a planned step a mistake's formula may use, in seconds except m and p.
STEP_PARTS = {
    "step": "the step's seconds",
    "bubble": "the pipeline bubble's seconds",
    "compute": "the compute's seconds, all micro-batches",
    "exposed": "the communication not hidden behind compute",
    "m": "micro-batches a replica per step",
    "p": "pipeline stages",
}
_OPERATORS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


# What a formula may hold: numbers, names, + - * /, a minus sign and brackets.
_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.USub,
    ast.Name,
    ast.Load,
    ast.Constant,
    *_OPERATORS,
)


def is_plan_request(request: str) -> bool:
    """Return whether a template's request asks the planner (``plan MODEL ...``)."""
    return request.split(maxsplit=1)[:1] == ["plan"]


def formula_problems(formula: str, names: set[str]) -> list[str]:
    """Return what keeps a formula from being read: arithmetic on numbers and these names."""
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError:
        return [f"cannot read the formula {formula!r}"]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names:
            out.append(f"unknown name '{node.id}' in {formula!r}")
        elif not isinstance(node, _NODES) or (
            isinstance(node, ast.Constant) and not isinstance(node.value, int | float)
        ):
            out.append(f"only numbers, names, + - * / and brackets in {formula!r}")
            break
    return out


def evaluate(formula: str, names: Mapping[str, float]) -> float:
    """Return a formula's value (checked by ``formula_problems`` when the template loaded)."""

    def walk(node: ast.expr) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(names[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return float(_OPERATORS[type(node.op)](walk(node.left), walk(node.right)))
        raise TemplateError(f"cannot evaluate {formula!r}")

    return walk(ast.parse(formula, mode="eval").body)


def planned(request: str, fabric: str, catalogue: Catalogue) -> tuple[Plan, PlanResult]:
    """Return the planner's plan for a ``plan ...`` request, and its result on one fabric."""
    step = plan(parse_plan(f"{request.split(maxsplit=1)[1]} over={fabric}"), catalogue)
    for r in step.results:
        if r.key == fabric:
            return step, r
    raise TemplateError(f"the planner gave no result for {fabric}")


def step_parts(request: str, fabric: str, catalogue: Catalogue) -> dict[str, float]:
    """Return the parts of a planned step a formula may use (``STEP_PARTS``)."""
    step, mine = planned(request, fabric, catalogue)
    return {
        "step": mine.step_seconds,
        "bubble": mine.bubble_seconds,
        "compute": mine.compute_seconds,
        "exposed": mine.exposed_comm_seconds,
        "m": float(step.layout.microbatches),
        "p": float(step.layout.pp),
    }


def seconds(request: str, fabric: str, catalogue: Catalogue) -> float:
    """Return the estimator's seconds for a request on one interconnect (for ``plan ...``,
    the planner's step)."""
    if is_plan_request(request):
        return planned(request, fabric, catalogue)[1].step_seconds
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
    # The key's place among the sorted choices is drawn once, first, so every letter is keyed
    # as often; parameters are redrawn until some three of the mistakes put it there.
    position = rng.randrange(4)
    for _ in range(MAX_DRAWS):
        values = {k: rng.choice(v) for k, v in template.params.items()}
        for name, formula in template.derived.items():
            values[name] = _whole(evaluate(formula, values))
        values["_position"] = position
        found = _compute(template, values, catalogue, rng)
        if found is not None:
            request, key, mistakes = found
            del values["_position"]
            question = _question(template, seed, values, request, key, mistakes, catalogue)
            return Instance(template, seed, values, request, key, mistakes, question)
    raise TemplateError(f"{template.source}: no draw of {MAX_DRAWS} spreads its choices")


def _whole(value: float) -> float | int:
    """Return a derived value as a whole number when it is one (``{gpus}`` reads 64, not 64.0)."""
    return int(value) if float(value).is_integer() else value


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
    if template.planner:
        parts = step_parts(request, fabric, catalogue)
        values["microbatches"] = int(parts["m"])
        values["bubble_share"] = f"{parts['bubble'] / parts['step']:.0%}"
    key = seconds(request, fabric, catalogue)
    every = {
        m.name: mistake_seconds(m, values, key, fabric, catalogue, request=request)
        for m in template.mistakes
    }
    # ``below`` of the three mistakes give less than the key, the rest more; among the sets
    # of three whose choices spread, one is drawn.
    below = int(values["_position"])
    under = sorted(n for n, v in every.items() if 0 < v < key)
    over = sorted(n for n, v in every.items() if v > key)
    spreading = [
        [*low, *high]
        for low in itertools.combinations(under, below)
        for high in itertools.combinations(over, 3 - below)
        if spread_ok([key, *(every[n] for n in (*low, *high))])
    ]
    if not spreading:
        return None
    mistakes = {n: every[n] for n in rng.choice(spreading)}
    return request, key, mistakes


def mistake_seconds(
    mistake: Mistake,
    values: Mapping[str, Any],
    key: float,
    fabric: str,
    catalogue: Catalogue,
    *,
    request: str = "",
) -> float:
    """Return the seconds a mistake gives: its request run by the estimator (else the key),
    times its factor. A formula reads the parts of the step its request plans (else the
    template's own ``request``)."""
    if mistake.formula:
        asked = _fill(mistake.request, values) if mistake.request else request
        parts = step_parts(asked, fabric, catalogue)
        return evaluate(mistake.formula, parts) * mistake.factor
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
    named = "; ".join(f"{show(v)} is {name}" for name, v in sorted(mistakes.items()))
    if template.planner:
        return _planned_question(
            template, seed, shown, request, key, fabric, named, choices, answer, why_not, catalogue
        )
    result = estimate(parse_request(f"{request} over={fabric}"), catalogue)
    mine = next(r for r in result.results if r.key == fabric)
    working = (
        f"The estimator, asked `/bandwidth {request} over={fabric}`, gives {show(key)[6:]} on "
        f"{mine.name}: {result.assumptions.removeprefix('Assumes: ')} It runs {mine.algorithm} "
        f"at {mine.busbw_gbps:.0f} GB/s of bus bandwidth ({mine.effective_gbps:.0f} GB/s of "
        f"algorithm bandwidth). Each distractor is one named mistake: {named}."
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


def _planned_question(
    template: Template,
    seed: int,
    shown: Mapping[str, Any],
    request: str,
    key: float,
    fabric: str,
    named: str,
    choices: tuple[Choice, ...],
    answer: str,
    why_not: Mapping[str, str],
    catalogue: Catalogue,
) -> Question:
    """Return a planner template's question: the working is the planned step's parts."""
    step, mine = planned(request, fabric, catalogue)
    layout = step.layout
    pipeline = mine.step_seconds - mine.dp_exposed_seconds
    working = (
        f"The planner, asked `/bandwidth {request} over={fabric}`, gives a step of "
        f"{show(key)[6:]} on {mine.name}. Each of the {layout.pp} stages runs "
        f"m = {layout.microbatches} micro-batches a step; the one-forward-one-backward schedule "
        f"adds a bubble of p - 1 = {layout.pp - 1} micro-batch slots, (p-1)/(m+p-1) = "
        f"{layout.pp - 1}/{layout.microbatches + layout.pp - 1} of the "
        f"{show(pipeline)[6:]} pipeline: {show(mine.bubble_seconds)[6:]} in which each stage "
        f"idles in turn. Compute is {show(mine.compute_seconds)[6:]} and the communication "
        f"left exposed {show(mine.exposed_comm_seconds)[6:]}. "
        + "".join(f"{w} " for w in step.warnings)
        + f"{step.assumptions} Each distractor is one named mistake: {named}."
    )
    words = request.split()
    options = dict(w.split("=", 1) for w in words[2:] if "=" in w)
    return Question(
        id=f"{template.id}#{seed}",
        text=_fill(template.question, shown),
        choices=choices,
        answer=answer,
        short=f"{show(key)} a step on {mine.name}, by the /bandwidth planner.",
        full=_fill(template.explanation, shown) + "\n\n" + working,
        why_not=why_not,
        tags=template.tags,
        difficulty=template.difficulty,
        references=template.references,
        chart=ChartSpec(
            over=(fabric,),
            plan=PlanSpec(
                model=words[1],
                gpus=layout.gpus,
                tp=layout.tp,
                pp=layout.pp,
                cp=layout.cp,
                zero=layout.zero,
                seq=int(options["seq"]) if "seq" in options else None,
                batch=layout.global_batch,
                gpu=options.get("gpu"),
            ),
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
