"""``quizbot bandwidth SIZE ...`` and ``quizbot bandwidth plan MODEL ...``: times per network."""

from __future__ import annotations

import argparse
import json
import re
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
  allreduce           the algorithm NCCL would pick: ring, tree (2+ nodes), NVLS (NVSwitch),
                      CollNet with --sharp; --algo forces one (hier: not an NCCL algorithm)
  allgather, reducescatter, broadcast, alltoall

examples:
  quizbot bandwidth 140GB
      how long 140 GB takes over each interconnect of the default comparison
  quizbot bandwidth 70B params bf16 --op allreduce --nodes 16 --gpus 8
      synchronise a 70B model's bf16 gradients across 16 nodes of 8 GPUs
  quizbot bandwidth 1GB --op allreduce --nodes 1 --gpus 8 --over nvlink4,nvlink3,pcie5
      an all-reduce across the 8 GPUs of one box, over each link
  quizbot bandwidth 16GiB --op allreduce --nodes 2 --gpus 8 --over ib-ndr --algo ring
      force NCCL's ring (as NCCL_ALGO=Ring would) to see the network's own busbw
  quizbot bandwidth 13B adam --op allreduce --nodes 16 --gpus 8 --step 0.5 --json
      JSON for scripts, with communication/compute and scaling efficiency
  quizbot bandwidth 140GB --op allreduce --gpus 8 --chart allreduce.png
      also draw the chart (PNG)
  quizbot bandwidth 16GiB --op allreduce --nodes 2 --gpus 8 --over ib-ndr --sweep
      every size from 8 B to 16 GiB like nccl-tests: time, algbw, busbw, algorithm/protocol
  quizbot bandwidth --list
      list the catalogue with the source of every number

training-step planner:
  quizbot bandwidth plan llama3-70b --gpus 128 --tp 8 --pp 2
      a step of Llama 3 70B on 128 H100 per interconnect: time, MFU, idle share
  quizbot bandwidth plan llama3-405b --gpus 8192 --tp 8 --pp 16 --over roce-400,ib-ndr --json
  quizbot bandwidth plan 13B --layers 40 --hidden 5120 --gpus 64 --zero 3 --chart step.png
  quizbot bandwidth plan llama3-70b --gpus 256 --search --over ib-ndr,roce-400
      the fastest layouts that fit in memory, per fabric

The chat command takes the same words: /bandwidth 70B params bf16 allreduce nodes=4 gpus=8,
/bandwidth plan llama3-70b gpus=128 tp=8 pp=2
"""

HELP_HINT = "Examples: quizbot bandwidth --help"
# The planner's whole-number options (``--nics`` serves estimates too, so it is not among them).
PLAN_COUNTS = (
    "gpus_per_node",
    "tp",
    "pp",
    "cp",
    "dp",
    "zero",
    "seq",
    "global_batch",
    "micro_batch",
    "layers",
    "hidden",
    "ffn",
    "heads",
    "kv_heads",
    "vocab",
    "interleave",
    "experts",
    "top_k",
    "ep",
)
PLAN_ONLY = (
    *PLAN_COUNTS,
    "gpu",
    "recompute",
    "fp8",
    "uneven",
    "search",
    "tp_overlap",
    "efficiency",
)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``bandwidth`` subcommand (its ``plan`` form included)."""
    parser = subparsers.add_parser(
        "bandwidth",
        help="estimate transfer, collective and training-step times per interconnect",
        description=(
            "Estimate how long moving SIZE takes over each interconnect, point to point or as\n"
            "a collective priced the way NCCL runs it. Prints a table fastest first, the JSON\n"
            "object with --json, and a PNG chart with --chart. With 'plan MODEL' it prices a\n"
            "whole training step instead. Chat-style words work too:\n"
            "quizbot bandwidth 70B params bf16 allreduce gpus=8"
        ),
        usage=(
            "quizbot bandwidth SIZE [--op OP] [--nodes N] [--gpus G] [--nics K] [--step S]\n"
            "                       [--over K,...] [--sweep] [--json] [--chart FILE.png]\n"
            "       quizbot bandwidth plan MODEL --gpus N [--gpus-per-node G] [--tp T] [--pp P]\n"
            "                       [--cp C] [--dp D] [--zero Z] [--seq S] [--global-batch B]\n"
            "                       [--micro-batch b] [--gpu KEY] [--over K,...] [--json]\n"
            "                       [--chart FILE.png]"
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "size",
        nargs="*",
        metavar="SIZE",
        help="amount of data, e.g. 140GB or 70B params bf16; or: plan MODEL",
    )
    common = parser.add_argument_group("both forms")
    common.add_argument(
        "--gpus",
        metavar="N",
        help="GPUs per node (estimates, default 1); GPUs in all (plan, required)",
    )
    common.add_argument("--nics", metavar="K", help="NICs per node (default: one per GPU)")
    common.add_argument(
        "--over", metavar="K,...", help="interconnect keys to compare, comma-separated"
    )
    common.add_argument("--json", action="store_true", help="print the JSON object instead")
    common.add_argument("--chart", metavar="FILE.png", type=Path, help="also write a PNG chart")
    common.add_argument(
        "--catalogue",
        metavar="FILE",
        type=Path,
        help="YAML file adding or overriding interconnects (default: $QUIZBOT_INTERCONNECTS)",
    )
    estimate = parser.add_argument_group("estimates (quizbot bandwidth SIZE ...)")
    estimate.add_argument(
        "--op",
        metavar="OP",
        help="transfer (default), allreduce, allgather, reducescatter, broadcast, alltoall",
    )
    estimate.add_argument(
        "--nodes", metavar="N", help="nodes taking part (default 2; 1 = inside one box)"
    )
    estimate.add_argument(
        "--step", metavar="S", help="compute seconds per training step, e.g. 0.5 or 350ms"
    )
    estimate.add_argument(
        "--intra", metavar="KEY", help="link between GPUs inside a node (default nvlink4)"
    )
    estimate.add_argument(
        "--sweep",
        action="store_true",
        help="every size from 8 B doubling up to SIZE (default 16 GiB), like nccl-tests",
    )
    estimate.add_argument(
        "--algo",
        metavar="ALGO",
        help="force ring, tree, nvls, collnet or hier (default: the one NCCL would pick)",
    )
    estimate.add_argument(
        "--proto",
        metavar="PROTO",
        help="force NCCL's protocol, ll, ll128 or simple, as NCCL_PROTO does (default: its pick)",
    )
    estimate.add_argument(
        "--sharp",
        action="store_true",
        default=None,
        help="let InfiniBand switches reduce in the network (NCCL's CollNet)",
    )
    estimate.add_argument(
        "--list", action="store_true", help="list the catalogue and the source of every number"
    )
    estimate.add_argument(
        "--write-docs",
        metavar="FILE",
        type=Path,
        help="rewrite the generated tables of FILE (docs/bandwidth.md) from the data files",
    )
    plan = parser.add_argument_group("plan (quizbot bandwidth plan MODEL ...)")
    plan.add_argument("--gpus-per-node", metavar="G", help="GPUs a node (default 8; 72 on gb200)")
    for flag, text in (
        ("--tp", "tensor-parallel size (default: the smallest that fits, up to 8)"),
        ("--pp", "pipeline-parallel stages (default 1)"),
        ("--cp", "context-parallel size (default 1)"),
        ("--dp", "data-parallel size (default: gpus / (tp x pp x cp))"),
        ("--zero", "ZeRO stage 0, 1 (default), 2 or 3"),
        ("--seq", "tokens a sequence (default: the model's)"),
        ("--global-batch", "sequences a step (default: about 4M tokens)"),
        ("--micro-batch", "sequences a micro-batch (default 1)"),
        ("--layers", "a model of your own: transformer layers"),
        ("--hidden", "a model of your own: width"),
        ("--ffn", "a model of your own: feed-forward width (default 4 x hidden)"),
        ("--heads", "a model of your own: attention heads (default hidden / 128)"),
        ("--kv-heads", "a model of your own: key/value heads (default: heads)"),
        ("--vocab", "a model of your own: vocabulary (default 50,257)"),
        ("--interleave", "virtual pipeline stages per GPU (default 1)"),
        ("--experts", "mixture of experts: experts a layer (the preset's, or dense)"),
        ("--top-k", "mixture of experts: experts each token is routed to"),
        ("--ep", "expert-parallel ranks the experts are spread over (default 1)"),
    ):
        plan.add_argument(flag, metavar="N", help=text)
    plan.add_argument("--gpu", metavar="KEY", help="a100, h100 (default), h200, b200, gb200")
    plan.add_argument(
        "--recompute", action="store_true", default=None, help="full activation recomputation"
    )
    plan.add_argument(
        "--fp8",
        action="store_true",
        default=None,
        help="matrix multiplications in FP8 (attention and the rest stay BF16)",
    )
    plan.add_argument(
        "--tp-overlap",
        action="store_true",
        default=None,
        help="TP collectives run under the GEMMs (Megatron-Core's overlap)",
    )
    plan.add_argument(
        "--search",
        action="store_true",
        default=None,
        help="the fastest layouts that fit in memory, per fabric",
    )
    plan.add_argument(
        "--uneven",
        action="store_true",
        default=None,
        help="accept pipeline stages of unequal layers when --pp does not divide them",
    )
    plan.add_argument(
        "--efficiency",
        metavar="E",
        help="one share of the dense BF16 peak for all compute (instead of the compute model)",
    )
    parser.set_defaults(handler=run_bandwidth)


# Planner flags and the chat word each becomes (``--tp 8`` is ``tp=8``); the switches are words.
PLAN_WORDS = {
    "gpus": "gpus",
    "gpus_per_node": "gpn",
    "tp": "tp",
    "pp": "pp",
    "cp": "cp",
    "dp": "dp",
    "zero": "zero",
    "seq": "seq",
    "global_batch": "batch",
    "micro_batch": "micro",
    "layers": "layers",
    "hidden": "hidden",
    "ffn": "ffn",
    "heads": "heads",
    "kv_heads": "kv",
    "vocab": "vocab",
    "interleave": "interleave",
    "experts": "experts",
    "top_k": "top-k",
    "ep": "ep",
    "nics": "nics",
    "gpu": "gpu",
    "over": "over",
    "efficiency": "efficiency",
}
PLAN_SWITCHES = {
    "recompute": "recompute",
    "fp8": "fp8",
    "sharp": "sharp",
    "uneven": "uneven",
    "search": "search",
    "tp_overlap": "tp-overlap",
}


# The chat words of the messages, and the flag each is on the command line.
CLI_FLAGS = {
    **{word: "--" + name.replace("_", "-") for name, word in PLAN_WORDS.items()},
    **{word: "--" + name.replace("_", "-") for name, word in PLAN_SWITCHES.items()},
    "gpus-per-node": "--gpus-per-node",
    "global-batch": "--global-batch",
    "micro-batch": "--micro-batch",
    "kv-heads": "--kv-heads",
    "topk": "--top-k",
    "nodes": "--nodes",
    "step": "--step",
    "intra": "--intra",
    "algo": "--algo",
    "proto": "--proto",
    "op": "--op",
}
_OPTION_WORD = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(map(re.escape, CLI_FLAGS), key=len, reverse=True)) + r")=(\S*)"
)
_SWITCH_WORD = re.compile(r"\b(add|say) (recompute|sharp|uneven|fp8|search|tp-overlap)\b")
_RAISE_WORDS = re.compile(r"\braise (tp|pp|cp|dp) or (tp|pp|cp|dp)\b")
_TRAILING = ".,;:)'\""


def cli_syntax(message: str) -> str:
    """Return a message in the command line's words: ``--zero 3`` for ``zero=3``, and so on.

    The estimator and the planner speak the chat grammar (``gpus=128``, ``add recompute``);
    the terminal user typed flags, so that is what the message names.
    """

    def option(match: re.Match[str]) -> str:
        flag, value = CLI_FLAGS[match[1].lower()], match[2]
        kept = value.rstrip(_TRAILING)
        tail = value[len(kept) :]
        return f"{flag} {kept}{tail}" if kept else f"{flag}{tail}"

    text = _OPTION_WORD.sub(option, message)
    text = _SWITCH_WORD.sub(lambda m: f"{m[1]} {CLI_FLAGS[m[2]]}", text)
    text = _RAISE_WORDS.sub(lambda m: f"raise {CLI_FLAGS[m[1]]} or {CLI_FLAGS[m[2]]}", text)
    return text.replace("such as plan ", "such as quizbot bandwidth plan ")


def run_bandwidth(args: argparse.Namespace) -> int:
    """Print the estimate or the plan (table or JSON), write the chart if asked, return 0.

    Every problem the request has is reported together, in the command line's own words.
    """
    from bot.bandwidth import BandwidthError

    try:
        return _run(args)
    except BandwidthError as exc:
        told = [cli_syntax(problem) for problem in exc.problems]
        raise BandwidthError.of(told, usage=exc.usage) from None


def _run(args: argparse.Namespace) -> int:
    from bot.bandwidth import BandwidthError, load_catalogue, render_table

    catalogue = load_catalogue(args.catalogue)
    if args.write_docs is not None:
        return _write_docs(args.write_docs, catalogue)
    if args.list:
        print(_listing(catalogue))
        return 0
    if getattr(args, "sweep", False):
        return _sweep(args, catalogue)
    if not args.size:
        raise BandwidthError(
            "Give a size, for example: quizbot bandwidth 140GB --op allreduce --gpus 8,"
            " or plan a step: quizbot bandwidth plan llama3-70b --gpus 128."
        )
    if args.size[0].lower() == "plan":
        result, json_of = _plan(args, catalogue)
    else:
        result, json_of = _estimate(args, catalogue)
    from bot.bandwidth._search import Search, render_search

    result = _in_cli_words(result)
    if args.chart is not None:
        _write_chart(result.best if isinstance(result, Search) else result, args.chart)
    if args.json:
        print(json.dumps(json_of(result), indent=2))
    else:
        print(render_search(result) if isinstance(result, Search) else render_table(result))
        if args.chart is not None:
            print(f"chart written to {args.chart}")
    return 0


def _in_cli_words(result: Any) -> Any:
    """Return the estimate or plan with its warnings and assumptions in the command line's words."""
    from dataclasses import replace

    from bot.bandwidth import Estimate, Plan

    if isinstance(result, Plan):
        return replace(
            result,
            warnings=tuple(cli_syntax(w) for w in result.warnings),
            assumptions=cli_syntax(result.assumptions),
        )
    if isinstance(result, Estimate):
        return replace(result, assumptions=cli_syntax(result.assumptions))
    return result


def _sweep(args: argparse.Namespace, catalogue: Any) -> int:
    from bot.bandwidth import BandwidthError
    from bot.bandwidth._sweep import render_sweep, render_sweep_chart, sweep, sweep_to_json

    if args.size and args.size[0].lower() == "plan":
        raise BandwidthError("--sweep is for collectives, not for plan.")
    if not args.size:
        args.size = ["16GiB"]
    if args.op is None and not any(w.lower() in OPS_WORDS for w in args.size):
        args.op = "allreduce"
    wrong = _given(args, PLAN_ONLY)
    if wrong:
        raise BandwidthError(f"{', '.join(wrong)} is for the planner, not for --sweep.")
    request = _request(args, catalogue)
    result = sweep(request, catalogue, request.bytes)
    if args.chart is not None:
        if args.chart.suffix.lower() != ".png":
            raise BandwidthError(
                f"--chart writes PNG; give a name ending in .png, not {args.chart}."
            )
        try:
            args.chart.write_bytes(render_sweep_chart(result))
        except OSError as exc:
            raise BandwidthError(
                f"Cannot write the chart to {args.chart}: {exc.strerror}."
            ) from None
    if args.json:
        print(json.dumps(sweep_to_json(result), indent=2))
    else:
        print(render_sweep(result))
        if args.chart is not None:
            print(f"chart written to {args.chart}")
    return 0


OPS_WORDS = ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "transfer")


def _given(args: argparse.Namespace, names: tuple[str, ...]) -> list[str]:
    return [
        "--" + name.replace("_", "-") for name in names if getattr(args, name, None) is not None
    ]


def _estimate(args: argparse.Namespace, catalogue: Any) -> tuple[Any, Any]:
    from bot.bandwidth import BandwidthError, estimate, to_json

    wrong = _given(args, PLAN_ONLY)
    if wrong:
        raise BandwidthError(
            f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} for the planner:"
            " quizbot bandwidth plan MODEL --gpus N ..."
        )
    return estimate(_request(args, catalogue), catalogue), to_json


def _plan(args: argparse.Namespace, catalogue: Any) -> tuple[Any, Any]:
    from bot.bandwidth import BandwidthError, plan, plan_to_json
    from bot.bandwidth._errors import Problems
    from bot.bandwidth._plan_request import parse_plan

    problems = Problems()
    wrong = _given(args, ("op", "nodes", "step", "intra", "algo", "proto"))
    if wrong:
        problems.found.append(
            f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} for estimates; a plan"
            " takes --gpus, --tp, --pp, --cp,"
            " --dp, --zero, --seq, --global-batch, --micro-batch, --gpu, --over."
        )
    # The flags become the chat words they stand for, so one parse checks them all together.
    words = list(args.size)
    for name, word in PLAN_WORDS.items():
        value = getattr(args, name, None)
        if value is None:
            continue
        if not value.strip() or len(value.split()) > 1:
            flag = "--" + name.replace("_", "-")
            problems.found.append(f"{flag} takes one value without spaces; got {value!r}.")
            continue
        words.append(f"{word}={value.strip()}")
    words += [word for name, word in PLAN_SWITCHES.items() if getattr(args, name, None)]
    request = None
    with problems.check():
        request = parse_plan(" ".join(words))
    problems.usage = HELP_HINT
    problems.raise_any()
    assert request is not None
    if request.search:
        from bot.bandwidth._search import search, search_to_json

        return search(request, catalogue), search_to_json
    try:
        return plan(request, catalogue), plan_to_json
    except BandwidthError as exc:
        raise exc.with_usage(HELP_HINT) from None


def _request(args: argparse.Namespace, catalogue: Any = None) -> Any:
    """Return the estimate's request from the words and flags; with ``catalogue``, its keys
    checked too. Every problem is reported at once."""
    from dataclasses import replace

    from bot.bandwidth import (
        normalize_op,
        parse_count,
        parse_over,
        parse_request,
        parse_step,
    )
    from bot.bandwidth._errors import Problems

    # Each flag is read on its own and every problem is reported together.
    problems = Problems()
    request = None
    with problems.check():
        request = parse_request(" ".join(args.size))
    # The chat usage text speaks of /bandwidth; here --help is the better pointer.
    problems.usage = HELP_HINT
    changes: dict[str, Any] = {}
    if args.op is not None:
        with problems.check():
            changes["op"] = normalize_op(args.op)
    for name in ("nodes", "gpus", "nics"):
        value = getattr(args, name)
        if value is not None:
            with problems.check():
                changes[name] = parse_count(name, value)
    if args.step is not None:
        with problems.check():
            changes["step"] = parse_step(args.step)
    if args.over is not None:
        with problems.check():
            changes["over"] = parse_over(args.over)
    if args.intra is not None:
        changes["intra"] = args.intra
    if args.algo is not None:
        changes["algo"] = args.algo
    if args.proto is not None:
        changes["proto"] = args.proto
    if args.sharp:
        changes["sharp"] = True
    if request is not None and changes:
        # The values that did parse are checked too (their ranges), before anything is told.
        with problems.check():
            request = replace(request, **changes)
    over = changes.get("over", request.over if request is not None else ())
    intra = args.intra if args.intra is not None else getattr(request, "intra", None)
    if catalogue is not None:
        # Unknown interconnects are told together (the estimator stops at the first).
        for key in (*over, *([intra] if intra else [])):
            if key.strip().lower() != "all":
                with problems.check():
                    catalogue.get(key)
    problems.raise_any()
    return request


def _write_chart(result: Any, path: Path) -> None:
    from bot.bandwidth import BandwidthError, render_chart

    if path.suffix.lower() != ".png":
        raise BandwidthError(f"--chart writes PNG; give a file name ending in .png, not {path}.")
    png = render_chart(result)
    try:
        path.write_bytes(png)
    except OSError as exc:
        raise BandwidthError(f"Cannot write the chart to {path}: {exc.strerror}.") from None


def _write_docs(path: Path, catalogue: Any) -> int:
    from bot.bandwidth import BandwidthError, load_hardware
    from bot.bandwidth._docs import update_docs

    try:
        text = path.read_text(encoding="utf-8")
        path.write_text(update_docs(text, catalogue, load_hardware()), encoding="utf-8")
    except OSError as exc:
        raise BandwidthError(f"Cannot rewrite {path}: {exc.strerror}.") from None
    print(f"generated tables rewritten in {path}")
    return 0


def _listing(catalogue: Any) -> str:
    lines = [f"{len(catalogue)} interconnects ({catalogue.origin});"]
    lines.append(f"default comparison: {', '.join(catalogue.default_comparison)}")
    for ic in catalogue:
        rdma = "RDMA" if ic.rdma else "no RDMA"
        lines.append("")
        lines.append(
            f"{ic.key}: {ic.name} [{ic.family}, {ic.purpose}, {rdma}, NCCL transport"
            f" {ic.transport}]{', shared medium' if ic.shared_medium else ''}"
        )
        coll = ic.collective_bytes_per_s / 1e9
        lines.append(
            f"  rate {ic.rate_gbps:g} Gb/s per direction x efficiency {ic.efficiency:g}"
            f" = {ic.payload_bytes_per_s / 1e9:.3g} GB/s; NCCL collectives {coll:.3g} GB/s;"
            f" latency {ic.latency_us:g} us"
        )
        if ic.nvls_efficiency is not None:
            lines.append(f"  NVLS: {ic.nvls_efficiency:g} of the rate per GPU")
        if ic.sharp:
            lines.append("  SHARP: switches reduce in the network (--sharp)")
        if ic.encoding:
            lines.append(f"  encoding: {ic.encoding}")
        for what in ("rate", "efficiency", "latency", "collective", "transport", "nvls", "sharp"):
            source = ic.source(what)
            if source:
                lines.append(f"  {what} source: {source}")
    return "\n".join(lines)
