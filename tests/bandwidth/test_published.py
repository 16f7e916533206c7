"""The estimator against published measurements, each within a stated tolerance.

Tolerance: the estimate must land within 25% of the published figure (|predicted / measured - 1|
<= 0.25). Most land within 5%; the loosest is the A100 NVLink all-reduce on a non-DGX board.

Metrics follow the tools that published them:
- iperf / iperf3 report goodput in bits per second (10^6 or 10^9);
- perftest (ib_write_bw, ib_read_bw, ib_send_bw) reports MB/sec as MiB/s, or Gb/sec with 10^9;
- nccl-tests report busbw = algbw x 2(n-1)/n for all-reduce, algbw = bytes / time;
- CUDA bandwidthTest reports MB/s in units of 1.024e6 bytes; nvbandwidth reports GB/s (10^9).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from bot.bandwidth import ENV_VAR, estimate, load_catalogue, parse_request

TOLERANCE = 0.25
MIB = 2**20


@dataclass(frozen=True)
class Measurement:
    """A published figure and the request that models it."""

    request: str
    metric: Callable[[int, float, int], float]  # (bytes, seconds, ranks) -> the tool's unit
    measured: float
    unit: str


def gbit_per_s(nbytes: int, seconds: float, _ranks: int) -> float:
    return nbytes * 8 / seconds / 1e9


def mbit_per_s(nbytes: int, seconds: float, _ranks: int) -> float:
    return nbytes * 8 / seconds / 1e6


def mib_per_s(nbytes: int, seconds: float, _ranks: int) -> float:
    return nbytes / seconds / MIB


def gbyte_per_s(nbytes: int, seconds: float, _ranks: int) -> float:
    return nbytes / seconds / 1e9


def bandwidthtest_mb_per_s(nbytes: int, seconds: float, _ranks: int) -> float:
    return nbytes / seconds / 1.024e6


def allreduce_busbw(nbytes: int, seconds: float, ranks: int) -> float:
    return nbytes / seconds / 1e9 * 2 * (ranks - 1) / ranks


MEASUREMENTS = {
    # iperf over 1 GbE: average 939 Mbit/s (lowest second 927) between two hosts on a gigabit
    # switch. Jeremy Stretch, "Proving the Network is Not the Problem With iperf", packetlife.net,
    # 2011-02-28 (packetlife.net/blog/2011/feb/28/proving-network-not-problem-iperf/).
    "iperf 1GbE": Measurement("1.17GB over=1gbe", mbit_per_s, 939.0, "Mbit/s"),
    # iperf3 over 10 GbE: 9.41 Gbit/s node to node, one stream, ConnectX-5 NICs at 10 Gbit/s.
    # Spiderpool, "Network I/O Performance" (github.com/spidernet-io/spiderpool,
    # docs/concepts/io-performance.md).
    "iperf3 10GbE": Measurement("11.8GB over=10gbe", gbit_per_s, 9.41, "Gbit/s"),
    # ib_write_bw on EDR 4x: the bandwidth ceiling is 96.6 Gb/s (ib_write_bw -a --report_gbits).
    # NVIDIA developer forum, "Theoretical Bandwidth and Latency of NIC" (thread 273376, 2023).
    "ib_write_bw EDR": Measurement("8MiB over=ib-edr", gbit_per_s, 96.6, "Gb/s"),
    # ib_write_bw on a 100 Gb/s InfiniBand card: BW average 11,728.47 MB/sec (perftest MiB/s).
    # github.com/linux-rdma/perftest/issues/225 (2023).
    "ib_write_bw 100G": Measurement("8MiB over=ib-edr", mib_per_s, 11_728.47, "MiB/s"),
    # ib_read_bw on HDR: 23 GB/s with a ConnectX-6 HDR adapter (MCX653106A-HDAT), one port.
    # github.com/openucx/ucx/issues/8851 (2023). RDMA read crosses the same wire as a write.
    "ib_read_bw HDR": Measurement("8MiB over=ib-hdr", gbyte_per_s, 23.0, "GB/s"),
    # NCCL over HDR: one 200G HDR link gives about 24 GB/s, two give 48 GB/s (the NCCL
    # maintainer in github.com/NVIDIA/nccl/issues/307, 2020).
    "NCCL p2p HDR": Measurement("1GiB nics=2 over=ib-hdr", gbyte_per_s, 48.0, "GB/s"),
    # GPUDirect perftest on NDR: ib_send_bw --use_cuda reaches 396 Gb/s on a ConnectX-7 400G
    # link (reported as "396 GB/s" in github.com/NVIDIA/nccl-tests/issues/309, 2025).
    "ib_send_bw NDR": Measurement("1GiB over=ib-ndr", gbit_per_s, 396.0, "Gb/s"),
    # RoCE v2 RDMA WRITE on 100 GbE at 4096-byte packets: 97.5 Gb/s. J. Synchrotron Rad.
    # 27(5):1297-1306 (2020), table 2, doi:10.1107/S1600577520008140.
    "RDMA WRITE RoCE 100G": Measurement("1GiB over=roce-100", gbit_per_s, 97.5, "Gb/s"),
    # nccl-tests all_reduce_perf, one node of 8 H100 over NVLink 4 with the ring algorithm:
    # busbw about 370 GB/s ("NCCL can get an effective NVLink bandwidth of 370GB/s ... when
    # running with NCCL_ALGO=RING", NCCL maintainer, github.com/NVIDIA/nccl-tests/issues/212).
    # Eight GPUs on one NVSwitch are modelled as 8 ranks joined by nvlink4.
    "nccl all_reduce 8xH100 NVLink": Measurement(
        "8GiB allreduce nodes=8 over=nvlink4", allreduce_busbw, 370.0, "GB/s busbw"
    ),
    # nccl-tests all_reduce_perf, one HPE Apollo 6500 with 8 A100-SXM4-80GB over NVLink 3, up to
    # 1 GiB: busbw about 200 GB/s (github.com/NVIDIA/nccl-tests/issues/149, 2023).
    "nccl all_reduce 8xA100 NVLink": Measurement(
        "1GiB allreduce nodes=8 over=nvlink3", allreduce_busbw, 200.0, "GB/s busbw"
    ),
    # nccl-tests all_reduce_perf across 3 servers of 8 A100-SXM4-40GB with 4 HDR InfiniBand HCAs
    # each, up to 128 MiB: peak busbw about 96 GB/s (github.com/NVIDIA/nccl-tests/issues/119).
    "nccl all_reduce 3x8 A100 HDR": Measurement(
        "128MiB allreduce nodes=3 gpus=8 nics=4 intra=nvlink3 over=ib-hdr",
        allreduce_busbw,
        96.0,
        "GB/s busbw",
    ),
    # Host-to-device copy on an A100-SXM4-40GB (PCIe 4.0 x16): nvbandwidth
    # host_to_device_memcpy_sm 25.13 GB/s at 512 MiB (github.com/NVIDIA/nvbandwidth/issues/42).
    "H2D copy PCIe 4.0": Measurement("512MiB over=pcie4", gbyte_per_s, 25.13, "GB/s"),
    # Host-to-device copy on a Tesla P100-PCIE-16GB (PCIe 3.0 x16), CUDA bandwidthTest pinned
    # memory, 32 MiB: 12,150.7 MB/s (github.com/mpicbg-scicomp/gearshifft, pull request 82).
    "H2D copy PCIe 3.0": Measurement(
        "32MiB over=pcie3", bandwidthtest_mb_per_s, 12_150.7, "MB/s (1.024e6 B)"
    ),
}


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def predict(case: Measurement) -> float:
    """Return what the estimator predicts for ``case``, in the unit the tool reported."""
    request = parse_request(case.request)
    result = estimate(request, load_catalogue()).fastest
    ranks = request.ranks if request.op != "transfer" else 2
    return case.metric(request.bytes, result.seconds, ranks)


@pytest.mark.parametrize("name", MEASUREMENTS)
def test_estimate_matches_the_published_measurement(name: str) -> None:
    case = MEASUREMENTS[name]
    predicted = predict(case)
    error = predicted / case.measured - 1
    assert abs(error) <= TOLERANCE, (
        f"{name}: predicted {predicted:,.1f} {case.unit}, measured {case.measured:,.1f}"
        f" ({error:+.1%}, tolerance {TOLERANCE:.0%})"
    )


def test_the_required_kinds_of_measurement_are_all_here() -> None:
    names = " ".join(MEASUREMENTS)
    for kind in ("iperf 1GbE", "iperf3 10GbE", "HDR", "ib_write_bw", "NVLink", "nccl", "H2D"):
        assert kind in names
    assert len(MEASUREMENTS) >= 6
