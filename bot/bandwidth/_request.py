"""What a /bandwidth question asks: the chat grammar and the request value behind it."""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from decimal import Decimal

from bot.bandwidth._errors import BandwidthError, Problems
from bot.bandwidth._models import ALGORITHMS, PROTOCOL_CHOICES
from bot.bandwidth._sizes import MAX_BYTES, parse_size

OPS = ("transfer", "allreduce", "allgather", "reducescatter", "broadcast", "alltoall")
DEFAULT_INTRA = "nvlink4"
MAX_NODES = 100_000
MAX_GPUS = 1_024
MAX_NICS = 1_024
MAX_STEP_S = 1e6

USAGE = """\
Usage: /bandwidth SIZE [op] [nodes=N] [gpus=G] [nics=K] [step=S] [over=k1,k2] [intra=KEY]
                  [algo=ring|tree|nvls|collnet|hier] [proto=ll|ll128|simple] [sharp]
  SIZE  bytes (140GB, 1.5TiB, 800MB), bits (400Gb) or parameters (70B params bf16,
        7B grads fp32, 13B adam = 16 bytes a parameter)
  op    transfer (default), allreduce, allgather, reducescatter, broadcast, alltoall
  nodes=N nodes (2; nodes=1 compares the links inside one box), gpus=G GPUs per node (1),
  nics=K NICs per node (one per GPU), step=S compute seconds per training step,
  over=k1,k2 interconnects to compare (over=all for every one), algo= force an algorithm
  (default: the one NCCL picks), proto= force NCCL's protocol (as NCCL_PROTO does),
  sharp = let InfiniBand switches reduce (CollNet)
   or: /bandwidth plan MODEL gpus=N [tp=T] [pp=P] [cp=C] [dp=D] [zero=Z] [seq=S] [batch=B]
                  [gpu=KEY] [over=k1,k2]   a whole training step per interconnect
Examples:
  /bandwidth 140GB
  /bandwidth 70B params bf16 allreduce nodes=4 gpus=8
  /bandwidth 1GB allreduce nodes=1 gpus=8 over=nvlink4,nvlink3,pcie5
  /bandwidth 13B adam allreduce nodes=16 gpus=8 step=0.5
  /bandwidth plan llama3-70b gpus=128 tp=8 pp=2"""

_OP_ALIASES = {op: op for op in OPS} | dict.fromkeys(("p2p", "sendrecv", "copy"), "transfer")
_OP_SEPARATORS = str.maketrans("", "", "-_ ")
_OPTION_KEYS = ("nodes", "gpus", "nics", "step", "over", "intra", "algo", "proto", "sharp")
_YES = ("yes", "on", "true", "1")
_NO = ("no", "off", "false", "0")
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
_KEY_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}\Z")


def normalize_op(text: str) -> str:
    """Return the canonical operation name for ``text`` (``all-reduce`` -> ``allreduce``)."""
    key = _op_key(text)
    if not key:
        return "transfer"
    found = _OP_ALIASES.get(key)
    if found is None:
        near = difflib.get_close_matches(text.strip().lower(), OPS, n=1, cutoff=0.6)
        hint = f" Did you mean {near[0]}?" if near else ""
        raise BandwidthError(f"Unknown operation {text!r}.{hint} Choose one of {', '.join(OPS)}.")
    return found


@dataclass(frozen=True, slots=True)
class BandwidthRequest:
    """One question to the estimator: how long does moving ``bytes`` take with ``op``."""

    size_text: str
    bytes: int
    op: str = "transfer"
    nodes: int = 2
    gpus: int = 1
    nics: int | None = None
    step: float | None = None
    over: tuple[str, ...] = ()
    intra: str = DEFAULT_INTRA
    algo: str = "auto"
    sharp: bool = False
    proto: str = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", normalize_op(self.op))
        if isinstance(self.bytes, bool) or not isinstance(self.bytes, int):
            raise BandwidthError("The size must be a whole number of bytes.")
        if not 1 <= self.bytes <= MAX_BYTES:
            raise BandwidthError("The size must be between 1 byte and 1 EB (10^18 bytes).")
        # The counts and the step are independent: every one that is wrong is told at once.
        problems = Problems()
        with problems.check():
            _check_count("nodes", self.nodes, MAX_NODES)
        with problems.check():
            _check_count("gpus", self.gpus, MAX_GPUS)
        if self.nics is not None:
            with problems.check():
                _check_count("nics", self.nics, MAX_NICS)
        if self.step is not None:
            step = self.step
            if isinstance(step, bool) or not isinstance(step, int | float):
                problems.found.append("step= must be a number of seconds, such as step=0.5.")
            elif not (math.isfinite(step) and 0 < step <= MAX_STEP_S):
                problems.found.append("step= must be more than 0 and at most 1,000,000 seconds.")
            else:
                object.__setattr__(self, "step", float(step))
        problems.raise_any()
        over = tuple(dict.fromkeys(str(k).strip().lower() for k in self.over if str(k).strip()))
        for key in over:
            if not _KEY_RE.match(key):
                raise BandwidthError(f"{key!r} is not an interconnect key; try over=ib-hdr,1gbe.")
        object.__setattr__(self, "over", over)
        intra = str(self.intra).strip().lower()
        if not _KEY_RE.match(intra):
            raise BandwidthError(f"{self.intra!r} is not an interconnect key; try intra=nvlink4.")
        object.__setattr__(self, "intra", intra)
        if not isinstance(self.sharp, bool):
            raise BandwidthError("sharp must be on or off.")
        algo = str(self.algo).strip().lower() or "auto"
        object.__setattr__(self, "algo", algo)
        if self.op != "transfer" and self.nodes * self.gpus < 2:
            raise BandwidthError(
                f"A collective needs at least two GPUs; try {self.op} nodes=2, or nodes=1 gpus=8."
            )
        _check_algo(self)
        proto = str(self.proto).strip().lower() or "auto"
        object.__setattr__(self, "proto", proto)
        _check_proto(self)

    @property
    def ranks(self) -> int:
        """Return the number of GPUs taking part: nodes x GPUs per node."""
        return self.nodes * self.gpus


def parse_request(text: str) -> BandwidthRequest:
    """Parse ``SIZE [op] [nodes=N] [gpus=G] [nics=K] [step=S] [over=k1,k2]`` into a request."""
    try:
        return _parse_request(text)
    except BandwidthError as exc:
        if exc.usage is None:
            raise exc.with_usage(USAGE) from None
        raise


def _parse_request(text: str) -> BandwidthRequest:
    if not isinstance(text, str) or not text.strip():
        raise BandwidthError("Give a size first.")
    if len(text) > 500:
        raise BandwidthError("That request is too long to read.")
    words = text.split()
    if words[0].lower() in ("/bandwidth", "bandwidth"):
        words = words[1:]
    if len(words) == 1 and words[0].lower() in ("help", "-h", "--help", "?"):
        raise BandwidthError("How to ask for an estimate:")
    size_words: list[str] = []
    op: str | None = None
    options: dict[str, str] = {}
    for word in words:
        if "=" in word:
            key, _, value = word.partition("=")
            key = key.strip().lower()
            if key not in _OPTION_KEYS:
                known = ", ".join(k + "=" for k in _OPTION_KEYS)
                raise BandwidthError(f"Unknown option {key + '='!r}. Options: {known}.")
            if key in options:
                raise BandwidthError(f"{key}= is given twice.")
            options[key] = value
        elif word.lower() == "sharp":
            if "sharp" in options:
                raise BandwidthError("sharp is given twice.")
            options["sharp"] = "on"
        elif _is_op(word):
            if op is not None:
                raise BandwidthError(f"Give one operation, not {op} and {word}.")
            op = normalize_op(word)
        else:
            size_words.append(word)
    if not size_words:
        raise BandwidthError("Give a size first, such as 140GB.")
    size_text = " ".join(size_words)
    step = options.get("step")
    over = options.get("over")
    nics = options.get("nics")
    return BandwidthRequest(
        size_text=size_text,
        bytes=parse_size(size_text),
        op=op or "transfer",
        nodes=parse_count("nodes", options.get("nodes", "2")),
        gpus=parse_count("gpus", options.get("gpus", "1")),
        nics=None if nics is None else parse_count("nics", nics),
        step=None if step is None else parse_step(step),
        over=() if over is None else parse_over(over),
        intra=options.get("intra", DEFAULT_INTRA) or DEFAULT_INTRA,
        algo=options.get("algo", "auto") or "auto",
        sharp=parse_switch("sharp", options["sharp"]) if "sharp" in options else False,
        proto=options.get("proto", "auto") or "auto",
    )


def _check_proto(req: BandwidthRequest) -> None:
    proto = req.proto
    if proto not in PROTOCOL_CHOICES:
        raise BandwidthError(f"proto= must be one of {', '.join(PROTOCOL_CHOICES)}; got {proto!r}.")
    if proto == "auto":
        return
    if req.op in ("transfer", "alltoall"):
        raise BandwidthError(f"proto={proto} does not apply: {req.op} is not priced by protocol.")
    if req.algo in ("nvls", "collnet", "hier") and proto != "simple":
        raise BandwidthError(f"proto={proto} does not apply: algo={req.algo} runs only Simple.")


def _check_algo(req: BandwidthRequest) -> None:
    algo = req.algo
    if algo not in ALGORITHMS:
        raise BandwidthError(f"algo= must be one of {', '.join(ALGORITHMS)}; got {algo!r}.")
    if algo == "auto":
        return
    allowed = {
        "allreduce": ("ring", "tree", "nvls", "collnet", "hier"),
        "allgather": ("ring", "hier"),
        "reducescatter": ("ring", "hier"),
        "broadcast": ("ring",),
    }.get(req.op, ())
    if algo not in allowed:
        what = f"{req.op} runs only as {', '.join(allowed)}" if allowed else f"{req.op} has one way"
        raise BandwidthError(f"algo={algo} does not apply: {what}.")
    if algo in ("tree", "collnet") and req.nodes == 1:
        raise BandwidthError(
            f"algo={algo} runs between nodes; with nodes=1 use algo=ring or algo=nvls."
        )
    if algo == "hier" and (req.nodes == 1 or req.gpus == 1):
        raise BandwidthError("algo=hier needs several nodes of several GPUs, like nodes=4 gpus=8.")
    if algo == "nvls" and req.gpus == 1:
        raise BandwidthError("algo=nvls reduces inside an NVSwitch box: give gpus=8 or so.")


def parse_switch(name: str, text: str) -> bool:
    """Return the on/off value in ``text`` for option ``name`` (``yes``, ``off``, ...)."""
    word = text.strip().lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise BandwidthError(f"{name}= must be on or off; got {text!r}.")


def parse_count(name: str, text: str) -> int:
    """Return the whole number in ``text`` for option ``name``, or raise BandwidthError."""
    cleaned = text.strip()
    if not _INT_RE.match(cleaned):
        raise BandwidthError(f"{name}= must be a whole number, such as {name}=4; got {text!r}.")
    return int(re.sub(r"[_,]", "", cleaned))


def parse_step(text: str) -> float:
    """Return the seconds in ``text`` (``0.5``, ``350ms``, ``2s``, ``1.5min``)."""
    match = _STEP_RE.match(text.strip())
    if match is None:
        raise BandwidthError(f"step= must be a time such as step=0.5 or step=350ms; got {text!r}.")
    unit = (match["unit"] or "s").lower()
    seconds = float(Decimal(match["num"]) * _STEP_UNITS[unit])
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_STEP_S):
        raise BandwidthError("step= must be more than 0 and at most 1,000,000 seconds.")
    return seconds


def parse_over(text: str) -> tuple[str, ...]:
    """Return the interconnect keys in a comma-separated list such as ``ib-hdr,1gbe``."""
    keys = tuple(k.strip().lower() for k in text.split(",") if k.strip())
    if not keys:
        raise BandwidthError("over= needs interconnect keys, such as over=ib-hdr,1gbe.")
    return keys


def _check_count(name: str, value: object, limit: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BandwidthError(f"{name}= must be a whole number, such as {name}=4.")
    if not 1 <= value <= limit:
        raise BandwidthError(f"{name}= must be between 1 and {limit:,}; got {value:,}.")


def _op_key(text: object) -> str:
    return str(text).strip().lower().translate(_OP_SEPARATORS)


def _is_op(word: str) -> bool:
    return _op_key(word) in _OP_ALIASES
