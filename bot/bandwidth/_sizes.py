"""Reading sizes: bytes (SI and IEC), bits, and parameter counts with a data type and a role."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction

from bot.bandwidth import _words as say
from bot.bandwidth._errors import BandwidthError

EXAMPLES = say.SIZE_EXAMPLES
MAX_BYTES = 10**18  # one exabyte; anything bigger is a typo, not a training run
MAX_TEXT = 200

_NUMBER_RE = re.compile(
    r"""\s*(?P<sign>[+-]?)\s*
    (?P<num>(?:\d{1,3}(?:[,_\ ]\d{3})+|\d+)(?:\.\d*)?|\.\d+)
    (?:[eE](?P<exp>[+-]?\d{1,4}))?
    (?P<rest>.*)\Z""",
    re.ASCII | re.VERBOSE | re.DOTALL,
)
_NOT_FINITE_RE = re.compile(r"\s*[+-]?\s*(nan|inf|infinity)\b", re.ASCII | re.IGNORECASE)
_RATE_RE = re.compile(r".*(ps|/s|/sec)\Z", re.IGNORECASE)
_UNIT_RE = re.compile(r"(?P<prefix>[kmgtpe]?)(?P<iec>i?)(?P<tail>b|bytes?|bits?)\Z", re.IGNORECASE)
_WORD_UNIT_RE = re.compile(
    r"(?P<prefix>kilo|mega|giga|tera|peta|exa|kibi|mebi|gibi|tebi|pebi|exbi)?"
    r"(?P<tail>bytes?|bits?)\Z"
)

_PREFIX_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_WORD_PREFIX = {
    "kilo": ("k", False),
    "mega": ("m", False),
    "giga": ("g", False),
    "tera": ("t", False),
    "peta": ("p", False),
    "exa": ("e", False),
    "kibi": ("k", True),
    "mebi": ("m", True),
    "gibi": ("g", True),
    "tebi": ("t", True),
    "pebi": ("p", True),
    "exbi": ("e", True),
}

# Bytes a parameter takes in each data type.
DTYPES: dict[str, Fraction] = {
    "fp64": Fraction(8),
    "float64": Fraction(8),
    "double": Fraction(8),
    "fp32": Fraction(4),
    "float32": Fraction(4),
    "float": Fraction(4),
    "single": Fraction(4),
    "tf32": Fraction(4),
    "bf16": Fraction(2),
    "bfloat16": Fraction(2),
    "fp16": Fraction(2),
    "float16": Fraction(2),
    "half": Fraction(2),
    "fp8": Fraction(1),
    "float8": Fraction(1),
    "e4m3": Fraction(1),
    "e5m2": Fraction(1),
    "int8": Fraction(1),
    "uint8": Fraction(1),
    "fp4": Fraction(1, 2),
    "int4": Fraction(1, 2),
    "nf4": Fraction(1, 2),
}
DEFAULT_DTYPE = "bf16"

# Adam in mixed precision keeps, per parameter: bf16 weights (2) and gradients (2), an fp32
# master copy (4) and two fp32 moments (4 + 4): 16 bytes (ZeRO paper, Rajbhandari et al. 2020).
ADAM_BYTES_PER_PARAM = Fraction(16)
_ROLES = {
    "params": "params",
    "param": "params",
    "parameters": "params",
    "parameter": "params",
    "weights": "params",
    "weight": "params",
    "grads": "grads",
    "grad": "grads",
    "gradients": "grads",
    "gradient": "grads",
    "adam": "adam",
    "adamw": "adam",
}
_COUNT_SUFFIX = {
    "k": 10**3,
    "thousand": 10**3,
    "m": 10**6,
    "mn": 10**6,
    "million": 10**6,
    "b": 10**9,
    "bn": 10**9,
    "billion": 10**9,
    "t": 10**12,
    "trillion": 10**12,
}


def parse_size(text: str) -> int:
    """Return the number of bytes ``text`` names; raise BandwidthError with examples if none."""
    if not isinstance(text, str):
        raise BandwidthError(say.SIZE_NOT_TEXT.format(examples=EXAMPLES))
    if len(text) > MAX_TEXT:
        raise BandwidthError(say.SIZE_TOO_LONG.format(examples=EXAMPLES))
    if not text.strip():
        raise BandwidthError(say.SIZE_MISSING.format(examples=EXAMPLES))
    if _NOT_FINITE_RE.match(text):
        raise BandwidthError(say.SIZE_NOT_FINITE.format(examples=EXAMPLES))
    match = _NUMBER_RE.match(text)
    if match is None:
        raise _unreadable(text)
    if match["sign"] == "-":
        raise BandwidthError(say.SIZE_NOT_POSITIVE.format(examples=EXAMPLES))
    value = _decimal(match["num"], match["exp"])
    if value is None:
        raise _unreadable(text)
    if value == 0:
        raise BandwidthError(say.SIZE_NOT_POSITIVE.format(examples=EXAMPLES))
    if value.adjusted() > 40:
        raise _too_big()
    number = Fraction(value)
    tokens = match["rest"].split()
    if any(t.lower() in DTYPES or t.lower() in _ROLES for t in tokens):
        size = _parameters(number, tokens, text)
    else:
        size = number * _unit_bytes(tokens, text)
    if size < 1:
        # Rounding a fraction of a byte up to one would answer a question nobody asked.
        raise BandwidthError(say.SIZE_UNDER_A_BYTE.format(examples=EXAMPLES))
    nbytes = math.ceil(size)
    if nbytes > MAX_BYTES:
        raise _too_big()
    return nbytes


def describe_bytes(nbytes: int) -> str:
    """Return a byte count with an SI unit and three significant digits, e.g. ``140 GB``."""
    units = ("B", "kB", "MB", "GB", "TB", "PB", "EB")
    value = float(nbytes)
    power = 0
    while value >= 999.5 and power < len(units) - 1:
        value /= 1000
        power += 1
    if power == 0:
        return f"{nbytes} B"
    digits = 0 if value >= 99.95 else 1 if value >= 9.995 else 2
    shown = f"{value:.{digits}f}"
    if "." in shown:
        shown = shown.rstrip("0").rstrip(".")
    return f"{shown} {units[power]}"


def _decimal(num: str, exp: str | None) -> Decimal | None:
    digits = re.sub(r"[,_ ]", "", num)
    try:
        with localcontext() as ctx:
            ctx.prec = 60
            value = Decimal(digits)
            if exp is not None:
                value = value.scaleb(int(exp))
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def _unit_bytes(tokens: list[str], text: str) -> Fraction:
    if not tokens:
        return Fraction(1)
    if len(tokens) > 1:
        raise _unreadable(text)
    token = tokens[0]
    if _RATE_RE.match(token):
        raise BandwidthError(say.SIZE_IS_A_RATE.format(token=token, examples=EXAMPLES))
    word = _WORD_UNIT_RE.match(token.lower())
    if word is not None:
        prefix, iec = _WORD_PREFIX.get(word["prefix"] or "", ("", False))
        return _multiplier(prefix, iec, bits=word["tail"].startswith("bit"))
    unit = _UNIT_RE.match(token)
    if unit is None:
        raise _unreadable(text)
    prefix = unit["prefix"].lower()
    tail = unit["tail"]
    # Gb is gigabits and GB gigabytes: the one place where case matters. A lower-case "b"
    # after an upper-case prefix means bits; "gb", "GB" and "gB" all mean bytes.
    bits = tail.lower().startswith("bit") or (
        tail == "b" and bool(unit["prefix"]) and unit["prefix"].isupper()
    )
    return _multiplier(prefix, bool(unit["iec"]), bits=bits)


def _multiplier(prefix: str, iec: bool, *, bits: bool) -> Fraction:
    power = _PREFIX_POWER[prefix]
    base = Fraction(1024 if iec else 1000) ** power
    return base / 8 if bits else base


def _parameters(number: Fraction, tokens: list[str], text: str) -> Fraction:
    words = [t.lower() for t in tokens]
    if words and words[0] in _COUNT_SUFFIX:
        number *= _COUNT_SUFFIX[words[0]]
        words = words[1:]
    dtype: str | None = None
    role: str | None = None
    for word in words:
        if word in DTYPES:
            if dtype is not None:
                raise BandwidthError(say.ONE_DTYPE.format(dtype=dtype, word=word))
            dtype = word
        elif word in _ROLES:
            found = _ROLES[word]
            if role is not None and found != role and "params" not in (role, found):
                raise BandwidthError(say.ONE_ROLE.format(role=role, found=found))
            if role is None or role == "params":
                role = found
        else:
            raise BandwidthError(say.PARAMS_UNREADABLE.format(word=word, text=text.strip()))
    if role == "adam":
        if dtype is not None:
            raise BandwidthError(say.ADAM_HAS_DTYPE)
        return number * ADAM_BYTES_PER_PARAM
    return number * DTYPES[dtype or DEFAULT_DTYPE]


def _unreadable(text: str) -> BandwidthError:
    shown = text.strip()
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return BandwidthError(say.SIZE_UNREADABLE.format(shown=shown, examples=EXAMPLES))


def _too_big() -> BandwidthError:
    return BandwidthError(say.SIZE_TOO_BIG.format(examples=EXAMPLES))
