"""``quizbot bandwidth SIZE ...``: transfer and collective time estimates per interconnect."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

EXAMPLES = """\
sizes:
  140GB  1.5TiB  800MB  1,000 GB     bytes (GB = 10^9 bytes, GiB = 2^30)
  400Gb  100 Gbit                    bits (a lower-case b after an upper-case prefix)
  70B params bf16  7B grads fp32     parameters x bytes per parameter (bf16 if no type)
  13B adam                           16 bytes a parameter: bf16 weights and gradients,
                                     fp32 master copy, two fp32 Adam moments

operations:
  transfer (default)  one point-to-point link: latency + size / (rate x efficiency)
  allreduce           faster of ring and tree; hierarchical over NVLink when --gpus > 1
  allgather, reducescatter, broadcast, alltoall

examples:
  quizbot bandwidth 140GB
      how long 140 GB takes over each interconnect of the default comparison
  quizbot bandwidth 70B params bf16 --op allreduce --nodes 4 --gpus 8
      synchronise a 70B model's bf16 gradients across 4 nodes of 8 GPUs
  quizbot bandwidth 13B adam --op allreduce --nodes 16 --gpus 8 --step 0.5
      add communication/compute and scaling efficiency for a 0.5 s compute step
  quizbot bandwidth 400Gb --over ib-ndr,roce-400,100gbe,1gbe,wifi6
      compare only these interconnects
  quizbot bandwidth 8GiB --op allreduce --nodes 8 --over nvlink4,nvlink3,pcie5
      8 GPUs in one box, one rank each, compared over NVLink and PCIe
  quizbot bandwidth 1MB --op alltoall --nodes 32 --gpus 8 --nics 4 --json
      JSON for scripts, with 4 NICs shared by 8 GPUs per node
  quizbot bandwidth 140GB --op allreduce --gpus 8 --chart allreduce.png
      also draw the chart (PNG)
  quizbot bandwidth 1GB --catalogue my-links.yaml --over my-ib,1gbe
      add or override interconnects from a file (same as QUIZBOT_INTERCONNECTS)
  quizbot bandwidth --list
      list the catalogue with the source of every number

The chat command takes the same request: /bandwidth 70B params bf16 allreduce nodes=4 gpus=8
"""


HELP_HINT = "Examples: quizbot bandwidth --help"


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``bandwidth`` subcommand."""
    parser = subparsers.add_parser(
        "bandwidth",
        help="estimate transfer and collective times per interconnect (table, JSON, chart)",
        description=(
            "Estimate how long moving SIZE takes over each interconnect, point to point or as\n"
            "a collective such as the ring all-reduce that synchronises gradients. Prints a\n"
            "table fastest first, the JSON object with --json, and a PNG chart with --chart.\n"
            "Chat-style words work too: quizbot bandwidth 70B params bf16 allreduce gpus=8"
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "size", nargs="*", metavar="SIZE", help="amount of data, e.g. 140GB or 70B params bf16"
    )
    parser.add_argument(
        "--op",
        metavar="OP",
        help="transfer (default), allreduce, allgather, reducescatter, broadcast, alltoall",
    )
    parser.add_argument("--nodes", metavar="N", help="nodes taking part (default 2)")
    parser.add_argument("--gpus", metavar="G", help="GPUs per node (default 1)")
    parser.add_argument("--nics", metavar="K", help="NICs per node (default: one per GPU)")
    parser.add_argument(
        "--step", metavar="S", help="compute seconds per training step, e.g. 0.5 or 350ms"
    )
    parser.add_argument(
        "--over", metavar="K,...", help="interconnect keys to compare, comma-separated"
    )
    parser.add_argument(
        "--intra", metavar="KEY", help="link between GPUs inside a node (default nvlink4)"
    )
    parser.add_argument("--json", action="store_true", help="print the JSON object instead")
    parser.add_argument("--chart", metavar="FILE.png", type=Path, help="also write a PNG chart")
    parser.add_argument(
        "--catalogue",
        metavar="FILE",
        type=Path,
        help="YAML file adding or overriding interconnects (default: $QUIZBOT_INTERCONNECTS)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the catalogue and the source of every number"
    )
    parser.set_defaults(handler=run_bandwidth)


def run_bandwidth(args: argparse.Namespace) -> int:
    """Print the estimate (table or JSON), write the chart if asked, and return 0."""
    from bot.bandwidth import BandwidthError, estimate, load_catalogue, render_table, to_json

    catalogue = load_catalogue(args.catalogue)
    if args.list:
        print(_listing(catalogue))
        return 0
    if not args.size:
        raise BandwidthError(
            "Give a size, for example: quizbot bandwidth 140GB --op allreduce --gpus 8"
            " (see quizbot bandwidth --help)."
        )
    request = _request(args)
    result = estimate(request, catalogue)
    if args.chart is not None:
        _write_chart(result, args.chart)
    if args.json:
        print(json.dumps(to_json(result), indent=2))
    else:
        print(render_table(result))
        if args.chart is not None:
            print(f"chart written to {args.chart}")
    return 0


def _request(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from bot.bandwidth import (
        BandwidthError,
        normalize_op,
        parse_count,
        parse_over,
        parse_request,
        parse_step,
    )

    text = " ".join(args.size)
    try:
        request = parse_request(text)
    except BandwidthError as exc:
        # The chat usage text speaks of /bandwidth; here --help is the better pointer.
        raise BandwidthError(exc.message, usage=HELP_HINT) from None
    changes: dict[str, Any] = {}
    if args.op is not None:
        changes["op"] = normalize_op(args.op)
    for name in ("nodes", "gpus", "nics"):
        value = getattr(args, name)
        if value is not None:
            changes[name] = parse_count(name, value)
    if args.step is not None:
        changes["step"] = parse_step(args.step)
    if args.over is not None:
        changes["over"] = parse_over(args.over)
    if args.intra is not None:
        changes["intra"] = args.intra
    return replace(request, **changes) if changes else request


def _write_chart(result: Any, path: Path) -> None:
    from bot.bandwidth import BandwidthError, render_chart

    if path.suffix.lower() != ".png":
        raise BandwidthError(f"--chart writes PNG; give a file name ending in .png, not {path}.")
    png = render_chart(result)
    try:
        path.write_bytes(png)
    except OSError as exc:
        raise BandwidthError(f"Cannot write the chart to {path}: {exc.strerror}.") from None


def _listing(catalogue: Any) -> str:
    lines = [f"{len(catalogue)} interconnects ({catalogue.origin});"]
    lines.append(f"default comparison: {', '.join(catalogue.default_comparison)}")
    for ic in catalogue:
        rdma = "RDMA" if ic.rdma else "no RDMA"
        lines.append("")
        lines.append(
            f"{ic.key}: {ic.name} [{ic.family}, {ic.purpose}, {rdma}]"
            f"{', shared medium' if ic.shared_medium else ''}"
        )
        lines.append(
            f"  rate {ic.rate_gbps:g} Gb/s per direction x efficiency {ic.efficiency:g}"
            f" = {ic.payload_bytes_per_s / 1e9:.3g} GB/s; latency {ic.latency_us:g} us"
        )
        if ic.encoding:
            lines.append(f"  encoding: {ic.encoding}")
        for what in ("rate", "efficiency", "latency"):
            source = ic.source(what)
            if source:
                lines.append(f"  {what} source: {source}")
    return "\n".join(lines)
