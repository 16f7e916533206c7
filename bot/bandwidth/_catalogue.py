"""The interconnect catalogue: the bundled data file, plus an optional user file on top."""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from bot.bandwidth import _words as say
from bot.bandwidth._errors import BandwidthError

ENV_VAR = "QUIZBOT_INTERCONNECTS"
BUNDLED_FILE = "catalogue.yaml"

# The four answer choices of the interconnect quiz question; every default comparison shows them.
QUIZ_CHOICES = ("ib-hdr", "1gbe", "fc32", "wifi6")

PURPOSES = ("scale-up", "scale-out", "storage", "lan", "wireless-lan", "host-io")
# How NCCL moves data over a link: RDMA verbs or a network plugin, its TCP socket transport,
# peer-to-peer over NVLink, or peer-to-peer / shared memory over PCIe.
TRANSPORTS = ("rdma", "socket", "nvlink", "pcie")
# Links GPUs of one box talk over (nodes=1 compares these).
INTRA_PURPOSES = ("scale-up", "host-io")
SOURCE_FIELDS = (
    "rate",
    "efficiency",
    "latency",
    "collective",
    "transport",
    "nvls",
    "sharp",
    "domain",
    "nics",
)
# No GPU server ships with more NICs for its GPUs than this (AWS P5: 32 EFA network cards of
# 100 Gb/s, aws.amazon.com/ec2/instance-types/p5); more is refused as hardware that cannot exist.
MAX_NICS_PER_NODE = 32
REQUIRED_FIELDS = ("name", "family", "purpose", "rate_gbps", "efficiency", "latency_us", "rdma")
OPTIONAL_FIELDS = (
    "encoding",
    "shared_medium",
    "transport",
    "collective_efficiency",
    "nvls_efficiency",
    "sharp",
    "max_gpus",
    "default_nics",
    "sources",
)
# Which source line a number's value answers to, so an override never keeps a stale citation.
_SOURCE_OF = {
    "rate_gbps": "rate",
    "efficiency": "efficiency",
    "latency_us": "latency",
    "collective_efficiency": "collective",
    "transport": "transport",
    "nvls_efficiency": "nvls",
    "sharp": "sharp",
    "max_gpus": "domain",
    "default_nics": "nics",
}
_RATIOS = ("efficiency", "collective_efficiency", "nvls_efficiency")

_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}\Z")
_MAX_ERRORS = 20


@dataclass(frozen=True, slots=True)
class Interconnect:
    """One catalogue entry: how fast a link moves data and how long a small message takes."""

    key: str
    name: str
    family: str
    purpose: str
    rate_gbps: float
    efficiency: float
    latency_us: float
    rdma: bool
    encoding: str = ""
    shared_medium: bool = False
    transport: str = ""
    collective_efficiency: float | None = None
    nvls_efficiency: float | None = None
    sharp: bool = False
    sources: tuple[tuple[str, str], ...] = ()
    max_gpus: int | None = None  # the largest GPU domain this link joins (NVLink products)
    default_nics: int | None = None  # NICs a node when nics= is not given (a real instance)

    def __post_init__(self) -> None:
        if not self.transport:
            object.__setattr__(self, "transport", default_transport(self.purpose, self.rdma))

    @property
    def payload_bytes_per_s(self) -> float:
        """Return the payload bandwidth in bytes per second: rate x efficiency."""
        return self.rate_gbps * 1e9 / 8 * self.efficiency

    @property
    def collective_bytes_per_s(self) -> float:
        """Return what NCCL's collectives sustain over one link: rate x collective efficiency."""
        share = (
            self.efficiency if self.collective_efficiency is None else self.collective_efficiency
        )
        return self.rate_gbps * 1e9 / 8 * share

    @property
    def nvls_bytes_per_s(self) -> float | None:
        """Return the per-GPU rate of an NVLS all-reduce on 8 GPUs, None without NVLS."""
        if self.nvls_efficiency is None:
            return None
        return self.rate_gbps * 1e9 / 8 * self.nvls_efficiency

    @property
    def intra_node(self) -> bool:
        """Return whether GPUs of one box talk over this link (NVLink, PCIe)."""
        return self.purpose in INTRA_PURPOSES

    @property
    def latency_s(self) -> float:
        """Return the small-message latency in seconds."""
        return self.latency_us * 1e-6

    def source(self, what: str) -> str | None:
        """Return where the number named ``rate``, ``efficiency`` or ``latency`` comes from."""
        return dict(self.sources).get(what)


def default_transport(purpose: str, rdma: bool) -> str:
    """Return the NCCL transport an entry without one most likely uses."""
    if purpose == "scale-up":
        return "nvlink"
    if purpose == "host-io":
        return "pcie"
    return "rdma" if rdma else "socket"


@dataclass(frozen=True)
class Catalogue:
    """Every interconnect the estimator knows, and the ones it compares by default."""

    interconnects: tuple[Interconnect, ...]
    default_comparison: tuple[str, ...]
    origin: str = "bundled catalogue"
    _index: dict[str, Interconnect] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {ic.key: ic for ic in self.interconnects}
        object.__setattr__(self, "_index", index)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[Interconnect]:
        return iter(self.interconnects)

    def __len__(self) -> int:
        return len(self.interconnects)

    def keys(self) -> tuple[str, ...]:
        """Return every key, in catalogue order."""
        return tuple(ic.key for ic in self.interconnects)

    def get(self, key: str) -> Interconnect:
        """Return the entry for ``key`` or raise BandwidthError naming close matches."""
        found = self._index.get(key.strip().lower())
        if found is not None:
            return found
        close = difflib.get_close_matches(key.lower(), self._index, n=3, cutoff=0.5)
        hint = say.DID_YOU_MEAN.format(near=" or ".join(close)) if close else ""
        known = ", ".join(sorted(self._index))
        raise BandwidthError(say.UNKNOWN_INTERCONNECT.format(key=key, hint=hint, known=known))


def load_catalogue(extra: Path | None = None) -> Catalogue:
    """Return the bundled catalogue, with ``extra`` (or $QUIZBOT_INTERCONNECTS) merged on top."""
    if extra is None:
        env = os.environ.get(ENV_VAR, "").strip()
        extra = Path(env).expanduser() if env else None
    base = _bundled()
    if extra is None:
        return base
    return merge_user_file(base, extra)


@functools.cache
def _bundled() -> Catalogue:
    # Next to this module (package data); importlib.resources would add 10-20 ms of imports.
    text = (Path(__file__).parent / BUNDLED_FILE).read_text(encoding="utf-8")
    data = _parse_yaml(text, BUNDLED_FILE)
    return _build(data, BUNDLED_FILE, base=None)


def merge_user_file(base: Catalogue, path: Path) -> Catalogue:
    """Return ``base`` with the entries of the user file at ``path`` added or overriding."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BandwidthError(say.CANNOT_READ_FILE.format(path=path, reason=reason)) from None
    return _build(_parse_yaml(text, str(path)), str(path), base=base)


def parse_catalogue_text(text: str, where: str, base: Catalogue | None = None) -> Catalogue:
    """Build a catalogue from YAML text; with ``base``, the text adds to or overrides it."""
    return _build(_parse_yaml(text, where), where, base=base)


def _parse_yaml(text: str, where: str) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = say.YAML_LINE.format(line=mark.line + 1) if mark is not None else ""
        problem = getattr(exc, "problem", None) or say.NOT_YAML
        raise BandwidthError(
            say.YAML_PROBLEM.format(where=where, line=line, problem=problem)
        ) from None


def _build(data: Any, where: str, base: Catalogue | None) -> Catalogue:
    errors: list[str] = []
    if not isinstance(data, Mapping):
        raise BandwidthError(say.CATALOGUE_NOT_MAPPING.format(where=where))
    for top in data:
        if top not in ("interconnects", "default_comparison") and not str(top).startswith("x-"):
            errors.append(say.UNKNOWN_TOP_KEY.format(where=where, top=top))
    raw_entries = data.get("interconnects", [])
    if not isinstance(raw_entries, list):
        errors.append(say.INTERCONNECTS_NOT_LIST.format(where=where))
        raw_entries = []

    entries: dict[str, Interconnect] = dict(base._index) if base is not None else {}
    seen: set[str] = set()
    for i, raw in enumerate(raw_entries):
        built = _entry(
            raw, say.CATALOGUE_ENTRY_AT.format(where=where, index=i), entries, seen, errors, where
        )
        if built is not None:
            entries[built.key] = built

    default = _default_comparison(data, where, entries, base, errors)
    if base is None:
        for key in QUIZ_CHOICES:
            if key not in entries:
                errors.append(say.QUIZ_CHOICE_MISSING.format(where=where, key=key))
    if errors:
        shown = errors[:_MAX_ERRORS]
        more = len(errors) - len(shown)
        tail = say.CATALOGUE_MORE.format(more=more) if more else ""
        raise BandwidthError(say.CATALOGUE_PROBLEMS.format(shown="\n  ".join(shown), more=tail))
    origin = where if base is None else f"{base.origin} + {where}"
    return Catalogue(tuple(entries.values()), default, origin)


def _entry(
    raw: Any,
    at: str,
    entries: Mapping[str, Interconnect],
    seen: set[str],
    errors: list[str],
    where: str,
) -> Interconnect | None:
    if not isinstance(raw, Mapping):
        errors.append(say.ENTRY_NOT_MAPPING.format(at=at))
        return None
    key = raw.get("key")
    if not isinstance(key, str) or not _NAME_RE.match(key):
        errors.append(say.ENTRY_BAD_KEY.format(at=at, key=key))
        return None
    at = say.CATALOGUE_KEY_AT.format(at=at, key=key)
    if key == "all":
        errors.append(say.ENTRY_KEY_ALL.format(at=at))
        return None
    if key in seen:
        errors.append(say.ENTRY_KEY_TWICE.format(at=at))
        return None
    seen.add(key)
    unknown = [k for k in raw if k != "key" and k not in REQUIRED_FIELDS + OPTIONAL_FIELDS]
    for name in unknown:
        close = difflib.get_close_matches(str(name), REQUIRED_FIELDS + OPTIONAL_FIELDS, n=1)
        hint = say.FIELD_DID_YOU_MEAN.format(near=close[0]) if close else ""
        errors.append(say.UNKNOWN_FIELD.format(at=at, name=name, hint=hint))
    previous = entries.get(key)
    if previous is None:
        missing = [name for name in REQUIRED_FIELDS if name not in raw]
        if missing:
            errors.append(say.NEW_ENTRY_NEEDS.format(at=at, missing=", ".join(missing)))
            return None
    count = len(errors)
    values: dict[str, Any] = {}
    for name in REQUIRED_FIELDS + OPTIONAL_FIELDS:
        if name in raw:
            checked = _check_field(name, raw[name], at, errors)
            if checked is not None:
                values[name] = checked
    if len(errors) > count:
        return None
    sources = dict(previous.sources) if previous is not None else {}
    for name, which in _SOURCE_OF.items():
        if name in values and previous is not None:
            sources[which] = say.CATALOGUE_USER_SOURCE.format(where=where)
    sources.update(values.pop("sources", {}))
    values["sources"] = tuple((k, sources[k]) for k in SOURCE_FIELDS if k in sources)
    if previous is not None:
        return replace(previous, **values)
    return Interconnect(key=key, **values)


def _check_field(name: str, value: Any, at: str, errors: list[str]) -> Any:
    if name in ("rate_gbps", "latency_us", *_RATIOS):
        low, high, low_open = {
            "rate_gbps": (0.0, 1e6, True),
            "latency_us": (0.0, 1e7, False),
        }.get(name, (0.0, 1.0, True))
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        number = float(value) if ok else math.nan
        in_range = math.isfinite(number) and (number > low if low_open else number >= low)
        if not (ok and in_range and number <= high):
            side = say.FIELD_ABOVE if low_open else say.FIELD_AT_LEAST
            errors.append(
                say.FIELD_NUMBER.format(
                    at=at, name=name, side=side, low=low, high=high, value=value
                )
            )
            return None
        return number
    if name in ("max_gpus", "default_nics"):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
            errors.append(say.FIELD_WHOLE.format(at=at, name=name, value=value))
            return None
        return value
    if name in ("rdma", "shared_medium", "sharp"):
        if not isinstance(value, bool):
            errors.append(say.FIELD_BOOL.format(at=at, name=name, value=value))
            return None
        return value
    if name == "transport":
        if value not in TRANSPORTS:
            errors.append(
                say.FIELD_TRANSPORT.format(at=at, choices=", ".join(TRANSPORTS), value=value)
            )
            return None
        return value
    if name == "purpose":
        if value not in PURPOSES:
            errors.append(say.FIELD_PURPOSE.format(at=at, choices=", ".join(PURPOSES), value=value))
            return None
        return value
    if name == "family":
        if not isinstance(value, str) or not _NAME_RE.match(value):
            errors.append(say.FIELD_FAMILY.format(at=at, value=value))
            return None
        return value
    if name in ("name", "encoding"):
        limit = 40 if name == "name" else 200
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            errors.append(say.FIELD_TEXT.format(at=at, name=name, limit=limit, value=value))
            return None
        return value.strip()
    return _check_sources(value, at, errors)


def _check_sources(value: Any, at: str, errors: list[str]) -> dict[str, str] | None:
    if isinstance(value, str) and value.strip():
        return dict.fromkeys(SOURCE_FIELDS, value.strip())
    if isinstance(value, Mapping):
        bad = [k for k in value if k not in SOURCE_FIELDS]
        texts = [v for v in value.values() if not isinstance(v, str) or not v.strip()]
        if not bad and not texts:
            return {str(k): str(v).strip() for k, v in value.items()}
    errors.append(say.FIELD_SOURCES.format(at=at, fields=", ".join(SOURCE_FIELDS)))
    return None


def _default_comparison(
    data: Mapping[str, Any],
    where: str,
    entries: Mapping[str, Interconnect],
    base: Catalogue | None,
    errors: list[str],
) -> tuple[str, ...]:
    raw = data.get("default_comparison")
    if raw is None:
        keys = list(base.default_comparison) if base is not None else []
    elif not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
        errors.append(say.DEFAULT_NOT_LIST.format(where=where))
        keys = []
    else:
        keys = []
        for key in raw:
            if key not in entries:
                errors.append(say.DEFAULT_UNKNOWN.format(where=where, key=key))
            elif key not in keys:
                keys.append(key)
    keys += [k for k in QUIZ_CHOICES if k in entries and k not in keys]
    return tuple(keys)
