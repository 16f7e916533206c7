"""A size sweep like nccl-tests prints: time, algbw and busbw from 8 bytes up, per interconnect."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.bandwidth import _words as say
from bot.bandwidth._catalogue import Catalogue
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._estimate import Result, estimate
from bot.bandwidth._format import sig3, wrap
from bot.bandwidth._request import BandwidthRequest
from bot.bandwidth._sizes import describe_bytes

SMALLEST = 8
LARGEST = 16 * 2**30  # nccl-tests' -b 8 -e 16G -f 2


@dataclass(frozen=True, slots=True)
class SweepRow:
    """One size: its bytes and each interconnect's result, in the sweep's key order."""

    bytes: int
    results: tuple[Result, ...]


@dataclass(frozen=True, slots=True)
class Sweep:
    """Every size from ``SMALLEST`` doubling up to the request's size, per interconnect."""

    request: BandwidthRequest
    keys: tuple[str, ...]
    names: tuple[str, ...]
    families: tuple[str, ...]
    rows: tuple[SweepRow, ...]
    assumptions: str


def sizes_up_to(largest: int) -> tuple[int, ...]:
    """Return 8 B, 16 B, ... doubling up to ``largest`` (at least 8 B, at most 16 GiB)."""
    top = max(SMALLEST, min(largest, LARGEST))
    out = [SMALLEST]
    while out[-1] * 2 <= top:
        out.append(out[-1] * 2)
    return tuple(out)


def sweep(request: BandwidthRequest, catalogue: Catalogue, largest: int = LARGEST) -> Sweep:
    """Return the request's collective at every size from 8 B doubling up to ``largest``.

    Interconnects: those of ``over=``, else only the fastest of the comparison at the largest
    size (one table, as nccl-tests prints one).
    """
    if request.op == "transfer":
        raise BandwidthError(say.SWEEP_NEEDS_COLLECTIVE)
    sizes = sizes_up_to(largest)
    top = estimate(replace(request, bytes=sizes[-1]), catalogue)
    keys = request.over or (top.fastest.key,)
    if "all" in keys:
        keys = tuple(r.key for r in top.results)
    ordered = tuple(dict.fromkeys(keys))
    pinned = replace(request, over=ordered)
    rows = []
    for size in sizes:
        result = estimate(replace(pinned, bytes=size), catalogue)
        by_key = {r.key: r for r in result.results}
        rows.append(SweepRow(size, tuple(by_key[k] for k in ordered)))
    first = rows[-1].results
    return Sweep(
        request,
        ordered,
        tuple(r.name for r in first),
        tuple(r.family for r in first),
        tuple(rows),
        top.assumptions,
    )


def render_sweep(result: Sweep, width: int = 100) -> str:
    """Return one nccl-tests-style table per interconnect, units in the header."""
    lines: list[str] = []
    req = result.request
    where = f"{req.nodes} node{'s' if req.nodes > 1 else ''} x {req.gpus} GPUs"
    top = describe_bytes(result.rows[-1].bytes)
    lines += wrap(f"{req.op} from 8 B to {top}, doubling, on {where}", width)
    for i, key in enumerate(result.keys):
        lines.append("")
        lines.append(f"{key}: {result.names[i]}")
        lines.append(
            f"{'size':>14}  {'time':>10}  {'algbw':>8}  {'busbw':>8}  {'channels':>8}"
            "  algorithm/protocol"
        )
        lines.append(f"{'(B)':>14}  {'(us)':>10}  {'(GB/s)':>8}  {'(GB/s)':>8}  {'(count)':>8}")
        for row in result.rows:
            r = row.results[i]
            algo = f"{r.algorithm}/{r.protocol}" if r.protocol else r.algorithm
            lines.append(
                f"{row.bytes:>14,}  {sig3(r.seconds * 1e6):>10}  {sig3(r.algbw_gbps):>8}"
                f"  {sig3(r.busbw_gbps):>8}  {r.channels or '-':>8}  {algo}"
            )
    lines.append("")
    lines += wrap(result.assumptions, width)
    return "\n".join(line[:width].rstrip() for line in lines)


def sweep_to_json(result: Sweep) -> dict[str, object]:
    """Return the sweep as JSON: the request and, per interconnect, one entry per size."""
    return {
        "op": result.request.op,
        "nodes": result.request.nodes,
        "gpus_per_node": result.request.gpus,
        "sweep": [
            {
                "key": key,
                "name": result.names[i],
                "points": [
                    {
                        "bytes": row.bytes,
                        "seconds": row.results[i].seconds,
                        "algbw_GBps": row.results[i].algbw_gbps,
                        "busbw_GBps": row.results[i].busbw_gbps,
                        "algorithm": row.results[i].algorithm,
                        "protocol": row.results[i].protocol,
                        "channels": row.results[i].channels,
                    }
                    for row in result.rows
                ],
            }
            for i, key in enumerate(result.keys)
        ],
    }
