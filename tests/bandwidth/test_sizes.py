"""Size parsing: bytes, bits and parameter counts, and the refusals with their examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.bandwidth import BandwidthError, describe_bytes, parse_size
from bot.errors import UserError

GIB = 2**30


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # bytes, SI and IEC, any case, with or without a space
        ("140GB", 140 * 10**9),
        ("140 GB", 140 * 10**9),
        ("140gb", 140 * 10**9),
        ("140 gB", 140 * 10**9),
        ("800MB", 800 * 10**6),
        ("1.5 TiB", 3 * 2**39),
        ("1.5tib", 3 * 2**39),
        ("2 GiB", 2 * GIB),
        ("1KB", 1000),
        ("1 kB", 1000),
        ("1kb", 1000),
        ("1 KiB", 1024),
        ("1 PB", 10**15),
        ("1 EB", 10**18),
        ("5", 5),
        ("5 B", 5),
        ("5 bytes", 5),
        ("3 gigabytes", 3 * 10**9),
        ("3 gibibytes", 3 * GIB),
        ("2 GBytes", 2 * 10**9),
        # thousands separators and exponents
        ("1,000 GB", 10**12),
        ("1,000,000 bytes", 10**6),
        ("1 000 GB", 10**12),
        ("1_000 MB", 10**9),
        ("1e9", 10**9),
        ("2.5e3 MB", 25 * 10**8),
        ("+7 MB", 7 * 10**6),
        ("  42 GB  ", 42 * 10**9),
        # bits: a lower-case b after an upper-case prefix, or spelled out
        ("400Gb", 50 * 10**9),
        ("400 Gbit", 50 * 10**9),
        ("400 gbits", 50 * 10**9),
        ("100 gigabits", 125 * 10**8),
        ("8 Mb", 10**6),
        ("1 Kb", 125),
        ("1 Gib", GIB // 8),
        ("16 bits", 2),
        ("12 bits", 2),  # 1.5 bytes round up to whole bytes
        # parameters x bytes per parameter
        ("70B params bf16", 140 * 10**9),
        ("70b PARAMS BF16", 140 * 10**9),
        ("70 B params bf16", 140 * 10**9),
        ("70B bf16", 140 * 10**9),
        ("70B params", 140 * 10**9),  # bf16 when no type is given
        ("70 billion parameters fp16", 140 * 10**9),
        ("7B grads fp32", 28 * 10**9),
        ("7B gradients fp32", 28 * 10**9),
        ("175B weights fp16", 350 * 10**9),
        ("1.5T params fp8", 15 * 10**11),
        ("7B params int4", 35 * 10**8),
        ("7B fp64 params", 56 * 10**9),
        ("350M params fp32", 14 * 10**8),
        ("13B adam", 208 * 10**9),
        ("13B params adam", 208 * 10**9),
        ("13 billion adamw", 208 * 10**9),
        ("1,000,000 params fp32", 4 * 10**6),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


EXAMPLES = ("140GB", "400Gb", "70B params bf16")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "Give a size"),
        ("   ", "Give a size"),
        ("abc", "Cannot read 'abc'"),
        ("GB", "Cannot read"),
        ("12 parsecs", "Cannot read"),
        ("1,5 GB", "Cannot read"),
        ("1.2.3 GB", "Cannot read"),
        ("0", "more than zero"),
        ("0 GB", "more than zero"),
        ("0.0e5 TB", "more than zero"),
        ("-5GB", "more than zero"),
        ("- 5 GB", "more than zero"),
        ("-0", "more than zero"),
        ("nan GB", "finite"),
        ("NaN", "finite"),
        ("inf", "finite"),
        ("-Infinity TB", "finite"),
        ("2 EB", "more than an exabyte"),
        ("1 EiB", "more than an exabyte"),
        ("1e30 B", "more than an exabyte"),
        ("9" * 60 + " B", "more than an exabyte"),
        ("1" * 250, "too long"),
    ],
)
def test_refusals_show_three_examples(text: str, says: str) -> None:
    with pytest.raises(BandwidthError) as caught:
        parse_size(text)
    message = str(caught.value)
    assert says in message
    for example in EXAMPLES:
        assert example in message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("10 Gbps", "is a rate"),
        ("5 GB/s", "is a rate"),
        ("70B params bf16 fp32", "one data type"),
        ("7B grads adam", "one role"),
        ("13B adam bf16", "16 bytes a parameter"),
        ("7B params quux", "Cannot read 'quux'"),
    ],
)
def test_specific_refusals(text: str, says: str) -> None:
    with pytest.raises(BandwidthError, match=says):
        parse_size(text)


def test_the_error_is_a_user_error() -> None:
    with pytest.raises(UserError):
        parse_size("lots")


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (1, "1 B"),
        (999, "999 B"),
        (1000, "1 kB"),
        (1500, "1.5 kB"),
        (123_456_789, "123 MB"),
        (140 * 10**9, "140 GB"),
        (208 * 10**9, "208 GB"),
        (10**18, "1 EB"),
    ],
)
def test_describe_bytes(nbytes: int, text: str) -> None:
    assert describe_bytes(nbytes) == text


@given(st.text(max_size=80))
def test_random_text_never_raises_anything_but_bandwidth_error(text: str) -> None:
    try:
        value = parse_size(text)
    except BandwidthError:
        return
    assert 1 <= value <= 10**18


_near_valid = st.builds(
    lambda sign, number, space, unit, tail: f"{sign}{number}{space}{unit}{tail}",
    st.sampled_from(["", "+", "-", " "]),
    st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(str),
        st.from_regex(
            r"[0-9]{1,4}([,_ ][0-9]{3}){0,3}(\.[0-9]{0,3})?(e[+-]?[0-9]{1,4})?", fullmatch=True
        ),
    ),
    st.sampled_from(["", " ", "  "]),
    st.sampled_from(
        [
            "",
            "B",
            "GB",
            "gb",
            "Gb",
            "GiB",
            "Gib",
            "TB",
            "EB",
            "EiB",
            "bits",
            "B params",
            "B params bf16",
            "B adam",
            "T grads fp32",
            "M int4",
            "k",
            "Gbps",
            "%",
            "B adam fp8",
        ]
    ),
    st.sampled_from(["", " ", " x", " params", " bf16", "/s", "\u00a0", "\x00"]),
)


@given(_near_valid)
def test_near_valid_text_never_raises_anything_but_bandwidth_error(text: str) -> None:
    try:
        value = parse_size(text)
    except BandwidthError:
        return
    assert 1 <= value <= 10**18


@given(st.integers(min_value=1, max_value=10**8), st.sampled_from(["B", "kB", "MB", "GB"]))
def test_more_digits_never_means_fewer_bytes(number: int, unit: str) -> None:
    assert parse_size(f"{number + 1} {unit}") >= parse_size(f"{number} {unit}")
