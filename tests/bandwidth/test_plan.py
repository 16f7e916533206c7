"""The training-step planner: closed forms, the layout rules, the JSON contract, monotonicity."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bandwidth import (
    ENV_VAR,
    PLAN_USAGE,
    USAGE,
    BandwidthError,
    Catalogue,
    PlanRequest,
    answer,
    load_catalogue,
    load_hardware,
    parse_plan,
    plan,
    plan_to_json,
    render_chart,
    render_table,
)
from bot.bandwidth._chart import segments
from bot.bandwidth._plan import hardware_flops, model_flops

CATALOGUE = load_catalogue(extra=None)
HARDWARE = load_hardware()


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def _plan(**fields: object) -> object:
    defaults: dict[str, object] = {"model": "llama3-70b", "gpus": 128, "tp": 8, "pp": 2}
    defaults.update(fields)
    return plan(PlanRequest(**defaults), CATALOGUE)  # type: ignore[arg-type]


# ----- the presets' shapes give their published sizes -----


@pytest.mark.parametrize(
    ("key", "billions"),
    [
        ("llama3-8b", 8.0),
        ("llama3-70b", 70.6),
        ("llama3-405b", 405.9),
        ("gpt3-175b", 175.0),
        ("bloom-176b", 176.2),
        ("opt-175b", 175.0),
    ],
)
def test_preset_parameter_counts(key: str, billions: float) -> None:
    assert HARDWARE.model(key).params / 1e9 == pytest.approx(billions, rel=0.01)


def test_every_gpu_and_model_names_its_sources() -> None:
    for gpu in HARDWARE.gpus:
        for what in ("compute", "memory", "nvlink"):
            assert (gpu.source(what) or "").strip(), (gpu.key, what)
        assert gpu.nvlink in CATALOGUE
    for model in HARDWARE.models:
        assert model.source.strip(), model.key
    assert {"a100", "h100", "h200", "b200", "gb200"} <= {g.key for g in HARDWARE.gpus}
    assert {"llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b"} <= {
        m.key for m in HARDWARE.models
    }


# ----- closed forms: Megatron-LM (Narayanan et al., SC'21) and ZeRO (Rajbhandari et al., SC'20)

LAYOUTS = [
    {"model": "llama3-70b", "gpus": 128, "tp": 8, "pp": 2},
    {"model": "gpt3-175b", "gpus": 1024, "tp": 8, "pp": 8, "global_batch": 1024},
    {"model": "llama3-8b", "gpus": 64, "tp": 2, "pp": 1, "micro_batch": 2},
    {"model": "bloom-176b", "gpus": 384, "tp": 4, "pp": 12, "gpu": "a100", "micro_batch": 2},
    {"model": "llama3-405b", "gpus": 2048, "tp": 8, "pp": 16, "cp": 2, "seq": 16384},
]


@pytest.mark.parametrize("fields", LAYOUTS)
def test_tp_and_pp_volumes_are_megatrons_closed_forms(fields: dict[str, object]) -> None:
    p = _plan(**fields)
    lay, model = p.layout, p.model
    b, s, h, t = lay.micro_batch, lay.seq // lay.cp, model.hidden, lay.tp
    layers = math.ceil(model.layers / lay.pp)
    # Section 3.3: 8bsh(t-1)/t elements a layer per micro-batch for tensor parallelism ...
    tp = 8 * b * s * h * (t - 1) / t * 2 * layers * lay.microbatches
    # ... and b·s·h (here b·s·h/t with the scatter/gather optimisation of section 4.1) each way
    # between consecutive pipeline stages per micro-batch.
    pp = 2 * b * s * h / t * 2 * lay.microbatches if lay.pp > 1 else 0.0
    assert p.volumes.tp == pytest.approx(tp, rel=1e-12)
    assert p.volumes.pp == pytest.approx(pp, rel=1e-12)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_dp_volume_is_zeros_closed_form(zero: int) -> None:
    # One micro-batch a step, as the ZeRO paper counts: 2Ψ for stages 0-2, 3Ψ for stage 3.
    p = _plan(model="llama3-8b", gpus=64, tp=1, pp=1, zero=zero, global_batch=64)
    assert p.layout.microbatches == 1
    psi = p.model.params
    d = p.layout.dp
    factor = 3 if zero == 3 else 2
    assert p.volumes.dp == pytest.approx(factor * psi * (d - 1) / d * 2, rel=1e-12)


def test_zero_3_moves_one_and_a_half_times_the_bytes() -> None:
    volumes = [
        _plan(model="llama3-8b", gpus=64, tp=1, pp=1, zero=z, global_batch=64).volumes.dp
        for z in (1, 3)
    ]
    assert volumes[1] / volumes[0] == pytest.approx(1.5, rel=1e-12)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_memory_is_zeros_closed_form(zero: int) -> None:
    # ZeRO paper, Figure 1, with K = 12: (2 + 2 + K)Ψ, 2Ψ + 2Ψ + KΨ/Nd, 2Ψ + (2 + K)Ψ/Nd,
    # (2 + 2 + K)Ψ/Nd, Ψ the GPU's share after tensor and pipeline parallelism.
    p = _plan(model="llama3-70b", gpus=256, tp=8, pp=2, zero=zero)
    psi = p.model.params / (8 * 2)
    n = p.layout.dp
    expected = {
        0: 16 * psi,
        1: 4 * psi + 12 * psi / n,
        2: 2 * psi + 14 * psi / n,
        3: 16 * psi / n,
    }[zero]
    memory = p.memory
    assert memory.weights + memory.gradients + memory.optimizer == pytest.approx(expected)


def test_flops_are_megatrons_equation_3() -> None:
    p = _plan(model="gpt3-175b", gpus=1024, tp=8, pp=8, global_batch=1024, recompute=True)
    lay, m = p.layout, p.model
    b, s, n, h, v = lay.global_batch, lay.seq, m.layers, m.hidden, m.vocab
    megatron = 96 * b * s * n * h * h * (1 + s / (6 * h) + v / (16 * n * h))
    norms = 16 * n * h * b * s  # the two layer norms' weights, which equation (3) leaves out
    assert hardware_flops(m, lay) == pytest.approx(megatron + norms, rel=1e-12)
    no_recompute = replace(lay, recompute=False)
    six_n = 6 * m.matmul_params * b * s
    assert model_flops(m, no_recompute) == pytest.approx(six_n + 12 * n * h * s * b * s, rel=1e-12)
    assert hardware_flops(m, no_recompute) == model_flops(m, no_recompute)


# ----- the step adds up -----


@pytest.mark.parametrize("fields", LAYOUTS)
def test_the_step_is_the_sum_of_its_parts(fields: dict[str, object]) -> None:
    p = _plan(**fields, over=("ib-ndr", "100gbe", "1gbe"))
    for r in p.results:
        assert sum(segments(r)) == pytest.approx(r.step_seconds, rel=1e-9)
        assert r.idle_share == pytest.approx(1 - r.compute_seconds / r.step_seconds)
        assert r.tokens_per_second == pytest.approx(p.layout.tokens_per_step / r.step_seconds)
        assert r.mfu == pytest.approx(r.tflops_per_gpu / p.gpu.bf16_tflops)
    steps = [r.step_seconds for r in p.results]
    assert steps == sorted(steps)


def test_the_seed_question_70b_on_128_gpus() -> None:
    p = _plan(over=("1gbe", "100gbe", "roce-400", "ib-ndr"))
    idle = {r.key: r.idle_share for r in p.results}
    assert idle["1gbe"] > 0.8  # the GPUs mostly wait on 1 GbE
    assert idle["1gbe"] > idle["100gbe"] > idle["roce-400"] >= idle["ib-ndr"] - 0.01
    assert p.results[0].key in ("ib-ndr", "roce-400")
    assert p.memory.fits


# ----- layout rules -----


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"gpus": 100}, "not a whole number of nodes of 8"),
        ({"gpus": 128, "tp": 8, "pp": 3}, "does not split into"),
        ({"dp": 4}, "tp x pp x cp x dp must be gpus"),
        ({"tp": 3, "gpus": 96, "pp": 1}, "tp=3 must divide the 64 heads"),
        ({"seq": 1000, "cp": 3, "gpus": 96, "pp": 1, "tp": 8}, "does not split into cp=3"),
        ({"global_batch": 100}, "must be a multiple of dp x micro"),
        ({"model": "llama4-70b"}, "Unknown model 'llama4-70b'. Did you mean llama3-70b"),
        ({"gpu": "h1000"}, "Unknown GPU 'h1000'"),
        ({"over": ("nvlink4",)}, "over= compares networks between nodes"),
        ({"model": "70B", "layers": 80}, "needs both layers= and hidden="),
        ({"model": "7B", "layers": 80, "hidden": 8192}, "make 64.8B parameters, not 7b"),
        ({"pp": 200, "gpus": 1600}, "more than the model's 80 layers"),
        ({"interleave": 2, "pp": 1}, "needs pp=2 or more"),
        ({"zero": 4}, "zero= must be 0, 1, 2 or 3"),
        ({"gpus": 0}, "gpus= must be between 1"),
        ({"efficiency": 1.5}, "efficiency= must be between 0.01 and 1"),
        # The review: 5e-324 passed "above 0" and made every figure NaN.
        ({"efficiency": 5e-324}, "efficiency= must be between 0.01 and 1"),
        ({"efficiency": 0.009}, "efficiency= must be between 0.01 and 1"),
        # The review: a model name broke out of Discord's code block and reached mathtext.
        ({"model": "```@everyone[x](https://evil)```"}, "A model name is letters, digits"),
        ({"model": "$\\frac{1}{2}$"}, "A model name is letters, digits"),
        ({"model": "llama 70b"}, "A model name is letters, digits"),
    ],
)
def test_bad_layouts_are_refused_clearly(fields: dict[str, object], says: str) -> None:
    with pytest.raises(BandwidthError) as caught:
        _plan(**fields)
    assert says in caught.value.message


def test_a_layout_that_does_not_fit_is_warned_about() -> None:
    p = _plan(model="llama3-405b", gpus=8, tp=8, pp=1)
    assert not p.memory.fits
    assert any(w.startswith("Does not fit") for w in p.warnings)
    assert "DOES NOT FIT" in render_table(p)


def test_defaults_fill_in_a_layout_that_fits() -> None:
    p = plan(PlanRequest("llama3-70b", gpus=128), CATALOGUE)
    assert p.layout.tp in (2, 4, 8) and p.memory.fits
    assert p.layout.dp * p.layout.tp == 128
    assert p.layout.tokens_per_step == pytest.approx(4 * 2**20, rel=0.01)


def test_a_model_of_your_own() -> None:
    p = plan(parse_plan("plan 13B gpus=64 layers=40 hidden=5120 heads=40 zero=3"), CATALOGUE)
    assert p.model.params / 1e9 == pytest.approx(12.8, rel=0.02)
    assert p.layout.zero == 3


def test_gb200_nodes_are_its_72_gpu_nvlink_domain() -> None:
    p = plan(PlanRequest("llama3-405b", gpus=144, tp=8, pp=9, gpu="gb200"), CATALOGUE)
    assert p.layout.gpus_per_node == 72 and p.layout.nodes == 2


# ----- the chat grammar -----


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("plan llama3-70b gpus=128", {"model": "llama3-70b", "gpus": 128}),
        (
            "/bandwidth plan LLAMA3-405B gpus=1024 tp=8 pp=16 cp=2 dp=4 zero=3 seq=16384 batch=64"
            " gpu=H200 over=ib-ndr,1gbe",
            {
                "model": "llama3-405b",
                "gpus": 1024,
                "tp": 8,
                "pp": 16,
                "cp": 2,
                "dp": 4,
                "zero": 3,
                "seq": 16384,
                "global_batch": 64,
                "gpu": "h200",
                "over": ("ib-ndr", "1gbe"),
            },
        ),
        (
            "plan 70B gpus=64 layers=80 hidden=8192 kv=8 recompute",
            {"recompute": True, "kv_heads": 8},
        ),
        ("plan gpt3-175b gpus=1,024 micro=2 gpn=8 nics=4", {"micro_batch": 2, "nics": 4}),
    ],
)
def test_parse_plan(text: str, fields: dict[str, object]) -> None:
    request = parse_plan(text)
    for name, value in fields.items():
        assert getattr(request, name) == value, name


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("plan", "Name a model first"),
        ("plan gpus=8", "Name a model first"),
        ("plan llama3-70b", "Say how many GPUs in all"),
        ("plan llama3-70b gpus=8 warp=9", "Unknown option 'warp='"),
        ("plan llama3-70b gpus=8 gpus=9", "gpus= is given twice"),
        ("plan llama3-70b gpus=eight", "gpus= must be a whole number"),
        ("plan llama3-70b gpus=8 recompute=maybe", "recompute= must be on or off"),
        ("plan help", "How to plan a training step"),
    ],
)
def test_bad_plans_get_the_plan_usage(text: str, says: str) -> None:
    with pytest.raises(BandwidthError) as caught:
        parse_plan(text)
    assert says in caught.value.message
    assert caught.value.usage == PLAN_USAGE


def test_plan_usage_examples_all_work() -> None:
    examples = [line.strip() for line in PLAN_USAGE.splitlines() if "/bandwidth plan " in line]
    examples = [e for e in examples if not e.startswith("Usage")]
    assert len(examples) >= 3
    for line in examples:
        plan(parse_plan(line), CATALOGUE)


# ----- the chat entry point -----


def test_answer_routes_plans_and_estimates() -> None:
    reply = answer("plan llama3-70b gpus=128 tp=8 pp=2", CATALOGUE)
    assert reply.kind == "plan" and reply.title.startswith("Llama 3 70B")
    assert "MFU" in reply.table and "idle" in reply.table
    assert reply.filename.startswith("bandwidth-llama-3-70b") and reply.filename.endswith(".png")
    other = answer("/bandwidth 70B params bf16 allreduce nodes=4 gpus=8", CATALOGUE)
    assert other.kind == "estimate" and "busbw" in other.table
    assert all(len(line) <= 100 for line in reply.table.splitlines() + other.table.splitlines())


@pytest.mark.parametrize(
    ("text", "usage"),
    [("plan llama3-70b gpus=100", PLAN_USAGE), ("lots of data", USAGE), ("", USAGE)],
)
def test_answer_errors_carry_the_right_usage(text: str, usage: str) -> None:
    with pytest.raises(BandwidthError) as caught:
        answer(text, CATALOGUE)
    assert caught.value.usage == usage


# ----- JSON and chart -----

PLAN_JSON_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["model", "layout", "tokens_per_step", "results"],
    "properties": {
        "model": {"type": "object", "required": ["name", "params", "layers", "hidden"]},
        "layout": {
            "type": "object",
            "additionalProperties": False,
            "required": ["tp", "pp", "cp", "dp", "zero"],
            "properties": {
                **{
                    k: {"type": "integer", "minimum": 0}
                    for k in ("tp", "pp", "cp", "dp", "zero", "interleave", "micro_batch", "ep")
                },
                "fp8": {"type": "boolean"},
                "sharp": {"type": "boolean"},
            },
        },
        "tokens_per_step": {"type": "integer", "minimum": 1},
        "results": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "key",
                    "name",
                    "step_seconds",
                    "compute_seconds",
                    "comm_seconds",
                    "exposed_comm_seconds",
                    "tflops_per_gpu",
                    "mfu",
                    "tokens_per_second",
                    "idle_share",
                ],
                "properties": {
                    "key": {"type": "string"},
                    "name": {"type": "string"},
                    "step_seconds": {"type": "number", "exclusiveMinimum": 0},
                    "compute_seconds": {"type": "number", "exclusiveMinimum": 0},
                    "comm_seconds": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["tp", "pp", "cp", "dp"],
                        "properties": {
                            k: {"type": "number", "minimum": 0}
                            for k in ("tp", "pp", "cp", "dp", "ep")
                        },
                    },
                    "exposed_comm_seconds": {"type": "number", "minimum": 0},
                    "tflops_per_gpu": {"type": "number", "exclusiveMinimum": 0},
                    "mfu": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                    "tokens_per_second": {"type": "number", "exclusiveMinimum": 0},
                    "idle_share": {"type": "number", "minimum": 0, "maximum": 1},
                    "uncertainty": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                },
            },
        },
    },
}


@pytest.mark.parametrize("fields", LAYOUTS)
def test_plan_json_follows_the_contract(fields: dict[str, object]) -> None:
    data = json.loads(json.dumps(plan_to_json(_plan(**fields)), allow_nan=False))
    jsonschema.validate(data, PLAN_JSON_SCHEMA)
    steps = [r["step_seconds"] for r in data["results"]]
    assert steps == sorted(steps)


def test_the_plan_chart_is_a_png() -> None:
    import io

    from PIL import Image

    png = render_chart(_plan(over=("ib-hdr", "1gbe", "fc32", "wifi6")))
    with Image.open(io.BytesIO(png)) as image:
        image.verify()
    with Image.open(io.BytesIO(png)) as image:
        assert 800 <= image.size[0] <= 1600
        assert len(image.convert("RGB").getcolors(maxcolors=1_000_000) or []) > 10


# ----- monotonicity -----

NETWORKS = [ic.key for ic in CATALOGUE if not ic.intra_node and not ic.shared_medium]
SMALL_LAYOUTS = [
    {"model": "llama3-8b", "gpus": 32, "tp": 1, "pp": 1, "zero": 1},
    {"model": "llama3-8b", "gpus": 32, "tp": 2, "pp": 2, "zero": 3},
    {"model": "llama3-70b", "gpus": 64, "tp": 8, "pp": 2, "zero": 1},
    {"model": "llama3-70b", "gpus": 64, "tp": 4, "pp": 2, "cp": 2, "zero": 2},
    {"model": "gpt3-175b", "gpus": 128, "tp": 8, "pp": 4, "zero": 1, "recompute": True},
    {"model": "gpt3-175b", "gpus": 64, "tp": 16, "pp": 4, "zero": 1},  # TP across nodes
]


def _with(key: str, rate: float) -> Catalogue:
    ic = replace(CATALOGUE.get(key), rate_gbps=rate)
    entries = tuple(ic if x.key == key else x for x in CATALOGUE)
    return Catalogue(entries, (key,))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(SMALL_LAYOUTS),
    st.sampled_from(NETWORKS),
    st.floats(min_value=0.1, max_value=1000.0),
    st.floats(min_value=1.0, max_value=100.0),
)
def test_a_slower_link_never_makes_the_step_faster(
    fields: dict[str, object], key: str, rate: float, factor: float
) -> None:
    def step(r: float) -> float:
        request = PlanRequest(**fields, over=(key,))  # type: ignore[arg-type]
        return plan(request, _with(key, r)).fastest.step_seconds

    assert step(rate) >= step(rate * factor)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(SMALL_LAYOUTS),
    st.sampled_from(NETWORKS),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=4),
)
def test_more_data_parallel_ranks_at_the_same_batch_per_gpu_never_make_the_step_faster(
    fields: dict[str, object], key: str, a: int, b: int, microbatches: int
) -> None:
    small, large = sorted((a, b))
    # ZeRO 0 keeps each GPU's optimizer step the same size whatever dp (ZeRO 1 and up shard
    # it across the replicas, which does make more of them faster at that one step).
    base = replace(PlanRequest(**fields, over=(key,)), zero=0)  # type: ignore[arg-type]
    per_replica = base.tp or 1
    model_parallel = per_replica * base.pp * base.cp

    def step(dp_nodes: int) -> float:
        # grow DP in whole nodes so that every layout stays on full nodes of 8
        dp = dp_nodes * max(1, 8 // model_parallel)
        request = replace(base, gpus=model_parallel * dp, dp=dp, global_batch=dp * microbatches)
        return plan(request, CATALOGUE).fastest.step_seconds

    assert step(small) <= step(large) * (1 + 1e-12)


# ----- a question's chart may be a plan -----

PLAN_QUESTION = """\
id: step-on-1gbe
question: How much of a 70B training step do 128 GPUs spend waiting on 1 GbE?
choices:
  A: Almost none
  B: Most of it
answer: B
explanation:
  short: The gradient exchange and pipeline sends crawl over 1 GbE while the GPUs wait.
  full: The chart below shows a whole step per interconnect.
chart:
  plan: {model: llama3-70b, gpus: 128, tp: 8, pp: 2}
  over: [ib-hdr, 1gbe, fc32, wifi6]
"""


def test_a_question_chart_can_name_a_plan(tmp_path: Path) -> None:
    from bot.bank import load_bank
    from bot.engine.charts import chart_estimate

    path = tmp_path / "q.yaml"
    path.write_text(PLAN_QUESTION, encoding="utf-8")
    question = load_bank([path]).by_id("step-on-1gbe")
    assert question.chart is not None and question.chart.plan is not None
    assert question.chart.plan.model == "llama3-70b"
    result = chart_estimate(question.chart)
    assert render_table(result).startswith("Llama 3 70B")
    assert {r.key for r in result.results} == {"ib-hdr", "1gbe", "fc32", "wifi6"}


@pytest.mark.parametrize(
    ("chart", "says"),
    [
        ("{plan: {model: llama3-70b, gpus: 100}}", "chart.plan does not work: gpus=100"),
        ("{plan: {model: llama3-70b}}", "missing required field 'chart.plan.gpus'"),
        ("{plan: {model: llama3-70b, gpus: 128, tp: eight}}", "chart.plan.tp must be a whole"),
        ("{plan: {model: llama3-70b, gpus: 128, zero: 5}}", "chart.plan.zero must be 0, 1, 2 or 3"),
        ("{plan: {model: llama3-70b, gpus: 128, tpp: 8}}", "unknown key 'tpp' in chart.plan"),
        ("{size: 1GB, plan: {model: llama3-70b, gpus: 128}}", "chart.size does not go with"),
        ("{plan: llama3-70b}", "chart.plan must be a mapping"),
    ],
)
def test_bad_plan_charts_are_reported_with_their_line(
    tmp_path: Path, chart: str, says: str
) -> None:
    from bot.bank import BankError, load_bank

    text = PLAN_QUESTION.split("chart:")[0] + f"chart: {chart}\n"
    path = tmp_path / "q.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BankError) as caught:
        load_bank([path])
    messages = [str(p) for p in caught.value.problems]
    assert any(says in m and ":10:" in m for m in messages), messages


def test_the_schema_accepts_a_plan_chart_and_refuses_a_mixed_one() -> None:
    import yaml

    schema = json.loads((Path(__file__).parents[2] / "questions" / "schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    good = yaml.safe_load(PLAN_QUESTION)
    assert list(validator.iter_errors(good)) == []
    mixed = dict(good, chart={"size": "1GB", "plan": {"model": "llama3-70b", "gpus": 8}})
    assert list(validator.iter_errors(mixed)) != []


def test_the_planner_uses_sharp_only_when_asked_and_says_so() -> None:
    from bot.bandwidth import parse_plan, plan, plan_to_json

    words = "llama3-70b gpus=1024 tp=8 pp=4 zero=1 over=ib-ndr"
    without = plan(parse_plan(words), load_catalogue())
    with_sharp = plan(parse_plan(words + " sharp"), load_catalogue())
    assert "no SHARP" in without.assumptions
    assert "SHARP where the network has it (asked)" in with_sharp.assumptions
    assert with_sharp.fastest.comm_seconds.dp < without.fastest.comm_seconds.dp
    assert plan_to_json(with_sharp)["layout"]["sharp"] is True
    assert plan_to_json(without)["layout"]["sharp"] is False


def test_impossible_planner_hardware_is_refused_and_uneven_stages_are_named() -> None:
    from bot.bandwidth import BandwidthError, parse_plan, plan

    with pytest.raises(BandwidthError, match="holds at most 8"):
        plan(parse_plan("llama3-70b gpus=1024 gpn=1024"), load_catalogue())
    with pytest.raises(BandwidthError, match="more NICs than any GPU server"):
        plan(parse_plan("llama3-70b gpus=128 nics=1000"), load_catalogue())
    odd = plan(parse_plan("llama3-405b gpus=1024 tp=8 pp=16"), load_catalogue())
    assert any("does not divide the 126 layers" in w for w in odd.warnings)
    stated = plan(parse_plan("llama3-405b gpus=1024 tp=8 pp=16 uneven"), load_catalogue())
    assert not any("does not divide" in w for w in stated.warnings)
    rack = plan(parse_plan("llama3-70b gpus=144 gpu=gb200"), load_catalogue())
    assert rack.layout.gpus_per_node == 72


def test_overlap_per_kind_tp_only_when_asked_dp_last_bucket_zero3_prologue() -> None:
    from bot.bandwidth import parse_plan, plan

    base = "llama3-70b gpus=128 tp=8 pp=2 over=100gbe"
    serial = plan(parse_plan(base), load_catalogue()).fastest
    hidden = plan(parse_plan(base + " tp-overlap"), load_catalogue()).fastest
    assert serial.tp_exposed_seconds == serial.comm_seconds.tp > 0
    assert hidden.tp_exposed_seconds < serial.tp_exposed_seconds
    assert hidden.step_seconds < serial.step_seconds
    # ZeRO-1 on a fast fabric: the last bucket and the optimizer step stay exposed.
    fast = plan(parse_plan("llama3-8b gpus=64 tp=1 over=ib-ndr"), load_catalogue()).fastest
    assert fast.dp_exposed_seconds > 0
    # ZeRO-3: the prologue and epilogue show even when the compute hides the rest.
    z3 = plan(parse_plan("llama3-8b gpus=64 tp=1 zero=3 over=ib-ndr"), load_catalogue()).fastest
    assert z3.dp_exposed_seconds > 0
    assert "tp-overlap" in plan(parse_plan(base + " tp-overlap"), load_catalogue()).assumptions


def test_a_mixture_of_experts_prices_its_all_to_alls_and_splits_its_experts() -> None:
    from bot.bandwidth import BandwidthError, load_hardware, parse_plan, plan, plan_to_json

    mixtral = load_hardware().model("mixtral-8x7b")
    assert round(mixtral.params / 1e9, 1) == 46.7  # Mixtral paper: 46.7B, 12.9B active
    assert 12.5e9 < mixtral.matmul_params < 13.0e9
    one = plan(parse_plan("mixtral-8x7b gpus=64 tp=2 over=ib-ndr"), load_catalogue())
    spread = plan(parse_plan("mixtral-8x7b gpus=64 tp=2 ep=8 over=ib-ndr"), load_catalogue())
    assert one.fastest.comm_seconds.ep == 0
    assert spread.fastest.comm_seconds.ep > 0
    assert spread.memory.weights < one.memory.weights
    assert plan_to_json(spread)["results"][0]["comm_seconds"]["ep"] > 0
    slow = plan(parse_plan("mixtral-8x7b gpus=64 tp=2 ep=8 over=10gbe"), load_catalogue())
    assert slow.fastest.comm_seconds.ep > spread.fastest.comm_seconds.ep
    custom = plan(
        parse_plan("moe gpus=16 layers=16 hidden=2048 experts=16 top-k=2 ep=4"), load_catalogue()
    )
    assert custom.model.experts == 16 and custom.layout.ep == 4
    with pytest.raises(BandwidthError, match="must divide the 8 experts"):
        plan(parse_plan("mixtral-8x7b gpus=64 ep=3"), load_catalogue())
    with pytest.raises(BandwidthError, match="a dense model"):
        plan(parse_plan("llama3-8b gpus=64 ep=2"), load_catalogue())


def test_uneven_stages_may_give_the_embedding_and_the_output_a_chunk_each() -> None:
    # Llama 3 405B: 126 layers on 16 stages of 8 one-layer chunks, the first and last chunk
    # holding only the embedding and the output layer (arXiv:2407.21783, section 3.3.2).
    request = PlanRequest(
        "llama3-405b", gpus=2048, tp=8, pp=16, interleave=8, global_batch=256, uneven=True
    )
    assert plan(request, CATALOGUE).layout.interleave == 8
    with pytest.raises(BandwidthError, match="pp x interleave is more than"):
        plan(replace(request, uneven=False), CATALOGUE)
    with pytest.raises(BandwidthError, match="pp x interleave is more than"):
        plan(replace(request, pp=14, interleave=10), CATALOGUE)


def test_fp8_pays_for_casting_every_gemm_input_and_output_gradient() -> None:
    from bot.bandwidth._compute import FP8_CAST_BYTES, microbatch_time

    compute = HARDWARE.compute
    assert compute is not None
    gpu, model = HARDWARE.gpu("h100"), HARDWARE.model("llama3-8b")
    inputs, gradients = model.gemm_widths
    h, kv, ffn = model.hidden, model.kv_hidden, model.ffn
    assert (inputs, gradients) == (3 * h + ffn, 2 * h + 2 * kv + 2 * ffn + h)

    def elementwise(fp8: bool, widths: tuple[float, float]) -> float:
        return microbatch_time(
            compute,
            layers=model.layers,
            matmul_params_per_layer=model.active_layer_params,
            output_params=0.0,
            hidden=h,
            seq=4096,
            tokens=4096,
            tp=1,
            recompute=False,
            bf16_flops=gpu.bf16_flops,
            fp8_flops=gpu.fp8_flops,
            hbm_bytes_per_s=gpu.hbm_bytes_per_s,
            fp8=fp8,
            gemm_widths=widths,
        ).elementwise

    cast = elementwise(True, model.gemm_widths) - elementwise(False, model.gemm_widths)
    expected = FP8_CAST_BYTES * model.layers * 4096 * (inputs + gradients) / gpu.hbm_bytes_per_s
    assert cast == pytest.approx(expected)
    assert elementwise(True, (0.0, 0.0)) == elementwise(False, (0.0, 0.0))
