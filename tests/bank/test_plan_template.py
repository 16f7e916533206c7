"""The planner's computed question: the key is ``/bandwidth plan``'s own step time, each
distractor its named mistake's (ignoring the pipeline bubble first of all), every instance lints
clean, and a template's formulas are checked when it loads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from bot.bandwidth import PlanResult, load_catalogue, parse_plan, plan
from bot.bank import lint as L
from bot.bank import templates as T

CATALOGUE = load_catalogue()
(TEMPLATE,) = [t for t in T.load_templates() if t.id == "pipeline-bubble-step"]
SOURCE = T.TEMPLATES_DIR / "09-pipeline-bubble-step.yaml"
SEEDS = range(40)


def planner(values: dict[str, object], extra: str = "") -> tuple[PlanResult, int, int]:
    """Ask the planner for the drawn layout on its own; return the fabric's step, m and p."""
    pp, dp, per_replica = int(values["pp"]), int(values["dp"]), int(values["per_replica"])  # type: ignore[call-overload]
    fabric = str(values["fabric"])
    text = f"llama3-70b gpus={8 * pp * dp} tp=8 pp={pp} batch={per_replica * dp} {extra}"
    step = plan(parse_plan(f"{text} over={fabric}"), CATALOGUE)
    (mine,) = [r for r in step.results if r.key == fabric]
    return mine, step.layout.microbatches, step.layout.pp


# Each mistake, worked out here from the planner's answer rather than from the template's formula.
EXPECTED: dict[str, Callable[[dict[str, object]], float]] = {
    "ignoring the pipeline bubble": lambda v: (r := planner(v)[0]).step_seconds - r.bubble_seconds,
    "the bubble counted for the forward and the backward pass apart": lambda v: (
        (r := planner(v)[0]).step_seconds + r.bubble_seconds
    ),
    "the stages run one after another": lambda v: (
        (x := planner(v))[0].step_seconds + (x[1] - 1) * x[0].bubble_seconds
    ),
    "a whole step for every micro-batch": lambda v: (x := planner(v))[0].step_seconds * x[1],
    "one micro-batch's slot for the whole step": lambda v: (
        ((x := planner(v))[0].step_seconds - x[0].bubble_seconds) / x[1]
    ),
    "the GPU's peak FLOP rate for its achieved rate": lambda v: (
        planner(v, "efficiency=1")[0].step_seconds
    ),
    "the peak FLOP rate, and ignoring the bubble": lambda v: (
        (r := planner(v, "efficiency=1")[0]).step_seconds - r.bubble_seconds
    ),
    "full activation recomputation charged": lambda v: planner(v, "recompute")[0].step_seconds,
}


def test_the_template_is_the_planners_and_names_every_mistake() -> None:
    assert TEMPLATE.planner
    assert {m.name for m in TEMPLATE.mistakes} == set(EXPECTED)


def test_key_is_the_planners_own_step_time() -> None:
    for seed in SEEDS:
        inst = T.draw(TEMPLATE, seed, CATALOGUE)
        want = planner(dict(inst.values))[0].step_seconds
        assert inst.key_seconds == want
        assert inst.question.answer_choice.text == T.show(want)


def test_each_named_mistake_produces_its_distractor() -> None:
    for seed in SEEDS:
        inst = T.draw(TEMPLATE, seed, CATALOGUE)
        q = inst.question
        assert len(inst.mistakes) == 3
        for name, value in inst.mistakes.items():
            want = EXPECTED[name](dict(inst.values))
            assert value == pytest.approx(want, rel=1e-12)
            (letter,) = [c.key for c in q.choices if c.text == T.show(want)]
            assert letter != q.answer
            assert q.why_not[letter].startswith(T.show(want))
            assert f"{T.show(want)} is {name}" in q.full


def test_ignoring_the_bubble_is_a_distractor_in_many_instances() -> None:
    named = Counter(n for seed in range(100) for n in T.draw(TEMPLATE, seed, CATALOGUE).mistakes)
    assert named["ignoring the pipeline bubble"] >= 25, named


def test_the_stages_in_turn_are_m_times_p_slots() -> None:
    # The formula's meaning: without pipelining a step is m x p slots, plus the data-parallel
    # reduction left after the backward pass; the bubble is p - 1 slots.
    for values in (
        {"pp": 4, "dp": 2, "per_replica": 8, "fabric": "ib-ndr"},
        {"pp": 8, "dp": 4, "per_replica": 2, "fabric": "roce-400"},
    ):
        r, m, p = planner(values)  # type: ignore[arg-type]
        slot = r.bubble_seconds / (p - 1)
        assert r.step_seconds + (m - 1) * r.bubble_seconds == pytest.approx(
            m * p * slot + r.dp_exposed_seconds
        )


def test_instances_lint_clean_show_the_working_and_chart_the_plan() -> None:
    for seed in range(60):
        inst = T.draw(TEMPLATE, seed, CATALOGUE)
        q = inst.question
        report = L.lint([q])
        assert report.findings == () and report.ok, [str(f) for f in report.findings]
        fabric = str(inst.values["fabric"])
        assert f"`/bandwidth {inst.request} over={fabric}`" in q.full
        r, m, p = planner(dict(inst.values))
        assert f"m = {m} micro-batches" in q.full and f"({p - 1}/{m + p - 1})" not in q.full
        assert f"{p - 1}/{m + p - 1} of the" in q.full
        assert T.show(r.bubble_seconds)[6:] in q.full
        assert q.chart is not None and q.chart.plan is not None
        assert q.chart.over == (fabric,)
        assert (q.chart.plan.model, q.chart.plan.pp, q.chart.plan.tp) == ("llama3-70b", p, 8)
        assert q.chart.plan.gpus == 8 * int(inst.values["pp"]) * int(inst.values["dp"])


def test_the_same_id_rebuilds_the_same_planned_question() -> None:
    first = T.draw(TEMPLATE, 11, CATALOGUE)
    assert T.rebuild(first.id, [TEMPLATE], CATALOGUE) == first.question


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"derived": {"gpus": "8 * pp * nope"}}, "unknown name 'nope'"),
        ({"derived": {"gpus": "__import__('os')"}}, "only numbers, names"),
        ({"derived": {"pp": "2"}}, "derived.pp: already a parameter"),
        ({"derived": {"gpus": "8 *"}}, "cannot read the formula"),
        ({"derived": ["gpus"]}, "derived: a mapping of names to formulas"),
    ],
)
def test_a_broken_derived_value_gets_a_clear_message(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    data = yaml.safe_load(SOURCE.read_text())
    data.update(change)
    with pytest.raises(T.TemplateError, match=message.replace("(", r"\(")):
        T.template_from(data, "x.yaml")


def test_a_broken_formula_gets_a_clear_message() -> None:
    data = yaml.safe_load(SOURCE.read_text())
    data["mistakes"][0]["formula"] = "step - bubbles"
    with pytest.raises(T.TemplateError, match="unknown name 'bubbles'"):
        T.template_from(data, "x.yaml")
    data["mistakes"][0]["formula"] = "step.real"
    with pytest.raises(T.TemplateError, match="only numbers, names"):
        T.template_from(data, "x.yaml")


def test_a_formula_needs_a_plan_request() -> None:
    data = yaml.safe_load((T.TEMPLATES_DIR / "04-buffer-allreduce-ring.yaml").read_text())
    data["mistakes"][0]["formula"] = "step - bubble"
    with pytest.raises(T.TemplateError, match="a formula needs a plan request"):
        T.template_from(data, "x.yaml")


@pytest.mark.parametrize(
    ("formula", "value"),
    [("step - bubble", 3.0), ("step + (m - 1) * bubble", 7.0), ("-m / 4 + p", 7.0)],
)
def test_formulas_follow_arithmetic(formula: str, value: float) -> None:
    assert T.evaluate(formula, {"step": 4.0, "bubble": 1.0, "m": 4.0, "p": 8.0}) == value
