"""Every option of /bandwidth and of its planner, written once.

Each option has its request field, its chat word (``nodes=4``), its command-line flag
(``--nodes 4``), its kind, default, limits, choices and help. The chat parsers
(``parse_request``, ``parse_plan``), the requests' own checks, ``quizbot bandwidth``'s argparse,
the chat grammar's typed options (Discord's slash command), the usage texts, Slack's usage hint
(deploy/slack-manifest.yaml, checked by a test) and docs/bandwidth.md's tables all read these
tables, so a limit or an option is changed here and nowhere else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import TypeVar

from bot.bandwidth import _words as say
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._models import ALGORITHMS, LAUNCH_CHOICES, PROTOCOL_CHOICES

T = TypeVar("T")

OPS = ("transfer", "allreduce", "allgather", "reducescatter", "broadcast", "alltoall")


class Kind(StrEnum):
    """What an option's value is, and so how it is read and checked."""

    COUNT = "count"  # a whole number from low to high
    SECONDS = "seconds"  # a time (0.5, 350ms, 2min): more than low, at most high
    NUMBER = "number"  # a number from low to high
    CHOICE = "choice"  # one word of choices
    SWITCH = "switch"  # on or off; the bare word means on
    KEYS = "keys"  # comma-separated catalogue keys (low..high characters)
    KEY = "key"  # one catalogue key (low..high characters)


@dataclass(frozen=True, slots=True)
class Opt:
    """One option: how each face spells it, what it holds, its limits and its help."""

    name: str  # the request's field
    kind: Kind
    help: str  # one line (at most 100 characters: Discord's option description)
    word: str = ""  # the chat word, if not the name with dashes
    aliases: tuple[str, ...] = ()  # other chat words for it
    flag: str = ""  # the command-line flag, if not --name with dashes
    metavar: str = "N"
    default: object = None
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    example: str = ""  # a value, for the typed form's usage
    keyed: bool = True  # False: the chat form names it by its value alone (an operation)
    required: bool = False
    listed: bool = True  # the usage line lists it (False: the usage's prose tells it)

    @property
    def key(self) -> str:
        """Return the chat word: ``nodes`` in ``nodes=4``."""
        return self.word or self.name.replace("_", "-")

    @property
    def cli(self) -> str:
        """Return the command-line flag: ``--nodes``."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def words(self) -> tuple[str, ...]:
        """Return every chat word for it, its own first."""
        return (self.key, *self.aliases)

    @property
    def hint(self) -> str:
        """Return how a usage line writes it: ``[nodes=N]``, ``[sharp]``, ``[op]``, ``gpus=N``."""
        if self.required:
            return f"{self.key}={self.metavar}"
        if self.kind is Kind.SWITCH or not self.keyed:
            return f"[{self.key}]"
        return f"[{self.key}={self.metavar}]"

    @property
    def usage(self) -> str:
        """Return how the text usage writes it: ``[algo=ring|tree]``, ``[zero=0|1|2|3]``."""
        if self.kind is Kind.CHOICE and self.keyed:
            return f"[{self.key}={'|'.join(c for c in self.choices if c != 'auto')}]"
        if self.kind is Kind.COUNT and self.low is not None and (self.high or 0) - self.low < 5:
            values = range(int(self.low), int(self.high or 0) + 1)
            return f"[{self.key}={'|'.join(map(str, values))}]"
        return self.hint

    @property
    def flag_usage(self) -> str:
        """Return how the command line's usage writes it: ``[--nodes N]``, ``--gpus N``."""
        written = self.cli if self.kind is Kind.SWITCH else f"{self.cli} {self.metavar}"
        return written if self.required else f"[{written}]"

    def read(self, text: str, word: str = "") -> object:
        """Return the value in ``text`` (as typed in chat or after the flag), or raise.

        ``word`` is the chat word it was given with, which a refusal names (an alias too).
        """
        word = word or self.key
        match self.kind:
            case Kind.COUNT:
                return parse_count(word, text)
            case Kind.SECONDS:
                return parse_step(text)
            case Kind.NUMBER:
                return parse_number(word, text)
            case Kind.SWITCH:
                return parse_switch(word, text)
            case Kind.KEYS:
                return parse_over(text)
        return text

    def check(self, value: object) -> object:
        """Return ``value`` checked against the limits and choices, or raise BandwidthError."""
        match self.kind:
            case Kind.COUNT:
                return check_count(self, value)
            case Kind.SECONDS:
                return check_seconds(self, value)
            case Kind.NUMBER:
                return check_number(self, value)
            case Kind.CHOICE:
                word = str(value).strip().lower() or str(self.default)
                if word not in self.choices:
                    choices = ", ".join(self.choices)
                    raise BandwidthError(
                        say.CHOICE_ONE_OF.format(key=self.key, choices=choices, word=word)
                    )
                return word
            case Kind.SWITCH:
                if not isinstance(value, bool):
                    raise BandwidthError(say.SWITCH_ON_OFF.format(key=self.key))
        return value


class Options:
    """The options of one form, in the order usage texts and typed forms list them."""

    def __init__(self, opts: tuple[Opt, ...]) -> None:
        self.all = opts
        self._named = {opt.name: opt for opt in opts}

    def __iter__(self) -> Iterator[Opt]:
        return iter(self.all)

    def __getitem__(self, name: str) -> Opt:
        return self._named[name]

    def __contains__(self, name: object) -> bool:
        return name in self._named

    def by_word(self) -> dict[str, Opt]:
        """Return each chat word (aliases too) and its option."""
        return {word: opt for opt in self for word in opt.words}

    def of(self, *kinds: Kind) -> Iterator[Opt]:
        """Return the options of these kinds."""
        return (opt for opt in self if opt.kind in kinds)


# Upper bounds shared by several options.
MAX_PLAN_COUNT = 1_000_000  # GPUs, and the sizes a layout is made of
MAX_DIM = 100_000  # a model's layers, width and heads


def _over(**kw: object) -> Opt:
    """The interconnects to compare, which an estimate and a plan take alike."""
    return Opt(
        "over",
        Kind.KEYS,
        "Interconnects to compare, such as ib-hdr,1gbe (or all)",
        metavar="k1,k2",
        default=(),
        low=1,
        high=500,
        **kw,  # type: ignore[arg-type]
    )


# /bandwidth SIZE ...: an estimate.
ESTIMATE = Options(
    (
        Opt(
            "op",
            Kind.CHOICE,
            "What moves the data (default: transfer, one point-to-point link)",
            metavar="OP",
            default="transfer",
            choices=OPS,
            example="allreduce",
            keyed=False,
        ),
        Opt(
            "nodes",
            Kind.COUNT,
            "Nodes taking part (default 2)",
            default=2,
            low=1,
            high=100_000,
            example="4",
        ),
        Opt(
            "gpus",
            Kind.COUNT,
            "GPUs per node (default 1)",
            metavar="G",
            default=1,
            low=1,
            high=1_024,
            example="8",
        ),
        Opt(
            "nics",
            Kind.COUNT,
            "Network cards per node (default one per GPU)",
            metavar="K",
            low=1,
            high=1_024,
            example="8",
        ),
        Opt(
            "step",
            Kind.SECONDS,
            "Compute seconds per training step, such as 0.5 or 350ms: adds scaling efficiency",
            metavar="S",
            low=0,
            high=1_000_000,
            example="0.5",
        ),
        _over(example="ib-hdr"),
        Opt(
            "intra",
            Kind.KEY,
            "The link inside a node (default nvlink4), such as pcie5",
            metavar="KEY",
            default="nvlink4",
            low=1,
            high=40,
            example="nvlink4",
        ),
        Opt(
            "algo",
            Kind.CHOICE,
            "Force an algorithm (default: the one NCCL would pick)",
            metavar="A",
            default="auto",
            choices=ALGORITHMS,
            example="ring",
        ),
        Opt(
            "proto",
            Kind.CHOICE,
            "Force NCCL's protocol, as NCCL_PROTO does (default: the one NCCL would pick)",
            metavar="P",
            default="auto",
            choices=PROTOCOL_CHOICES,
            example="simple",
        ),
        Opt(
            "launch",
            Kind.CHOICE,
            "single: one thread launches every GPU of a node, as nccl-tests -g does (default each)",
            metavar="L",
            default="each",
            choices=LAUNCH_CHOICES,
            example="single",
        ),
        Opt(
            "sharp",
            Kind.SWITCH,
            "Let InfiniBand switches do the reduction (SHARP, CollNet)",
            default=False,
        ),
    )
)


def _plan_count(name: str, help: str, **kw: object) -> Opt:
    return Opt(name, Kind.COUNT, help, low=1, high=MAX_PLAN_COUNT, **kw)  # type: ignore[arg-type]


def _dim(name: str, help: str, **kw: object) -> Opt:
    return Opt(name, Kind.COUNT, help, low=1, high=MAX_DIM, **kw)  # type: ignore[arg-type]


# /bandwidth plan MODEL ...: a training step. The usage line lists them in this order, up to the
# model's own shape and the rest, which its prose tells.
PLAN = Options(
    (
        _plan_count("gpus", "GPUs in all", required=True),
        _plan_count(
            "tp", "tensor-parallel size (default: the smallest that fits, up to 8)", metavar="T"
        ),
        _plan_count("pp", "pipeline-parallel stages (default 1)", metavar="P", default=1),
        _plan_count("cp", "context-parallel size (default 1)", metavar="C", default=1),
        _plan_count("dp", "data-parallel size (default: gpus / (tp x pp x cp))", metavar="D"),
        Opt(
            "zero",
            Kind.COUNT,
            "ZeRO stage 0, 1 (default), 2 or 3",
            metavar="Z",
            default=1,
            low=0,
            high=3,
            example="1",
        ),
        Opt(
            "seq",
            Kind.COUNT,
            "tokens a sequence (default: the model's)",
            metavar="S",
            low=1,
            high=10_000_000,
        ),
        Opt(
            "global_batch",
            Kind.COUNT,
            "sequences a step (default: about 4M tokens)",
            word="batch",
            aliases=("global-batch",),
            metavar="B",
            low=1,
            high=100_000_000,
        ),
        _plan_count(
            "micro_batch",
            "sequences a micro-batch (default 1)",
            word="micro",
            aliases=("micro-batch",),
            metavar="b",
            default=1,
        ),
        Opt(
            "gpu",
            Kind.KEY,
            "a100, h100 (default), h200, b200, gb200",
            metavar="KEY",
            low=1,
            high=40,
        ),
        _over(),
        _plan_count(
            "gpus_per_node",
            "GPUs a node (default 8; 72 on gb200)",
            word="gpn",
            aliases=("gpus-per-node",),
            metavar="G",
        ),
        _plan_count("nics", "Network cards per node (default one per GPU)", metavar="K"),
        Opt("recompute", Kind.SWITCH, "full activation recomputation", default=False),
        Opt(
            "fp8",
            Kind.SWITCH,
            "matrix multiplications in FP8 (attention and the rest stay BF16)",
            default=False,
        ),
        Opt(
            "sharp",
            Kind.SWITCH,
            "InfiniBand switches reduce DP and TP traffic in the network (off unless asked)",
            default=False,
        ),
        Opt(
            "uneven",
            Kind.SWITCH,
            "accept pipeline stages of unequal layers when pp does not divide them",
            default=False,
        ),
        Opt(
            "search",
            Kind.SWITCH,
            "the fastest layouts that fit in memory, per fabric",
            default=False,
        ),
        Opt(
            "tp_overlap",
            Kind.SWITCH,
            "TP collectives run under the GEMMs (Megatron-Core's overlap)",
            default=False,
        ),
        _dim("layers", "a model of your own: transformer layers", metavar="L", listed=False),
        _dim("hidden", "a model of your own: width", metavar="H", listed=False),
        _dim("ffn", "a model of your own: feed-forward width (default 4 x hidden)", listed=False),
        _dim("heads", "a model of your own: attention heads (default hidden / 128)", listed=False),
        _dim(
            "kv_heads",
            "a model of your own: key/value heads (default: heads)",
            word="kv",
            aliases=("kv-heads",),
            listed=False,
        ),
        Opt(
            "vocab",
            Kind.COUNT,
            "a model of your own: vocabulary (default 50,257)",
            low=1,
            high=10_000_000,
            listed=False,
        ),
        _plan_count(
            "experts",
            "mixture of experts: experts a layer (the preset's, or dense)",
            metavar="E",
            listed=False,
        ),
        _plan_count(
            "top_k",
            "mixture of experts: experts each token is routed to",
            aliases=("topk",),
            metavar="K",
            listed=False,
        ),
        _plan_count(
            "ep",
            "expert-parallel ranks the experts spread over (default 1)",
            default=1,
            listed=False,
        ),
        _plan_count(
            "interleave", "virtual pipeline stages per GPU (default 1)", default=1, listed=False
        ),
        Opt(
            "efficiency",
            Kind.NUMBER,
            "one share of the dense BF16 peak for all compute (instead of the compute model)",
            metavar="E",
            low=0.01,
            high=1,
            listed=False,
        ),
    )
)


USAGE_WIDTH = 95


def synopsis(head: str, form: Options, *, width: int = USAGE_WIDTH) -> str:
    """Return ``Usage: HEAD [option] ...``, the options the form lists, wrapped under HEAD's last
    word: the first lines of the chat usage texts."""
    first = f"Usage: {head}"
    indent = len(first) - len(head.split()[-1])
    return wrap(first, [opt.usage for opt in form if opt.listed], indent, width)


# The options a one-line summary of the planner names (the chat usage's "or:", Slack's hint).
BRIEF = ("gpus", "tp", "pp", "cp", "dp", "zero", "seq", "global_batch", "gpu", "over")


def brief(form: Options) -> list[str]:
    """Return the hints of the options a one-line summary names (``gpus=N [tp=T] ...``)."""
    return [opt.hint for opt in form if opt.name in BRIEF]


def flag_synopsis(width: int = 88) -> str:
    """Return ``quizbot bandwidth``'s usage: each form's listed options by their flags.

    argparse writes ``usage: `` before the first line; the options line up under SIZE and MODEL.
    """
    lead = " " * len("usage: ")
    indent = len("usage: quizbot bandwidth ")
    estimate = [opt.flag_usage for opt in ESTIMATE if opt.listed]
    estimate += ["[--sweep]", "[--json]", "[--chart FILE.png]"]
    planned = [opt.flag_usage for opt in PLAN if opt.listed]
    planned += ["[--json]", "[--chart FILE.png]"]
    return "\n".join(
        (
            wrap(lead + "quizbot bandwidth SIZE", estimate, indent, width)[len(lead) :],
            wrap(lead + "quizbot bandwidth plan MODEL", planned, indent, width),
        )
    )


def accepts(opt: Opt) -> str:
    """Return what an option takes, in words: its limits or its choices (the docs' tables)."""
    match opt.kind:
        case Kind.COUNT:
            return f"{int(opt.low or 0):,} to {int(opt.high or 0):,}"
        case Kind.SECONDS:
            return f"more than {opt.low:g}, at most {int(opt.high or 0):,} seconds"
        case Kind.NUMBER:
            return f"{opt.low:g} to {opt.high:g}"
        case Kind.CHOICE:
            return ", ".join(f"`{c}`" for c in opt.choices)
        case Kind.SWITCH:
            return "the word alone (or `=on`, `=off`)"
        case Kind.KEYS:
            return "catalogue keys, comma-separated, or `all`"
    return "a catalogue key"


def options_markdown(form: Options) -> str:
    """Return a form's options as a Markdown table: chat, terminal, what each takes, meaning."""
    lines = ["| chat | terminal | takes | meaning |", "| --- | --- | --- | --- |"]
    for opt in form:
        chat = opt.key if not opt.keyed else opt.hint.strip("[]")
        chat = ", ".join(f"`{w}`" for w in (chat, *(f"{a}=" for a in opt.aliases)))
        flag = opt.cli if opt.kind is Kind.SWITCH else f"{opt.cli} {opt.metavar}"
        lines.append(f"| {chat} | `{flag}` | {accepts(opt)} | {opt.help} |")
    return "\n".join(lines) + "\n"


def usage_hint() -> str:
    """Return the one line Slack shows under /bandwidth as it is typed (the app's manifest)."""
    estimate = " ".join(["SIZE", *(opt.hint for opt in ESTIMATE)])
    return f"{estimate} | {' '.join(['plan MODEL', *brief(PLAN)])}"


def wrap(first: str, words: list[str], indent: int, width: int = USAGE_WIDTH) -> str:
    """Return ``first`` and the words after it, a new line (indented) before one past width."""
    lines = [first]
    for word in words:
        if len(lines[-1]) + 1 + len(word) > width:
            lines.append(" " * indent + word)
        else:
            lines[-1] += " " + word
    return "\n".join(lines)


def default(form: Options, name: str, kind: type[T]) -> T:
    """Return an option's default value, which is a ``kind``."""
    value = form[name].default
    assert isinstance(value, kind), name
    return value


# ---------------------------------------------------------------- reading and checking

_INT_RE = re.compile(r"[0-9][0-9_,]*\Z", re.ASCII)
_STEP_RE = re.compile(
    r"(?P<num>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]{1,3})?)\s*(?P<unit>s|sec|ms|us|µs|min|h)?\Z",
    re.ASCII | re.IGNORECASE,
)
_STEP_UNITS = {
    "s": Decimal(1),
    "sec": Decimal(1),
    "ms": Decimal("0.001"),
    "us": Decimal("0.000001"),
    "µs": Decimal("0.000001"),
    "min": Decimal(60),
    "h": Decimal(3600),
}
_YES = ("yes", "on", "true", "1")
_NO = ("no", "off", "false", "0")


def parse_switch(name: str, text: str) -> bool:
    """Return the on/off value in ``text`` for option ``name`` (``yes``, ``off``, ...)."""
    word = text.strip().lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise BandwidthError(say.SWITCH_ON_OFF_GOT.format(key=name, text=text))


def parse_count(name: str, text: str) -> int:
    """Return the whole number in ``text`` for option ``name``, or raise BandwidthError."""
    cleaned = text.strip()
    if not _INT_RE.match(cleaned):
        raise BandwidthError(say.COUNT_WHOLE_GOT.format(key=name, text=text))
    return int(re.sub(r"[_,]", "", cleaned))


def parse_number(name: str, text: str) -> float:
    """Return the number in ``text`` for option ``name``, or raise BandwidthError."""
    try:
        return float(text)
    except ValueError:
        raise BandwidthError(say.NUMBER_GOT.format(key=name, text=text)) from None


def parse_step(text: str) -> float:
    """Return the seconds in ``text`` (``0.5``, ``350ms``, ``2s``, ``1.5min``)."""
    match = _STEP_RE.match(text.strip())
    if match is None:
        raise BandwidthError(say.STEP_GOT.format(text=text))
    unit = (match["unit"] or "s").lower()
    return check_seconds(ESTIMATE["step"], float(Decimal(match["num"]) * _STEP_UNITS[unit]))


def parse_over(text: str) -> tuple[str, ...]:
    """Return the interconnect keys in a comma-separated list such as ``ib-hdr,1gbe``."""
    keys = tuple(k.strip().lower() for k in text.split(",") if k.strip())
    if not keys:
        raise BandwidthError(say.OVER_NEEDS_KEYS)
    return keys


def check_count(opt: Opt, value: object) -> int:
    """Return ``value`` if it is a whole number within ``opt``'s limits, or raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        such = f"{opt.key}={opt.example or 8}"
        raise BandwidthError(say.COUNT_WHOLE.format(key=opt.key, such=such))
    low, high = int(opt.low or 0), int(opt.high or 0)
    if not low <= value <= high:
        if high - low < 5:
            first = ", ".join(str(n) for n in range(low, high))
            allowed = say.COUNT_LAST_OF.format(allowed=first, high=high)
            raise BandwidthError(say.COUNT_ONE_OF.format(key=opt.key, allowed=allowed, value=value))
        raise BandwidthError(say.COUNT_BETWEEN.format(key=opt.key, low=low, high=high, value=value))
    return value


def check_seconds(opt: Opt, value: object) -> float:
    """Return ``value`` as seconds if it is more than ``opt.low`` and at most ``opt.high``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BandwidthError(say.SECONDS_NUMBER.format(key=opt.key))
    low, high = float(opt.low or 0), float(opt.high or math.inf)
    if not (math.isfinite(value) and low < value <= high):
        raise BandwidthError(say.SECONDS_BETWEEN.format(key=opt.key, low=low, high=high))
    return float(value)


def check_number(opt: Opt, value: object) -> float:
    """Return ``value`` if it is a finite number from ``opt.low`` to ``opt.high``, or raise."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BandwidthError(say.NUMBER.format(key=opt.key))
    if not (opt.low or 0) <= value <= (opt.high or math.inf):
        raise BandwidthError(say.NUMBER_BETWEEN.format(key=opt.key, low=opt.low, high=opt.high))
    return float(value)
