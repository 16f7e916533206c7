"""The ``/bandwidth`` estimate or plan a question's ``chart`` field asks for."""

from __future__ import annotations

from bot.bandwidth import (
    BandwidthError,
    BandwidthRequest,
    Catalogue,
    Estimate,
    Plan,
    PlanRequest,
    estimate,
    load_catalogue,
    parse_size,
    plan,
)
from bot.engine.model import ChartSpec, PlanSpec


def chart_request(spec: ChartSpec) -> BandwidthRequest:
    """Turn a question's chart spec into a bandwidth request (BandwidthError if it is bad)."""
    if spec.plan is not None:
        raise BandwidthError("This chart is a training-step plan; use plan_request.")
    return BandwidthRequest(
        size_text=spec.size,
        bytes=parse_size(spec.size),
        op=spec.op,
        nodes=spec.nodes,
        gpus=spec.gpus,
        over=spec.over,
    )


def plan_request(spec: PlanSpec, over: tuple[str, ...] = ()) -> PlanRequest:
    """Turn a question's plan into a planner request (BandwidthError if it is bad)."""
    return PlanRequest(
        model=spec.model,
        gpus=spec.gpus,
        tp=spec.tp,
        pp=spec.pp,
        cp=spec.cp,
        zero=spec.zero,
        seq=spec.seq,
        global_batch=spec.batch,
        gpu=spec.gpu,
        over=over,
    )


def chart_estimate(spec: ChartSpec, catalogue: Catalogue | None = None) -> Estimate | Plan:
    """Compute what a question's chart shows: the estimate, or the plan when it names one."""
    links = catalogue or load_catalogue()
    if spec.plan is not None:
        return plan(plan_request(spec.plan, spec.over), links)
    return estimate(chart_request(spec), links)


def plan_problem(spec: PlanSpec, over: tuple[str, ...] = ()) -> str | None:
    """Return why a question's plan cannot be priced (None when it can)."""
    try:
        plan(plan_request(spec, over), load_catalogue(extra=None))
    except BandwidthError as exc:
        return "; ".join(exc.problems)
    return None
