"""The layout search: every parallel layout of a model on N GPUs, the best that fit, per fabric."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.bandwidth import _words as say
from bot.bandwidth._bands import BANDS, format_band, sig2
from bot.bandwidth._catalogue import Catalogue
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._format import WIDTH, format_seconds, sig3, wrap
from bot.bandwidth._hardware import Hardware, load_hardware
from bot.bandwidth._plan import Plan, plan, resolve_model
from bot.bandwidth._plan_request import PlanRequest

TOP = 5
TP_SIZES = (1, 2, 4, 8)
PP_SIZES = (1, 2, 4, 8, 16, 32, 64)
INTERLEAVES = (1, 2, 4)
CP_SIZES = (1, 2, 4, 8)
ZERO_STAGES = (1, 3)
MICRO_BATCHES = (1, 2, 4)
MAX_LAYOUTS = 2_000


@dataclass(frozen=True, slots=True)
class Candidate:
    """One layout priced on one fabric."""

    request: PlanRequest
    plan: Plan
    step_seconds: float
    mfu: float
    memory_gb: float


@dataclass(frozen=True, slots=True)
class Search:
    """The best layouts that fit in memory, per fabric, fastest first, and how many were tried."""

    request: PlanRequest
    fabrics: tuple[tuple[str, str, tuple[Candidate, ...]], ...]  # key, name, best layouts
    tried: int
    fitting: int

    @property
    def best(self) -> Plan:
        """Return the plan of the best layout on the first fabric."""
        for _, _, found in self.fabrics:
            if found:
                return found[0].plan
        raise BandwidthError(say.NO_LAYOUT_FITS)


def layouts(request: PlanRequest, hardware: Hardware) -> list[PlanRequest]:
    """Return every layout of the request's model on its GPUs that the divisibility rules allow.

    Sizes the request gives (tp=, pp=, cp=, zero=, micro=, interleave=) stay fixed.
    """
    model = resolve_model(request, hardware)
    gpu = hardware.gpu(request.gpu or hardware.default_gpu)
    gpn = request.gpus_per_node or min(gpu.nvlink_domain, request.gpus)
    seq = request.seq or model.seq
    tps = (request.tp,) if request.tp else TP_SIZES
    pps = (request.pp,) if request.pp > 1 else PP_SIZES
    cps = (request.cp,) if request.cp > 1 else CP_SIZES
    found: list[PlanRequest] = []
    for tp in tps:
        if tp > gpn or model.heads % tp or model.kv_heads % tp:
            continue
        for pp in pps:
            if pp > model.layers or model.layers % pp:
                continue
            for cp in cps:
                if seq % cp or (cp > 1 and seq < 16_384):
                    continue
                if request.gpus % (tp * pp * cp):
                    continue
                interleaves = (request.interleave,) if request.interleave > 1 else INTERLEAVES
                for v in interleaves:
                    if v > 1 and (pp == 1 or model.layers % (pp * v)):
                        continue
                    for zero in (request.zero,) if request.zero != 1 else ZERO_STAGES:
                        micro = (request.micro_batch,) if request.micro_batch > 1 else MICRO_BATCHES
                        for b in micro:
                            found.append(
                                replace(
                                    request,
                                    tp=tp,
                                    pp=pp,
                                    cp=cp,
                                    dp=None,
                                    interleave=v,
                                    zero=zero,
                                    micro_batch=b,
                                    search=False,
                                )
                            )
    return found[:MAX_LAYOUTS]


def search(
    request: PlanRequest,
    catalogue: Catalogue,
    hardware: Hardware | None = None,
    top: int = TOP,
) -> Search:
    """Return the ``top`` fastest layouts that fit in memory on each compared fabric."""
    hw = hardware or load_hardware()
    model = resolve_model(request, hw)
    seq = request.seq or model.seq
    tried = fitting = 0
    per_fabric: dict[str, list[Candidate]] = {}
    names: dict[str, str] = {}
    for layout in layouts(request, hw):
        batch = request.global_batch
        if batch is None:
            batch = max(1, round(model.batch_tokens / seq))
        tp, pp, cp = layout.tp or 1, layout.pp, layout.cp
        dp = layout.gpus // (tp * pp * cp)
        per_step = dp * layout.micro_batch
        batch = max(per_step, round(batch / per_step) * per_step)
        tried += 1
        try:
            result = plan(replace(layout, global_batch=batch), catalogue, hw)
        except BandwidthError:
            continue
        if not result.memory.fits:
            continue
        fitting += 1
        for r in result.results:
            names[r.key] = r.name
            per_fabric.setdefault(r.key, []).append(
                Candidate(layout, result, r.step_seconds, r.mfu, result.memory.total / 1e9)
            )
    if tried == 0:
        raise BandwidthError(say.NO_LAYOUT_SPLITS.format(model=model.name, gpus=request.gpus))
    fabrics = []
    for key, found in per_fabric.items():
        found.sort(key=lambda c: (c.step_seconds, c.memory_gb))
        fabrics.append((key, names[key], tuple(found[:top])))
    fabrics.sort(key=lambda f: f[2][0].step_seconds if f[2] else float("inf"))
    return Search(request, tuple(fabrics), tried, fitting)


def render_search(result: Search, width: int = WIDTH) -> str:
    """Return the best layouts per fabric as text tables, units in the header."""
    req = result.request
    band = format_band(BANDS["step"])
    lines: list[str] = []
    if result.fabrics and result.fabrics[0][2]:
        best = result.fabrics[0][2][0].plan
        lines += wrap(
            f"Layout search: {best.model.name} on {req.gpus:,} x {best.gpu.name}, seq"
            f" {best.layout.seq:,}: {result.tried} layouts tried, {result.fitting} fit in memory;"
            f" the {TOP} fastest per fabric",
            width,
        )
    else:
        lines.append(f"Layout search: {result.tried} layouts tried, none fits in memory.")
    header = (
        f"{'#':>2}  {'tp':>2}  {'pp':>2}  {'v':>1}  {'cp':>2}  {'dp':>5}  {'zero':>4}  {'micro':>5}"
        f"  {'step':>9}  {'MFU':>4}  {'memory':>6}"
    )
    units = (
        f"{'':>2}  {'':>2}  {'':>2}  {'':>1}  {'':>2}  {'':>5}  {'':>4}  {'':>5}  {band:>9}"
        f"  {'':>4}  {'(GB)':>6}"
    )
    for key, name, found in result.fabrics:
        lines.append("")
        lines.append(f"{key}: {name}")
        if not found:
            lines.append("  no layout fits")
            continue
        lines += [header, units]
        for i, c in enumerate(found, 1):
            lay = c.plan.layout
            lines.append(
                f"{i:>2}  {lay.tp:>2}  {lay.pp:>2}  {lay.interleave:>1}  {lay.cp:>2}  {lay.dp:>5}"
                f"  {lay.zero:>4}  {lay.micro_batch:>5}  {format_seconds(c.step_seconds):>9}"
                f"  {sig2(c.mfu * 100) + '%':>4}  {sig3(c.memory_gb):>6}"
            )
    lines.append("")
    lines += wrap(
        "v = virtual pipeline stages (interleave); layouts whose weights, gradients, optimizer"
        " and activations do not fit the GPU's memory are left out; each layout is priced as"
        " `plan` prices it (no SHARP unless asked).",
        width,
    )
    return "\n".join(line[:width].rstrip() for line in lines)


def search_to_json(result: Search) -> dict[str, object]:
    """Return the search as JSON: per fabric, the best layouts with their step and memory."""
    return {
        "gpus": result.request.gpus,
        "tried": result.tried,
        "fitting": result.fitting,
        "fabrics": [
            {
                "key": key,
                "name": name,
                "layouts": [
                    {
                        "tp": c.plan.layout.tp,
                        "pp": c.plan.layout.pp,
                        "interleave": c.plan.layout.interleave,
                        "cp": c.plan.layout.cp,
                        "dp": c.plan.layout.dp,
                        "zero": c.plan.layout.zero,
                        "micro_batch": c.plan.layout.micro_batch,
                        "global_batch": c.plan.layout.global_batch,
                        "step_seconds": c.step_seconds,
                        "mfu": c.mfu,
                        "memory_GB": c.memory_gb,
                        "uncertainty": BANDS["step"],
                    }
                    for c in found
                ],
            }
            for key, name, found in result.fabrics
        ],
    }
