"""The size sweep: nccl-tests' sizes, per interconnect, units in the header, JSON and a chart."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from bot.bandwidth import BandwidthError, load_catalogue, parse_request
from bot.bandwidth._sweep import render_sweep, sizes_up_to, sweep, sweep_to_json
from tests.bandwidth.test_cli import run


def test_sizes_double_from_8_bytes_to_16_gib() -> None:
    sizes = sizes_up_to(16 * 2**30)
    assert sizes[0] == 8 and sizes[-1] == 16 * 2**30 and len(sizes) == 32
    assert all(b == 2 * a for a, b in itertools.pairwise(sizes))
    assert sizes_up_to(1) == (8,)


def test_busbw_rises_with_size_and_the_protocol_changes() -> None:
    request = parse_request("16GiB allreduce nodes=2 gpus=8 over=ib-ndr")
    result = sweep(request, load_catalogue(), request.bytes)
    busbw = [row.results[0].busbw_gbps for row in result.rows]
    assert busbw == sorted(busbw)
    protocols = {row.results[0].protocol for row in result.rows}
    assert "LL" in protocols and "Simple" in protocols
    text = render_sweep(result)
    assert "(GB/s)" in text and "(us)" in text and "e-0" not in text
    data = sweep_to_json(result)
    assert data["sweep"][0]["key"] == "ib-ndr"  # type: ignore[index]
    assert len(data["sweep"][0]["points"]) == 32  # type: ignore[index]


def test_a_transfer_cannot_be_swept() -> None:
    with pytest.raises(BandwidthError, match="collectives"):
        sweep(parse_request("1GB"), load_catalogue())


def test_the_cli_prints_the_sweep_and_draws_the_chart(tmp_path: Path) -> None:
    chart = tmp_path / "sweep.png"
    done = run(
        "--nodes",
        "1",
        "--gpus",
        "8",
        "--over",
        "nvlink4",
        "--sweep",
        "--chart",
        str(chart),
    )
    assert done.returncode == 0, done.stderr
    assert "17,179,869,184" in done.stdout and "nvls/Simple" in done.stdout
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    as_json = run("1MiB", "--op", "allgather", "--gpus", "8", "--sweep", "--json")
    assert as_json.returncode == 0, as_json.stderr
    points = json.loads(as_json.stdout)["sweep"][0]["points"]
    assert points[-1]["bytes"] == 2**20
    refused = run("1GB", "--op", "transfer", "--sweep")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
