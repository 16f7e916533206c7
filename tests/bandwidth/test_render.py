"""The text table, the JSON object of the contract and the PNG chart."""

from __future__ import annotations

import io
import json
import struct

import jsonschema
import pytest

from bot.bandwidth import (
    ENV_VAR,
    QUIZ_CHOICES,
    BandwidthRequest,
    estimate,
    format_seconds,
    load_catalogue,
    parse_request,
    render_chart,
    render_table,
    to_json,
)
from bot.bandwidth._format import format_slowdown, sig3

REQUESTS = [
    "140GB",
    "70B params bf16 allreduce nodes=4 gpus=8",
    "13B adam allreduce nodes=16 gpus=8 step=0.5",
    "1KB allreduce nodes=64 over=all",
    "1 EB alltoall nodes=100000 gpus=256 nics=32 step=1000000 over=all",
    "1 byte broadcast nodes=3",
    "400Gb over=ib-ndr,wifi7",
    "2 GiB reducescatter nodes=5 gpus=3 nics=1 intra=pcie3 step=1ms",
    "1,000,000,000,000 params fp64 allgather nodes=2 gpus=2",
    "1GB allreduce nodes=1 gpus=8 over=nvlink4,nvlink3,pcie5",
    "16GiB allreduce nodes=2 gpus=8 over=ib-ndr,400gbe algo=hier",
    "16GiB allreduce nodes=8 gpus=8 over=all sharp step=1",
]


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.7e-6, "0.700 µs"),
        (1e-6, "1.00 µs"),
        (12.34e-6, "12.3 µs"),
        (523e-6, "523 µs"),
        (0.0123, "12.3 ms"),
        (0.999, "999 ms"),
        (1.5, "1.50 s"),
        (59, "59.0 s"),
        (90, "1.50 min"),
        (7200, "2.00 h"),
        (1e7, "2,778 h"),
    ],
)
def test_time_units_run_from_microseconds_to_hours(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


@pytest.mark.parametrize(
    ("value", "text"), [(192.4, "192"), (24.25, "24.2"), (0.937, "0.937"), (1234.5, "1,234")]
)
def test_three_significant_digits(value: float, text: str) -> None:
    assert sig3(value) == text


@pytest.mark.parametrize(("ratio", "text"), [(1.0, "1.0x"), (2.04, "2.0x"), (1234.4, "1,234x")])
def test_slowdown(ratio: float, text: str) -> None:
    assert format_slowdown(ratio) == text


@pytest.mark.parametrize("text", REQUESTS)
def test_the_table_fits_a_chat_code_block(text: str) -> None:
    table = render_table(estimate(parse_request(text), load_catalogue()))
    lines = table.splitlines()
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    assert any(line.startswith("Assumes:") for line in lines)


def test_the_table_is_aligned_fastest_first_with_units_and_slowdowns() -> None:
    result = estimate(parse_request("140GB allreduce gpus=8 step=2"), load_catalogue())
    table = render_table(result)
    lines = table.splitlines()
    header = next(line for line in lines if "interconnect" in line)
    for column in (
        "time",
        "algbw",
        "busbw",
        "slower",
        "algorithm",
        "comm/step",
        "scaling",
    ):
        assert column in header
    units = lines[lines.index(header) + 1]
    assert "(GB/s)" in units and "/protocol" in units and "(%)" in units
    rows = [line for line in lines if line.split(" ")[0] in {r.key for r in result.results}]
    assert [row.split()[0] for row in rows] == [r.key for r in result.results]
    # the time column is right-aligned: every row ends it at the same column
    end = header.index("time") + len("time")
    for row, r in zip(rows, result.results, strict=True):
        assert row[:end].endswith(format_seconds(r.seconds))
    assert "1.0x" in rows[0]
    # Outside chat the quiz's choices are not marked: nobody asked about the quiz.
    assert "quiz" not in table and not any(line.startswith("*") for line in lines)


def test_chat_marks_the_quiz_choices_of_an_estimate() -> None:
    result = estimate(parse_request("140GB allreduce gpus=8"), load_catalogue())
    table = render_table(result, quiz=True)
    rows = table.splitlines()
    for key in QUIZ_CHOICES:
        assert any(row.startswith("*") and f" {key} " in row for row in rows)
    assert "* answer choices of the interconnect quiz question" in rows
    # The mark column is one character; the names still line up.
    starts = {row.index(r.name) for r in result.results for row in rows if f" {r.key} " in row}
    assert len(starts) == 1


def test_a_transfer_shows_one_rate_column_not_two_equal_ones() -> None:
    # A point-to-point transfer's bus factor is 1: algbw and busbw would always be equal.
    result = estimate(parse_request("10GB"), load_catalogue())
    table = render_table(result)
    header = next(line for line in table.splitlines() if "interconnect" in line)
    assert "rate" in header.split()
    assert "algbw" not in header and "busbw" not in header
    assert "algbw = size/time, busbw" not in table
    assert "rate = size/time in GB/s" in table
    row = next(line for line in table.splitlines() if line.startswith("ib-ndr "))
    ndr = next(r for r in result.results if r.key == "ib-ndr")
    assert row.split()[-2] == sig3(ndr.algbw_gbps)
    collective = render_table(estimate(parse_request("10GB allreduce nodes=2"), load_catalogue()))
    assert "algbw" in collective and "busbw" in collective


def test_the_assumptions_are_one_line_naming_the_topology() -> None:
    result = estimate(parse_request("1GB allreduce nodes=4 gpus=8 nics=2"), load_catalogue())
    assert "\n" not in result.assumptions
    for words in ("4 nodes x 8 GPUs", "32 ranks", "nvlink4", "2 NICs per node", "GB = 10^9"):
        assert words in result.assumptions
    transfer = estimate(parse_request("1GB"), load_catalogue()).assumptions
    assert "one link" in transfer and "latency + size/(rate x eff)" in transfer


def test_a_forced_algorithm_names_the_one_nccl_would_pick() -> None:
    text = "16GiB allreduce nodes=2 gpus=8 over=ib-ndr algo=hier"
    result = estimate(parse_request(text), load_catalogue())
    assert result.fastest.algorithm == "hier+ring"
    assert result.fastest.nccl_algorithm == "nvls-tree"
    assert "which NCCL does not run" in result.assumptions
    assert "NCCL itself would pick nvls-tree" in result.assumptions


def test_the_table_explains_algbw_and_busbw() -> None:
    table = render_table(estimate(parse_request("1GB allreduce nodes=4"), load_catalogue()))
    assert "algbw = size/time, busbw = algbw x bus factor (nccl-tests)" in table


JSON_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["bytes", "op", "nodes", "gpus_per_node", "results"],
    "properties": {
        "bytes": {"type": "integer", "minimum": 1},
        "op": {
            "enum": ["transfer", "allreduce", "allgather", "reducescatter", "broadcast", "alltoall"]
        },
        "nodes": {"type": "integer", "minimum": 1},
        "gpus_per_node": {"type": "integer", "minimum": 1},
        "results": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "key",
                    "name",
                    "seconds",
                    "effective_GBps",
                    "algbw_GBps",
                    "busbw_GBps",
                    "latency_s",
                    "bandwidth_s",
                    "algorithm",
                ],
                "properties": {
                    "key": {"type": "string"},
                    "name": {"type": "string"},
                    "seconds": {"type": "number", "exclusiveMinimum": 0},
                    "effective_GBps": {"type": "number", "exclusiveMinimum": 0},
                    "algbw_GBps": {"type": "number", "exclusiveMinimum": 0},
                    "busbw_GBps": {"type": "number", "exclusiveMinimum": 0},
                    "latency_s": {"type": "number", "minimum": 0},
                    "algorithm": {
                        "enum": [
                            "direct",
                            "ring",
                            "tree",
                            "nvls",
                            "nvls-tree",
                            "collnet",
                            "pairwise",
                            "hier+ring",
                            "hier+tree",
                        ]
                    },
                    "bandwidth_s": {"type": "number", "exclusiveMinimum": 0},
                    "efficiency": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                    "protocol": {"enum": ["", "LL", "LL128", "Simple"]},
                    "channels": {"type": "integer", "minimum": 0, "maximum": 64},
                    "uncertainty": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                },
            },
        },
    },
}


@pytest.mark.parametrize("text", REQUESTS)
def test_json_follows_the_contract(text: str) -> None:
    request = parse_request(text)
    data = to_json(estimate(request, load_catalogue()))
    data = json.loads(json.dumps(data, allow_nan=False))
    jsonschema.validate(data, JSON_SCHEMA)
    assert (data["bytes"], data["op"], data["nodes"], data["gpus_per_node"]) == (
        request.bytes,
        request.op,
        request.nodes,
        request.gpus,
    )
    seconds = [r["seconds"] for r in data["results"]]
    assert seconds == sorted(seconds)
    for r in data["results"]:
        assert r["seconds"] == pytest.approx(r["latency_s"] + r["bandwidth_s"])
        assert r["effective_GBps"] == pytest.approx(request.bytes / r["seconds"] / 1e9)
        assert r["algbw_GBps"] == r["effective_GBps"]
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * _bus_factor(request))
        assert ("efficiency" in r) is (request.step is not None)


def _bus_factor(request: BandwidthRequest) -> float:
    # nccl-tests doc/PERFORMANCE.md, written out again here rather than imported.
    n = request.ranks
    return {
        "transfer": 1.0,
        "broadcast": 1.0,
        "allreduce": 2 * (n - 1) / n,
        "allgather": (n - 1) / n,
        "reducescatter": (n - 1) / n,
        "alltoall": (n - 1) / n,
    }[request.op]


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


@pytest.mark.parametrize(
    "text",
    ["140GB", "13B adam allreduce nodes=16 gpus=8 step=0.5", "1KB allreduce nodes=64 over=all"],
)
def test_the_chart_is_a_valid_png_of_sensible_size(text: str) -> None:
    from PIL import Image

    request = parse_request(text)
    result = estimate(request, load_catalogue())
    png = render_chart(result)
    width, height = _png_size(png)
    assert 800 <= width <= 1600
    assert 300 <= height <= 0.6 * 100 * len(result.results) + 400
    assert 10_000 <= len(png) <= 1_000_000
    with Image.open(io.BytesIO(png)) as image:
        image.verify()
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (width, height)
        pixels = image.convert("RGB")
        colours = pixels.getcolors(maxcolors=1_000_000) or []
        assert len(colours) > 10  # bars, text and grid, not a blank canvas


def test_a_request_built_directly_renders_too() -> None:
    request = BandwidthRequest("1 GB", 10**9, "allgather", nodes=3, gpus=2, over=("ib-hdr", "1gbe"))
    result = estimate(request, load_catalogue())
    assert [r.key for r in result.results] == ["ib-hdr", "1gbe"]
    assert render_table(result).count("\n") >= 4
    assert _png_size(render_chart(result))[0] > 0
