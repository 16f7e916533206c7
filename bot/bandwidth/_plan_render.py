"""Text and JSON renderings of a training-step plan."""

from __future__ import annotations

from typing import Any

from bot.bandwidth import _words as say
from bot.bandwidth._bands import BANDS, format_band, sig2
from bot.bandwidth._format import (
    WIDTH,
    format_seconds,
    format_slowdown,
    sig3,
    table_lines,
    wrap,
)
from bot.bandwidth._plan import Plan, PlanResult


def format_count(value: float) -> str:
    """Return a large count with a unit: ``70.6B``, ``4.19M``, ``512``."""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= scale:
            return f"{sig3(value / scale)}{unit}"
    return sig3(value)


def plan_headline(plan: Plan) -> str:
    """Return the title: model, GPUs, layout and batch."""
    lay, model = plan.layout, plan.model
    nodes = f"{lay.nodes} node{'s' if lay.nodes > 1 else ''} x {lay.gpus_per_node}"
    return (
        f"{model.name} ({format_count(model.params)} params) on {lay.gpus:,} x {plan.gpu.name}"
        f" ({nodes}): tp {lay.tp}, pp {lay.pp}, cp {lay.cp}, dp {lay.dp}, ZeRO-{lay.zero};"
        f" seq {lay.seq:,}, batch {lay.global_batch:,} ({format_count(lay.tokens_per_step)}"
        f" tokens) in {lay.microbatches:,} micro-batches of {lay.micro_batch}"
        + (", recompute" if lay.recompute else "")
        + (
            f"; {model.experts} experts, top-{model.top_k}, ep {lay.ep}"
            if model.experts > 1
            else ""
        )
    )


def memory_line(plan: Plan) -> str:
    """Return one GPU's memory, part by part, and whether it fits."""
    mem = plan.memory
    parts = [
        ("weights", mem.weights),
        ("grads", mem.gradients),
        ("optimizer", mem.optimizer),
        ("activations", mem.activations),
    ]
    text = " + ".join(f"{name} {_gb(value)}" for name, value in parts)
    verdict = "fits" if mem.fits else "DOES NOT FIT"
    return f"Memory per GPU: {text} = {_gb(mem.total)} of {plan.gpu.memory_gb:g} GB ({verdict})"


def _gb(value: float) -> str:
    return f"{sig3(value / 1e9)} GB"


NOT_FIT_NOTE = (
    "TFLOP/s and MFU left out: the layout does not fit in memory (see below); the step times"
    " are what it would take if it did"
)


def shown_rows(plan: Plan) -> list[tuple[str, str, PlanResult]]:
    """Return (key, name, result) for each row a table or chart shows, fastest first.

    Inside one node no network is used and every interconnect gives the same step: one row
    stands for them all instead of a column of identical ones.
    """
    if plan.layout.nodes == 1:
        return [("-", f"no network (1 node, {plan.gpu.nvlink})", plan.fastest)]
    return [(r.key, r.name, r) for r in plan.results]


def render_plan_table(plan: Plan, width: int = WIDTH) -> str:
    """Return the aligned text table, fastest first, with memory, warnings and assumptions."""
    header = ["key", "interconnect", "step", "tokens/s", "TFLOP/s", "MFU", "idle", "slower"]
    right = [False, False, True, True, True, True, True, True]
    band = format_band(BANDS["step"])
    units = ["", "", f"({band})", "", "(/GPU)", "(BF16)", "", ""]
    fits = plan.memory.fits
    rows = [units] + [_row(key, name, r, fits) for key, name, r in shown_rows(plan)]
    lines = wrap(plan_headline(plan), width)
    lines += table_lines(header, rows, right, width, name=1)
    if not fits:
        lines += wrap(NOT_FIT_NOTE, width)
    lines += wrap(
        f"idle = share of the step GPUs wait; step times {band} (held-out spread)",
        width,
    )
    lines += wrap(memory_line(plan), width)
    for warning in plan.warnings:
        lines += wrap(say.WARNING_LINE.format(warning=warning), width)
    lines += wrap(plan.assumptions, width)
    return "\n".join(line[:width].rstrip() for line in lines)


def _row(key: str, name: str, r: PlanResult, fits: bool) -> list[str]:
    return [
        key,
        name,
        format_seconds(r.step_seconds),
        format_count(r.tokens_per_second),
        sig3(r.tflops_per_gpu) if fits else "-",
        f"{sig2(r.mfu * 100)}%" if fits else "-",
        f"{sig3(r.idle_share * 100)}%",
        format_slowdown(r.slowdown),
    ]


def plan_to_json(plan: Plan) -> dict[str, Any]:
    """Return the plan as the documented JSON object."""
    model, lay = plan.model, plan.layout
    return {
        "model": {
            "key": model.key,
            "name": model.name,
            "params": model.params,
            "layers": model.layers,
            "hidden": model.hidden,
            "ffn": model.ffn,
            "heads": model.heads,
            "kv_heads": model.kv_heads,
            "vocab": model.vocab,
            "seq": lay.seq,
        },
        "layout": {
            "tp": lay.tp,
            "pp": lay.pp,
            "cp": lay.cp,
            "dp": lay.dp,
            "zero": lay.zero,
            "interleave": lay.interleave,
            "micro_batch": lay.micro_batch,
            "fp8": lay.fp8,
            "sharp": lay.sharp,
            "ep": lay.ep,
        },
        "tokens_per_step": lay.tokens_per_step,
        "results": [
            {
                "key": r.key,
                "name": r.name,
                "step_seconds": r.step_seconds,
                "compute_seconds": r.compute_seconds,
                "comm_seconds": {
                    "tp": r.comm_seconds.tp,
                    "pp": r.comm_seconds.pp,
                    "cp": r.comm_seconds.cp,
                    "dp": r.comm_seconds.dp,
                    "ep": r.comm_seconds.ep,
                },
                "exposed_comm_seconds": r.exposed_comm_seconds,
                "tflops_per_gpu": r.tflops_per_gpu,
                "mfu": r.mfu,
                "tokens_per_second": r.tokens_per_second,
                "idle_share": r.idle_share,
                "uncertainty": BANDS["step"],
            }
            for r in plan.results
        ],
    }
