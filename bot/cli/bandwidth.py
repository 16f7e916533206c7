"""``quizbot bandwidth SIZE ...`` and ``quizbot bandwidth plan MODEL ...``: times per network."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

# The options table is plain data (bot.bandwidth loads no chart or platform library).
from bot.bandwidth import ESTIMATE, PLAN, Kind, Opt
from bot.bandwidth._options import flag_synopsis

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


# The options only the planner takes, and those only an estimate takes (by their fields).
PLAN_ONLY = tuple(opt.name for opt in PLAN if opt.name not in ESTIMATE)
ESTIMATE_ONLY = tuple(opt.name for opt in ESTIMATE if opt.name not in PLAN)


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
        usage=flag_synopsis(),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "size",
        nargs="*",
        metavar="SIZE",
        help="amount of data, e.g. 140GB or 70B params bf16; or: plan MODEL",
    )
    # Every option is bot.bandwidth's (flag, help, and the chat word its value is read as); the
    # ones both forms take come first, then an estimate's, then the planner's.
    common = parser.add_argument_group("both forms")
    for opt in ESTIMATE:
        if opt.name in PLAN:
            _add_flag(common, opt, _both_help(opt, PLAN[opt.name]))
    common.add_argument("--json", action="store_true", help="print the JSON object instead")
    common.add_argument("--chart", metavar="FILE.png", type=Path, help="also write a PNG chart")
    common.add_argument(
        "--catalogue",
        metavar="FILE",
        type=Path,
        help="YAML file adding or overriding interconnects (default: $QUIZBOT_INTERCONNECTS)",
    )
    estimate = parser.add_argument_group("estimates (quizbot bandwidth SIZE ...)")
    for opt in ESTIMATE:
        if opt.name not in PLAN:
            _add_flag(estimate, opt, _cli_help(opt.help))
    estimate.add_argument(
        "--sweep",
        action="store_true",
        help="every size from 8 B doubling up to SIZE (default 16 GiB), like nccl-tests",
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
    for opt in PLAN:
        if opt.name not in ESTIMATE:
            _add_flag(plan, opt, _cli_help(opt.help))
    parser.set_defaults(handler=run_bandwidth)


def _add_flag(group: argparse._ArgumentGroup, opt: Opt, help: str) -> None:
    """Add one option's flag; its value stays text, read (and refused) as chat reads it."""
    if opt.kind is Kind.SWITCH:
        group.add_argument(opt.cli, dest=opt.name, action="store_true", default=None, help=help)
    else:
        group.add_argument(opt.cli, dest=opt.name, metavar=opt.metavar, help=help)


def _both_help(estimate: Opt, plan: Opt) -> str:
    if estimate.help == plan.help:
        return _cli_help(estimate.help)
    return f"{_cli_help(estimate.help)} (estimates); {_cli_help(plan.help)} (plan)"


def _cli_help(text: str) -> str:
    """Return a help line as argparse's are written: a lower-case start (not GPUs or ZeRO)."""
    first = text.split()[0]
    return text[0].lower() + text[1:] if first[1:].islower() else text


# Planner flags and the chat word each becomes (``--tp 8`` is ``tp=8``); the switches are words.
PLAN_WORDS = {opt.name: opt.key for opt in PLAN if opt.kind is not Kind.SWITCH}
PLAN_SWITCHES = {opt.name: opt.key for opt in PLAN if opt.kind is Kind.SWITCH}
SWITCH_WORDS = tuple(
    dict.fromkeys(opt.key for form in (ESTIMATE, PLAN) for opt in form if opt.kind is Kind.SWITCH)
)

# The chat words of the messages, and the flag each is on the command line.
CLI_FLAGS = {word: opt.cli for form in (PLAN, ESTIMATE) for opt in form for word in opt.words}
_OPTION_WORD = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(map(re.escape, CLI_FLAGS), key=len, reverse=True)) + r")=(\S*)"
)
_SWITCH_WORD = re.compile(r"\b(add|say) (" + "|".join(map(re.escape, SWITCH_WORDS)) + r")\b")
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
    from bot.bandwidth._chart import render_sweep_chart
    from bot.bandwidth._sweep import render_sweep, sweep, sweep_to_json

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
    wrong = _given(args, ESTIMATE_ONLY)
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

    from bot.bandwidth import normalize_op, parse_request
    from bot.bandwidth._errors import Problems

    # Each flag is read on its own and every problem is reported together.
    problems = Problems()
    request = None
    with problems.check():
        request = parse_request(" ".join(args.size))
    # The chat usage text speaks of /bandwidth; here --help is the better pointer.
    problems.usage = HELP_HINT
    changes: dict[str, Any] = {}
    for opt in ESTIMATE:
        value = getattr(args, opt.name, None)
        if value is None or value is False:
            continue
        with problems.check():
            # A flag's value is read as the chat word's: the same limits, the same refusals.
            changes[opt.name] = normalize_op(value) if opt.name == "op" else opt.read(value)
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
