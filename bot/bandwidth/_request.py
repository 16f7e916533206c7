"""What a /bandwidth question asks: the chat grammar and the request value behind it."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from bot.bandwidth import _words as say
from bot.bandwidth._errors import BandwidthError, Problems
from bot.bandwidth._options import ESTIMATE, OPS, PLAN, Kind, brief, default, synopsis, wrap
from bot.bandwidth._sizes import MAX_BYTES, parse_size

DEFAULT_INTRA = default(ESTIMATE, "intra", str)

USAGE = say.ESTIMATE_USAGE.format(
    synopsis=synopsis("/bandwidth SIZE", ESTIMATE),
    ops=", ".join(say.DEFAULT_OP.format(op=o) if o == ESTIMATE["op"].default else o for o in OPS),
    nodes=ESTIMATE["nodes"].default,
    gpus=ESTIMATE["gpus"].default,
    plan=wrap(say.USAGE_OR_PLAN, brief(PLAN), 18),
)

_OP_ALIASES = {op: op for op in OPS} | dict.fromkeys(("p2p", "sendrecv", "copy"), "transfer")
_OP_SEPARATORS = str.maketrans("", "", "-_ ")
# The chat words of the keyed options (``nodes=4``); the operation is named by itself.
_OPTIONS = {opt.key: opt for opt in ESTIMATE if opt.keyed}
_KEY_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}\Z")


def normalize_op(text: str) -> str:
    """Return the canonical operation name for ``text`` (``all-reduce`` -> ``allreduce``)."""
    key = _op_key(text)
    if not key:
        return "transfer"
    found = _OP_ALIASES.get(key)
    if found is None:
        near = difflib.get_close_matches(text.strip().lower(), OPS, n=1, cutoff=0.6)
        hint = say.DID_YOU_MEAN.format(near=near[0]) if near else ""
        raise BandwidthError(say.UNKNOWN_OP.format(text=text, hint=hint, ops=", ".join(OPS)))
    return found


@dataclass(frozen=True, slots=True)
class BandwidthRequest:
    """One question to the estimator: how long does moving ``bytes`` take with ``op``."""

    size_text: str
    bytes: int
    op: str = default(ESTIMATE, "op", str)
    nodes: int = default(ESTIMATE, "nodes", int)
    gpus: int = default(ESTIMATE, "gpus", int)
    nics: int | None = None
    step: float | None = None
    over: tuple[str, ...] = default(ESTIMATE, "over", tuple)
    intra: str = DEFAULT_INTRA
    algo: str = default(ESTIMATE, "algo", str)
    sharp: bool = default(ESTIMATE, "sharp", bool)
    proto: str = default(ESTIMATE, "proto", str)
    launch: str = default(ESTIMATE, "launch", str)

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", normalize_op(self.op))
        if isinstance(self.bytes, bool) or not isinstance(self.bytes, int):
            raise BandwidthError(say.BYTES_NOT_WHOLE)
        if not 1 <= self.bytes <= MAX_BYTES:
            raise BandwidthError(say.BYTES_OUT_OF_RANGE)
        # The counts and the step are independent: every one that is wrong is told at once.
        problems = Problems()
        for opt in ESTIMATE.of(Kind.COUNT, Kind.SECONDS):
            if getattr(self, opt.name) is not None or opt.default is not None:
                with problems.check():
                    object.__setattr__(self, opt.name, opt.check(getattr(self, opt.name)))
        problems.raise_any()
        over = tuple(dict.fromkeys(str(k).strip().lower() for k in self.over if str(k).strip()))
        for key in over:
            if not _KEY_RE.match(key):
                raise BandwidthError(say.NOT_AN_OVER_KEY.format(key=key))
        object.__setattr__(self, "over", over)
        intra = str(self.intra).strip().lower()
        if not _KEY_RE.match(intra):
            raise BandwidthError(say.NOT_AN_INTRA_KEY.format(key=self.intra))
        object.__setattr__(self, "intra", intra)
        ESTIMATE["sharp"].check(self.sharp)
        object.__setattr__(self, "algo", ESTIMATE["algo"].check(self.algo))
        if self.op != "transfer" and self.nodes * self.gpus < 2:
            raise BandwidthError(say.COLLECTIVE_NEEDS_TWO.format(op=self.op))
        _check_algo(self)
        object.__setattr__(self, "proto", ESTIMATE["proto"].check(self.proto))
        _check_proto(self)
        object.__setattr__(self, "launch", ESTIMATE["launch"].check(self.launch))
        if self.launch != "each" and self.op == "transfer":
            raise BandwidthError(say.LAUNCH_ON_TRANSFER.format(launch=self.launch))

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
        raise BandwidthError(say.GIVE_A_SIZE)
    if len(text) > 500:
        raise BandwidthError(say.TOO_LONG)
    words = text.split()
    if words[0].lower() in ("/bandwidth", "bandwidth"):
        words = words[1:]
    if len(words) == 1 and words[0].lower() in ("help", "-h", "--help", "?"):
        raise BandwidthError(say.HOW_TO_ESTIMATE)
    size_words: list[str] = []
    op: str | None = None
    options: dict[str, str] = {}
    for word in words:
        if "=" in word:
            key, _, value = word.partition("=")
            key = key.strip().lower()
            if key not in _OPTIONS:
                known = ", ".join(k + "=" for k in _OPTIONS)
                raise BandwidthError(say.UNKNOWN_OPTION.format(key=key + "=", known=known))
            if key in options:
                raise BandwidthError(say.OPTION_TWICE.format(key=key))
            options[key] = value
        elif (switch := _OPTIONS.get(word.lower())) is not None and switch.kind is Kind.SWITCH:
            if switch.key in options:
                raise BandwidthError(say.SWITCH_TWICE.format(key=switch.key))
            options[switch.key] = "on"
        elif _is_op(word):
            if op is not None:
                raise BandwidthError(say.ONE_OP.format(op=op, word=word))
            op = normalize_op(word)
        else:
            size_words.append(word)
    if not size_words:
        raise BandwidthError(say.GIVE_A_SIZE_SUCH_AS)
    size_text = " ".join(size_words)
    nbytes = parse_size(size_text)
    # Each value is read in the table's order; an empty one (intra=) keeps the default.
    values: dict[str, Any] = {}
    for key, opt in _OPTIONS.items():
        given = options.get(key)
        if given is not None and (given or opt.kind not in (Kind.KEY, Kind.CHOICE)):
            values[opt.name] = opt.read(given)
    return BandwidthRequest(size_text=size_text, bytes=nbytes, op=op or "transfer", **values)


def _check_proto(req: BandwidthRequest) -> None:
    proto = req.proto
    if proto == "auto":
        return
    if req.op in ("transfer", "alltoall"):
        raise BandwidthError(say.PROTO_NOT_PRICED.format(proto=proto, op=req.op))
    if req.algo in ("nvls", "collnet", "hier") and proto != "simple":
        raise BandwidthError(say.PROTO_SIMPLE_ONLY.format(proto=proto, algo=req.algo))


def _check_algo(req: BandwidthRequest) -> None:
    algo = req.algo
    if algo == "auto":
        return
    allowed = {
        "allreduce": ("ring", "tree", "nvls", "collnet", "hier"),
        "allgather": ("ring", "hier"),
        "reducescatter": ("ring", "hier"),
        "broadcast": ("ring",),
    }.get(req.op, ())
    if algo not in allowed:
        what = (
            say.ALGO_RUNS_ONLY_AS.format(op=req.op, allowed=", ".join(allowed))
            if allowed
            else say.ALGO_ONE_WAY.format(op=req.op)
        )
        raise BandwidthError(say.ALGO_DOES_NOT_APPLY.format(algo=algo, what=what))
    if algo in ("tree", "collnet") and req.nodes == 1:
        raise BandwidthError(say.ALGO_BETWEEN_NODES.format(algo=algo))
    if algo == "hier" and (req.nodes == 1 or req.gpus == 1):
        raise BandwidthError(say.ALGO_HIER_NEEDS)
    if algo == "nvls" and req.gpus == 1:
        raise BandwidthError(say.ALGO_NVLS_NEEDS)


def _op_key(text: object) -> str:
    return str(text).strip().lower().translate(_OP_SEPARATORS)


def _is_op(word: str) -> bool:
    return _op_key(word) in _OP_ALIASES
