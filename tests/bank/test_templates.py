"""Computed questions: each template's key is the estimator's own answer, each distractor its
named mistake's, every instance lints clean and spreads its choices 1.5x apart."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml

from bot.bandwidth import estimate, load_catalogue, parse_request
from bot.bank import lint as L
from bot.bank import templates as T

CATALOGUE = load_catalogue()
TEMPLATES = T.load_templates()
IDS = [t.id for t in TEMPLATES]
# The templates the estimator answers (tests/bank/test_plan_template.py checks the planner's).
ESTIMATED = [t for t in TEMPLATES if not t.planner]
ESTIMATED_IDS = [t.id for t in ESTIMATED]
SEEDS = range(40)


def estimator_seconds(request: str, fabric: str) -> float:
    """Return the estimator's seconds for the request on one fabric, asked independently."""
    result = estimate(parse_request(f"{request} over={fabric}"), CATALOGUE)
    (mine,) = [r for r in result.results if r.key == fabric]
    return mine.seconds


def fill(text: str, values: dict[str, object]) -> str:
    return re.sub(r"\{([a-z_]+)\}", lambda m: str(values[m.group(1)]), text)


def test_at_least_eight_templates_ship_and_each_file_matches_the_schema() -> None:
    assert len(TEMPLATES) >= 8
    schema = T.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    for path in sorted(T.TEMPLATES_DIR.glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)


@pytest.mark.parametrize("template", ESTIMATED, ids=ESTIMATED_IDS)
def test_key_is_the_estimators_own_answer(template: T.Template) -> None:
    for seed in SEEDS:
        inst = T.draw(template, seed, CATALOGUE)
        fabric = str(inst.values["fabric"])
        want = estimator_seconds(fill(template.request, dict(inst.values)), fabric)
        assert inst.key_seconds == want
        assert inst.question.answer_choice.text == T.show(want)
        assert inst.question.chart is not None
        assert inst.question.chart.over == (fabric,)


@pytest.mark.parametrize("template", ESTIMATED, ids=ESTIMATED_IDS)
def test_each_named_mistake_produces_its_distractor(template: T.Template) -> None:
    for seed in SEEDS:
        inst = T.draw(template, seed, CATALOGUE)
        q = inst.question
        values = dict(inst.values)
        chosen = [m for m in template.mistakes if m.name in inst.mistakes]
        assert len(chosen) == 3
        for mistake in chosen:
            base = inst.key_seconds
            if mistake.request:
                base = estimator_seconds(fill(mistake.request, values), str(values["fabric"]))
            if mistake.ring:
                n = int(values["nodes"]) * int(values["gpus"])
                want = base * n / (2 * (n - 1))
            else:
                want = base * mistake.factor
            assert inst.mistakes[mistake.name] == pytest.approx(want)
            (letter,) = [c.key for c in q.choices if c.text == T.show(want)]
            assert letter != q.answer
            # Its why_not names the choice and says which mistake gives it.
            assert q.why_not[letter].startswith(T.show(want))
            assert fill(mistake.why_not, {**values, "value": T.show(want)}) == q.why_not[letter]
            assert f"{T.show(want)} is {mistake.name}" in q.full


@pytest.mark.parametrize("template", TEMPLATES, ids=IDS)
def test_instances_lint_clean_and_spread_their_choices(template: T.Template) -> None:
    # benchmarks/templates.py runs 1,000 instances of each and prints the figures.
    for seed in range(100):
        q = T.draw(template, seed, CATALOGUE).question
        report = L.lint([q])
        assert report.findings == (), [str(f) for f in report.findings]
        assert report.ok
        shown = sorted(T.shown_value(c_value) for c_value in _values(q))
        assert all(b >= 1.5 * a for a, b in itertools.pairwise(shown)), q.choices


def _values(q: object) -> list[float]:
    from bot.bank.lint import quantity

    out = []
    for c in q.choices:  # type: ignore[attr-defined]
        found = quantity(c.text)
        assert found is not None and found.dimension == "time"
        out.append(found.value)
    return out


def test_the_same_id_rebuilds_the_same_question() -> None:
    first = T.draw(TEMPLATES[0], 7, CATALOGUE)
    assert first.id == f"{TEMPLATES[0].id}#7"
    again = T.rebuild(first.id, TEMPLATES, CATALOGUE)
    assert again == first.question
    assert T.draw(TEMPLATES[0], 8, CATALOGUE).question != first.question
    assert T.rebuild("multinode-interconnect", TEMPLATES, CATALOGUE) is None
    assert T.rebuild("no-such-template#3", TEMPLATES, CATALOGUE) is None
    assert T.parse_instance_id("a#x") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"mistakes": []}, "mistakes: three or more"),
        ({"extra": 1}, "unknown field 'extra'"),
        ({"id": "Bad Id"}, "id: lower-case"),
        ({"question": "How long for {nope}?"}, "unknown parameter(s) nope"),
        ({"difficulty": "brutal"}, "difficulty: easy, medium or hard"),
    ],
)
def test_a_broken_template_gets_a_clear_message(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    source = T.TEMPLATES_DIR / "04-buffer-allreduce-ring.yaml"
    data = yaml.safe_load(source.read_text())
    data.update(change)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(T.TemplateError, match=re.escape(message)):
        T.parse_template(path)


def test_a_mistake_with_neither_a_request_nor_a_factor_is_refused() -> None:
    data = yaml.safe_load((T.TEMPLATES_DIR / "04-buffer-allreduce-ring.yaml").read_text())
    del data["mistakes"][0]["factor"]
    with pytest.raises(T.TemplateError, match="give a request, a factor or both"):
        T.template_from(data, "x.yaml")


@pytest.mark.parametrize("template", TEMPLATES, ids=IDS)
def test_the_key_falls_on_every_letter(template: T.Template) -> None:
    # The key's place is drawn first: each letter about a quarter, the ends half between them.
    keys = Counter(T.draw(template, seed, CATALOGUE).question.answer for seed in range(200))
    assert all(keys[letter] >= 30 for letter in "ABCD"), keys
    assert 70 <= keys["A"] + keys["D"] <= 130, keys


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.00042, "About 420 µs"),
        (0.0361, "About 36 ms"),
        (0.29, "About 290 ms"),
        (1.436, "About 1.4 s"),
        (11.485, "About 11 s"),
        (300.0, "About 5 min"),
    ],
)
def test_show_rounds_to_two_figures(seconds: float, text: str) -> None:
    assert T.show(seconds) == text
