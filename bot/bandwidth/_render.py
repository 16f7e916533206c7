"""Text and JSON renderings of an estimate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.bandwidth._bands import band, format_band
from bot.bandwidth._estimate import Estimate, Result, nics_per_node
from bot.bandwidth._format import (
    QUIZ_MARK,
    QUIZ_NOTE,
    WIDTH,
    format_seconds,
    format_slowdown,
    sig3,
    table_lines,
    wrap,
)
from bot.bandwidth._plan_render import plan_headline, render_plan_table
from bot.bandwidth._sizes import describe_bytes

if TYPE_CHECKING:
    from bot.bandwidth._plan import Plan

COLUMNS_NOTE = "algbw = size/time, busbw = algbw x bus factor (nccl-tests), both GB/s"
# A point-to-point transfer has a bus factor of 1 (nccl-tests' sendrecv): its algbw and busbw are
# one number, shown once.
TRANSFER_NOTE = "rate = size/time in GB/s (for a transfer, nccl-tests' algbw and busbw are both it)"


def headline(estimate: Estimate | Plan) -> str:
    """Return the one-line title: operation, size and where it runs (or the plan's layout)."""
    if not isinstance(estimate, Estimate):
        return plan_headline(estimate)
    req = estimate.request
    size_text = req.size_text if len(req.size_text) <= 40 else req.size_text[:37] + "..."
    size = describe_bytes(req.bytes)
    what = f"{size_text} = {size}" if size_text.replace(" ", "") != size.replace(" ", "") else size
    line = f"{req.op} of {what} ({req.bytes:,} {'byte' if req.bytes == 1 else 'bytes'})"
    if req.op == "transfer":
        nics = nics_per_node(req)
        return line + (", one link" if nics == 1 else f", {nics} links")
    step = f", compute step {format_seconds(req.step)}" if req.step is not None else ""
    if req.nodes == 1:
        return f"{line}, 1 node x {req.gpus} GPUs{step}"
    gpus = f" x {req.gpus} GPUs" if req.gpus > 1 else ""
    nics = nics_per_node(req)
    nics_text = f", {nics} NIC{'s' if nics > 1 else ''}/node" if req.gpus > 1 or req.nics else ""
    return f"{line}, {req.nodes} nodes{gpus}{nics_text}{step}"


def render_table(
    estimate: Estimate | Plan, width: int = WIDTH, *, keys: bool = True, quiz: bool = False
) -> str:
    """Return the aligned text table, fastest first, with the assumptions line under it.

    Without ``keys`` the catalogue-key column is left out (a quiz explanation has no use for
    it), which leaves the names room in 80 columns. With ``quiz`` (chat's /bandwidth, where the
    quiz is played) an estimate marks the answer choices of the interconnect quiz question; a
    plan never does.
    """
    if not isinstance(estimate, Estimate):
        return render_plan_table(estimate, width)
    req = estimate.request
    collective = req.op != "transfer"
    with_step = req.step is not None
    marked = quiz and any(r.quiz_choice for r in estimate.results)
    if collective:
        header = ["", "key", "interconnect", "time", "algbw", "busbw", "slower"]
        units = ["", "", "", "", "(GB/s)", "(GB/s)", "(times)"]
        right = [False, False, False, True, True, True, True]
    else:
        header = ["", "key", "interconnect", "time", "rate", "slower"]
        units = ["", "", "", "", "(GB/s)", "(times)"]
        right = [False, False, False, True, True, True]
    units[3] = f"({format_band(band(req.op, req.bytes))})"
    if collective:
        header.append("algorithm")
        units.append("/protocol")
        right.append(False)
    if with_step:
        header += ["comm/step", "scaling"]
        units += ["(ratio)", "(%)"]
        right += [True, True]
    rows = [units] + [_row(r, collective, with_step, marked) for r in estimate.results]
    if not marked:
        header, right = header[1:], right[1:]
        rows = [row[1:] for row in rows]
    if not keys:
        at = 1 if marked else 0
        header, right = header[:at] + header[at + 1 :], right[:at] + right[at + 1 :]
        rows = [row[:at] + row[at + 1 :] for row in rows]
    lines = wrap(headline(estimate), width)
    name = header.index("interconnect")
    lines += table_lines(header, rows, right, width, name=name)
    if marked:
        lines.append(QUIZ_NOTE)
    lines.append(COLUMNS_NOTE if collective else TRANSFER_NOTE)
    lines += wrap(estimate.assumptions, width)
    return "\n".join(line[:width].rstrip() for line in lines)


def to_json(estimate: Estimate) -> dict[str, Any]:
    """Return the estimate as the documented JSON object."""
    req = estimate.request
    results: list[dict[str, Any]] = []
    for r in estimate.results:
        item: dict[str, Any] = {
            "key": r.key,
            "name": r.name,
            "seconds": r.seconds,
            "effective_GBps": r.effective_gbps,
            "algbw_GBps": r.algbw_gbps,
            "busbw_GBps": r.busbw_gbps,
            "latency_s": r.latency_s,
            "bandwidth_s": r.bandwidth_s,
            "algorithm": r.algorithm,
            "protocol": r.protocol,
            "channels": r.channels,
            "uncertainty": band(req.op, req.bytes),
        }
        if r.efficiency is not None:
            item["efficiency"] = r.efficiency
        results.append(item)
    return {
        "bytes": req.bytes,
        "op": req.op,
        "nodes": req.nodes,
        "gpus_per_node": req.gpus,
        "results": results,
    }


def _row(r: Result, collective: bool, with_step: bool, marked: bool) -> list[str]:
    rates = [sig3(r.algbw_gbps), sig3(r.busbw_gbps)] if collective else [sig3(r.algbw_gbps)]
    row = [
        QUIZ_MARK if marked and r.quiz_choice else "",
        r.key,
        r.name,
        format_seconds(r.seconds),
        *rates,
        format_slowdown(r.slowdown),
    ]
    if collective:
        row.append(f"{r.algorithm}/{r.protocol}" if r.protocol else r.algorithm)
    if with_step and r.comm_ratio is not None and r.efficiency is not None:
        row += [sig3(r.comm_ratio), f"{sig3(r.efficiency * 100)}%"]
    return row
