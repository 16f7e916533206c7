"""What a planner question asks: a model, a parallel layout, and the chat grammar behind it."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from bot.bandwidth import _words as say
from bot.bandwidth._errors import BandwidthError, Problems
from bot.bandwidth._options import PLAN, Kind, default, synopsis

MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

PLAN_USAGE = say.PLAN_USAGE.format(synopsis=synopsis("/bandwidth plan MODEL", PLAN))

# chat word -> the option (its field, kind and limits)
_KEYS = PLAN.by_word()
_SWITCHES = {opt.key: opt for opt in PLAN.of(Kind.SWITCH)}
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9.-]{0,39}\Z")
_PARAMS_RE = re.compile(
    r"(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[kmbt])(?:\s*params?)?\Z", re.IGNORECASE
)
_UNITS = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """One planner question: how long does a training step of ``model`` take, per network."""

    model: str
    gpus: int
    gpus_per_node: int | None = None
    tp: int | None = None
    pp: int = default(PLAN, "pp", int)
    cp: int = default(PLAN, "cp", int)
    dp: int | None = None
    zero: int = default(PLAN, "zero", int)
    seq: int | None = None
    global_batch: int | None = None
    micro_batch: int = default(PLAN, "micro_batch", int)
    gpu: str | None = None
    over: tuple[str, ...] = ()
    nics: int | None = None
    layers: int | None = None
    hidden: int | None = None
    ffn: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    recompute: bool = default(PLAN, "recompute", bool)
    interleave: int = default(PLAN, "interleave", int)
    efficiency: float | None = None
    fp8: bool = default(PLAN, "fp8", bool)
    sharp: bool = default(PLAN, "sharp", bool)
    uneven: bool = default(PLAN, "uneven", bool)
    search: bool = default(PLAN, "search", bool)
    tp_overlap: bool = default(PLAN, "tp_overlap", bool)
    experts: int | None = None
    top_k: int | None = None
    ep: int = default(PLAN, "ep", int)

    def __post_init__(self) -> None:
        # Every field is checked, and every problem reported in one message.
        problems = Problems()
        with problems.check():
            model = str(self.model).strip()
            if not model or len(model) > 40:
                raise BandwidthError(say.NAME_A_MODEL)
            if not MODEL_NAME.fullmatch(model):
                # The name is echoed in tables, code blocks and chart titles: plain characters.
                raise BandwidthError(say.MODEL_NAME_CHARACTERS)
            object.__setattr__(self, "model", model.lower())
        # The counts, the switches and the efficiency, each against its limits in the table.
        for opt in PLAN.of(Kind.COUNT, Kind.SWITCH, Kind.NUMBER):
            value = getattr(self, opt.name)
            if value is not None or opt.name == "gpus":
                with problems.check():
                    object.__setattr__(self, opt.name, opt.check(value))
        if self.gpu is not None:
            with problems.check():
                gpu = str(self.gpu).strip().lower()
                if not _WORD_RE.match(gpu):
                    raise BandwidthError(say.NOT_A_GPU_KEY.format(key=self.gpu))
                object.__setattr__(self, "gpu", gpu)
        over = tuple(dict.fromkeys(str(k).strip().lower() for k in self.over if str(k).strip()))
        object.__setattr__(self, "over", over)
        problems.raise_any()

    def custom_shape(self) -> bool:
        """Return whether the request gives its own layers and width instead of a preset."""
        return self.layers is not None or self.hidden is not None


def parse_params(text: str) -> float:
    """Return the parameter count in ``70B``, ``1.5T``, ``350M params``."""
    match = _PARAMS_RE.match(text.strip())
    if match is None:
        raise BandwidthError(say.NOT_A_MODEL.format(text=text))
    return float(match["num"]) * _UNITS[match["unit"].lower()]


def parse_plan(text: str) -> PlanRequest:
    """Parse ``[plan] MODEL gpus=N [tp=T] ...`` (the chat form) into a planner request.

    Every problem is reported at once: each option's value, the fields' ranges and, when any of
    those is wrong, the model and GPU names too (which the planner would check only after).
    """
    try:
        return _parse_plan(text)
    except BandwidthError as exc:
        if exc.usage is None:
            raise exc.with_usage(PLAN_USAGE) from None
        raise


def _parse_plan(text: str) -> PlanRequest:
    if not isinstance(text, str) or not text.strip():
        raise BandwidthError(say.GIVE_A_MODEL_AND_GPUS)
    if len(text) > 500:
        raise BandwidthError(say.TOO_LONG)
    words = text.split()
    if words and words[0].lower() in ("/bandwidth", "bandwidth"):
        words = words[1:]
    if words and words[0].lower() == "plan":
        words = words[1:]
    if len(words) == 1 and words[0].lower() in ("help", "-h", "--help", "?"):
        raise BandwidthError(say.HOW_TO_PLAN)
    problems = Problems()
    model_words: list[str] = []
    values: dict[str, object] = {}
    given: set[str] = set()
    for word in words:
        key, eq, value = word.partition("=")
        key = key.strip().lower()
        if not eq:
            if key in _SWITCHES:
                values[_SWITCHES[key].name] = True
                continue
            model_words.append(word)
            continue
        opt = _KEYS.get(key)
        if opt is None:
            known = ", ".join(k + "=" for k in _KEYS if "-" not in k)
            problems.found.append(say.UNKNOWN_OPTION.format(key=key + "=", known=known))
            continue
        if opt.name in given:
            problems.found.append(say.OPTION_TWICE.format(key=key))
            continue
        given.add(opt.name)
        with problems.check():
            values[opt.name] = opt.read(value, key)
    if not model_words:
        problems.found.append(say.NAME_A_MODEL_FIRST)
    if "gpus" not in given:
        problems.found.append(say.SAY_HOW_MANY_GPUS)
    model = " ".join(model_words)
    known_fields = {f.name for f in fields(PlanRequest)}
    kwargs = {k: v for k, v in values.items() if k in known_fields}
    if not problems:
        with problems.check():
            return PlanRequest(model=model, **kwargs)  # type: ignore[arg-type]
    else:
        # Check the fields the words did give, so their problems are told now, not next time.
        with problems.check():
            PlanRequest(model=model or "unnamed", **{"gpus": 1, **kwargs})  # type: ignore[arg-type]
    _check_names(problems, model_words, values)
    problems.raise_any()
    raise AssertionError("unreachable: a request with problems raises above")


def _check_names(problems: Problems, model_words: list[str], values: dict[str, object]) -> None:
    """Add an unknown model preset or GPU to ``problems`` (the planner checks them later)."""
    from bot.bandwidth._hardware import load_hardware

    hardware = load_hardware()
    custom = "layers" in values or "hidden" in values
    if len(model_words) == 1 and not custom and MODEL_NAME.fullmatch(model_words[0]):
        with problems.check():
            hardware.model(model_words[0])
    gpu = values.get("gpu")
    if isinstance(gpu, str) and _WORD_RE.match(gpu.strip().lower()):
        with problems.check():
            hardware.gpu(gpu)
