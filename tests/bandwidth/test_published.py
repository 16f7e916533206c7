"""The estimator and the planner against published measurements, each within its own tolerance.

Every case names its source and carries a tolerance (|predicted / measured - 1| at most that, 20%
at most for the collectives, 25% for whole training steps). A case marked ``calibrates`` is
where a catalogue number comes from, so it checks the arithmetic rather than the model; the
others are predictions.

Metrics follow the tools that published them:
- iperf / iperf3 report goodput in bits per second (10^6 or 10^9);
- perftest (ib_write_bw, ib_read_bw, ib_send_bw) reports MB/sec as MiB/s, or Gb/sec with 10^9;
- nccl-tests report algbw = bytes / time and busbw = algbw x 2(n-1)/n for all-reduce
  (doc/PERFORMANCE.md);
- CUDA bandwidthTest reports MB/s in units of 1.024e6 bytes; nvbandwidth reports GB/s (10^9).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from bot.bandwidth import (
    ENV_VAR,
    PlanRequest,
    estimate,
    load_catalogue,
    load_hardware,
    parse_request,
    plan,
)

MIB = 2**20
MAX_TOLERANCE = 0.20
MAX_PLAN_TOLERANCE = 0.25


@dataclass(frozen=True)
class Measurement:
    """A published figure and the request that models it."""

    request: str
    metric: Callable[[int, float, int], float]  # (bytes, seconds, ranks) -> the tool's unit
    measured: float
    unit: str
    tolerance: float
    kinds: frozenset[str] = field(default_factory=frozenset)
    calibrates: bool = False
    algorithm: str | None = None  # the algorithm NCCL should pick, where the source says


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


def kinds(*names: str) -> frozenset[str]:
    return frozenset(names)


MEASUREMENTS = {
    # iperf over 1 GbE: average 939 Mbit/s between two hosts on a gigabit switch. Jeremy Stretch,
    # "Proving the Network is Not the Problem With iperf", packetlife.net, 2011-02-28.
    "iperf 1GbE": Measurement("1.17GB over=1gbe", mbit_per_s, 939.0, "Mbit/s", 0.02),
    # iperf3 over 10 GbE: 9.41 Gbit/s node to node, one stream. Spiderpool, "Network I/O
    # Performance" (github.com/spidernet-io/spiderpool, docs/concepts/io-performance.md).
    "iperf3 10GbE": Measurement("11.8GB over=10gbe", gbit_per_s, 9.41, "Gbit/s", 0.02),
    # ib_write_bw on EDR 4x tops out at 96.6 Gb/s. NVIDIA developer forum, "Theoretical
    # Bandwidth and Latency of NIC" (thread 273376, 2023).
    "ib_write_bw EDR": Measurement("8MiB over=ib-edr", gbit_per_s, 96.6, "Gb/s", 0.03),
    # ib_write_bw on a 100 Gb/s InfiniBand card: 11,728.47 MB/sec (perftest MiB/s).
    # github.com/linux-rdma/perftest/issues/225.
    "ib_write_bw 100G": Measurement("8MiB over=ib-edr", mib_per_s, 11_728.47, "MiB/s", 0.03),
    # ib_read_bw on HDR: 23 GB/s with a ConnectX-6 HDR adapter. github.com/openucx/ucx/issues/8851.
    "ib_read_bw HDR": Measurement("8MiB over=ib-hdr", gbyte_per_s, 23.0, "GB/s", 0.08),
    # NCCL over HDR: two HDR links give about 48 GB/s (NCCL maintainer,
    # github.com/NVIDIA/nccl/issues/307).
    "NCCL p2p 2x HDR": Measurement("1GiB nics=2 over=ib-hdr", gbyte_per_s, 48.0, "GB/s", 0.03),
    # GPUDirect perftest on NDR: ib_send_bw --use_cuda reaches 396 Gb/s on a ConnectX-7 link
    # (written "396 GB/s" in github.com/NVIDIA/nccl-tests/issues/309).
    "ib_send_bw NDR": Measurement("1GiB over=ib-ndr", gbit_per_s, 396.0, "Gb/s", 0.03),
    # RoCE v2 RDMA WRITE on 100 GbE at 4096-byte packets: 97.5 Gb/s. J. Synchrotron Rad.
    # 27(5):1297-1306 (2020), table 2.
    "RDMA WRITE RoCE 100G": Measurement(
        "1GiB over=roce-100", gbit_per_s, 97.5, "Gb/s", 0.02, calibrates=True
    ),
    # nccl-tests all_reduce_perf on one box of 8 H100 with NCCL_ALGO=RING: busbw about
    # 370 GB/s (NCCL maintainer, github.com/NVIDIA/nccl-tests/issues/212).
    "8x H100 ring": Measurement(
        "8GiB allreduce nodes=1 gpus=8 over=nvlink4 algo=ring",
        allreduce_busbw,
        370.0,
        "GB/s busbw",
        0.05,
        kinds("NVLink", "ring"),
    ),
    # ... and with NVLS (NVLink SHARP), about 480 GB/s (same thread): where nvls_efficiency of
    # nvlink4 comes from.
    "8x H100 NVLS, #212": Measurement(
        "8GiB allreduce nodes=1 gpus=8 over=nvlink4",
        allreduce_busbw,
        480.0,
        "GB/s busbw",
        0.02,
        kinds("NVLS"),
        calibrates=True,
        algorithm="nvls",
    ),
    # One H100 node: "476GB/s looks to be in the expected range for H100" with NVLink SHARP
    # (NCCL maintainer, github.com/NVIDIA/nccl-tests/issues/290).
    "8x H100 NVLS, #290": Measurement(
        "8GiB allreduce nodes=1 gpus=8 over=nvlink4",
        allreduce_busbw,
        476.0,
        "GB/s busbw",
        0.05,
        kinds("NVLS"),
        algorithm="nvls",
    ),
    # Dell XE9680, 8 H100 and 8 CX-7 400G per node, NCCL 2.26: "each single node with 8 pairs
    # still get 480 GB/s" (github.com/NVIDIA/nccl-tests/issues/309).
    "8x H100 NVLS, #309": Measurement(
        "16GiB allreduce nodes=1 gpus=8 over=nvlink4",
        allreduce_busbw,
        480.0,
        "GB/s busbw",
        0.05,
        kinds("NVLS"),
        algorithm="nvls",
    ),
    # 8 B200 in one box: all_reduce_perf reaches 830+ GB/s (github.com/NVIDIA/nccl/issues/1807):
    # where nvls_efficiency of nvlink5 comes from.
    "8x B200 NVLS": Measurement(
        "16GiB allreduce nodes=1 gpus=8 over=nvlink5",
        allreduce_busbw,
        830.0,
        "GB/s busbw",
        0.02,
        kinds("NVLS"),
        calibrates=True,
        algorithm="nvls",
    ),
    # One HPE Apollo 6500 of 8 A100-SXM4-80GB over NVLink 3, up to 1 GiB: busbw about 200 GB/s
    # (github.com/NVIDIA/nccl-tests/issues/149); the loosest case: this board lags a DGX.
    "8x A100 ring": Measurement(
        "1GiB allreduce nodes=1 gpus=8 over=nvlink3",
        allreduce_busbw,
        200.0,
        "GB/s busbw",
        0.20,
        kinds("NVLink", "ring"),
        algorithm="ring",
    ),
    # 3 servers of 8 A100 with 4 HDR HCAs each, 128 MiB: peak busbw about 96 GB/s, "24GB/s is
    # the peak performance per 200G NIC" (github.com/NVIDIA/nccl-tests/issues/119).
    "3x8 A100, 4 HDR": Measurement(
        "128MiB allreduce nodes=3 gpus=8 nics=4 intra=nvlink3 over=ib-hdr",
        allreduce_busbw,
        96.0,
        "GB/s busbw",
        0.05,
        kinds("multi-node ring", "RDMA"),
        algorithm="ring",
    ),
    # A DGX-A100 with 8 x 200G IB: "we measure 192GB/s AllReduce BusBW", with NCCL_ALGO=RING on
    # two nodes (NCCL maintainer, github.com/NVIDIA/nccl/issues/812).
    "2x8 A100, 8 HDR, ring": Measurement(
        "8GiB allreduce nodes=2 gpus=8 intra=nvlink3 over=ib-hdr algo=ring",
        allreduce_busbw,
        192.0,
        "GB/s busbw",
        0.05,
        kinds("multi-node ring", "RDMA"),
    ),
    # 8 CX7 at 400 Gb/s aggregate "up to ~396GB/s with the RING protocol" (NCCL maintainer,
    # github.com/NVIDIA/nccl-tests/issues/319).
    "2x8 H100, 8 NDR, ring": Measurement(
        "16GiB allreduce nodes=2 gpus=8 over=ib-ndr algo=ring",
        allreduce_busbw,
        396.0,
        "GB/s busbw",
        0.12,
        kinds("multi-node ring", "RDMA"),
    ),
    # Two Dell XE9680 nodes, 16 GPU-NIC pairs: 470 GB/s, above the 8 NICs' 400 GB/s: NCCL's
    # default on two H100 nodes is NVLS-tree, whose network carries S, not 2S
    # (github.com/NVIDIA/nccl-tests/issues/309; the 2-node effect: NVIDIA/nccl#812,
    # NVIDIA/nccl-tests#196).
    "2x8 H100, 8 NDR, 2-node tree": Measurement(
        "16GiB allreduce nodes=2 gpus=8 over=ib-ndr",
        allreduce_busbw,
        470.0,
        "GB/s busbw",
        0.12,
        kinds("2-node tree", "RDMA"),
        algorithm="nvls-tree",
    ),
    # Four of those nodes, 32 pairs: "max busbw can get 365.84 GB/s" (same thread).
    "4x8 H100, 8 NDR": Measurement(
        "16GiB allreduce nodes=4 gpus=8 over=ib-ndr",
        allreduce_busbw,
        365.84,
        "GB/s busbw",
        0.05,
        kinds("multi-node ring", "RDMA"),
    ),
    # Four machines of 8 V100 on one 100 Gb/s TCP network each: "the best performance (bus-bw) is
    # between 4~6GB/s" for 8M-128M buffers (github.com/NVIDIA/nccl/issues/450).
    "4x8 V100, 100G TCP": Measurement(
        "128MB allreduce nodes=4 gpus=8 nics=1 intra=nvlink3 over=100gbe",
        allreduce_busbw,
        5.0,
        "GB/s busbw",
        0.20,
        kinds("TCP sockets"),
        algorithm="ring",
    ),
    # Two p3dn (8 V100, 100 Gb/s) over NCCL's TCP sockets with the tree disabled: "the bus can
    # sustain around 6GB/s" (github.com/NVIDIA/nccl/issues/398).
    "2x8 V100, 100G TCP, ring": Measurement(
        "512MiB allreduce nodes=2 gpus=8 nics=1 intra=nvlink3 over=100gbe algo=ring",
        allreduce_busbw,
        6.0,
        "GB/s busbw",
        0.15,
        kinds("TCP sockets"),
    ),
    # Azure VMs on 25 Gb/s TCP, 2 hosts x 4 GPUs, NCCL_ALGO=Ring: busbw "maxed out at 1.7GBps"
    # (github.com/NVIDIA/nccl-tests/issues/83): where the 25 GbE collective efficiency comes from.
    "2x4 GPUs, 25G TCP, ring": Measurement(
        "2GiB allreduce nodes=2 gpus=4 nics=1 intra=pcie4 over=25gbe algo=ring",
        allreduce_busbw,
        1.7,
        "GB/s busbw",
        0.03,
        kinds("TCP sockets"),
        calibrates=True,
    ),
    # Host-to-device copy on an A100-SXM4-40GB (PCIe 4.0 x16): nvbandwidth 25.13 GB/s
    # (github.com/NVIDIA/nvbandwidth/issues/42).
    "H2D copy PCIe 4.0": Measurement("512MiB over=pcie4", gbyte_per_s, 25.13, "GB/s", 0.03),
    # Host-to-device copy on a P100 (PCIe 3.0 x16), bandwidthTest pinned memory: 12,150.7 MB/s
    # (github.com/mpicbg-scicomp/gearshifft, pull request 82).
    "H2D copy PCIe 3.0": Measurement(
        "32MiB over=pcie3", bandwidthtest_mb_per_s, 12_150.7, "MB/s (1.024e6 B)", 0.03
    ),
}


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def predict(case: Measurement) -> tuple[float, str]:
    """Return what the estimator predicts for ``case``, in the tool's unit, and the algorithm."""
    request = parse_request(case.request)
    result = estimate(request, load_catalogue()).fastest
    ranks = request.ranks if request.op != "transfer" else 2
    return case.metric(request.bytes, result.seconds, ranks), result.algorithm


@pytest.mark.parametrize("name", MEASUREMENTS)
def test_estimate_matches_the_published_measurement(name: str) -> None:
    case = MEASUREMENTS[name]
    assert case.tolerance <= MAX_TOLERANCE
    predicted, algorithm = predict(case)
    error = predicted / case.measured - 1
    assert abs(error) <= case.tolerance, (
        f"{name}: predicted {predicted:,.1f} {case.unit}, measured {case.measured:,.1f}"
        f" ({error:+.1%}, tolerance {case.tolerance:.0%})"
    )
    if case.algorithm is not None:
        assert algorithm == case.algorithm


def test_the_required_kinds_of_measurement_are_all_here() -> None:
    predictions = [c for c in MEASUREMENTS.values() if not c.calibrates]
    assert len(predictions) >= 16
    covered = set().union(*(c.kinds for c in predictions))
    for kind in ("TCP sockets", "NVLS", "2-node tree", "multi-node ring", "RDMA", "NVLink"):
        assert kind in covered, kind


def test_tcp_sockets_stay_far_below_rdma_at_the_same_rate() -> None:
    # The lesson of NVIDIA/nccl#450: 400G over NCCL's sockets is not level with NDR.
    request = parse_request("70B params bf16 allreduce nodes=16 gpus=8 over=ib-ndr,400gbe")
    result = estimate(request, load_catalogue())
    ndr, tcp = (next(r for r in result.results if r.key == k) for k in ("ib-ndr", "400gbe"))
    assert tcp.seconds > 2 * ndr.seconds
    assert tcp.transport == "socket" and ndr.transport == "rdma"


# ----- whole training steps -----


# Published runs with their layouts; "step" is the published throughput turned back into seconds
# a step. The compute efficiency in gpus.yaml was calibrated on the first one (the Llama 3 405B
# 8,192-GPU row) and predicts the others.
@dataclass(frozen=True)
class Run:
    request: PlanRequest
    tflops_per_gpu: float  # as published
    flops: str  # how the source counted: "model" (6N plus attention) or "megatron-recompute"
    tolerance: float
    calibrates: bool = False


def _llama(gpus: int, cp: int, seq: int, batch: int) -> PlanRequest:
    # Llama 3 paper (arXiv:2407.21783) section 3.3.2 and Table 4: TP 8, PP 16, H100, RoCE 400
    # (one NIC per GPU), FSDP sharding of the gradients and optimizer; an interleaved pipeline
    # schedule whose number of virtual stages the paper does not give: 2 is assumed (unchecked).
    return PlanRequest(
        "llama3-405b",
        gpus=gpus,
        tp=8,
        pp=16,
        cp=cp,
        zero=2,
        seq=seq,
        global_batch=batch,
        gpu="h100",
        over=("roce-400",),
        interleave=2,
    )


RUNS = {
    # 8,192 GPUs, CP 1, DP 64, 8K sequences, 16M tokens a batch: 430 TFLOP/s per GPU.
    "Llama 3 405B, 8,192 GPUs": Run(_llama(8192, 1, 8192, 2048), 430.0, "model", 0.02, True),
    # 16,384 GPUs, CP 1, DP 128, 8K sequences, 16M tokens: 400 TFLOP/s per GPU.
    "Llama 3 405B, 16,384 GPUs": Run(_llama(16384, 1, 8192, 2048), 400.0, "model", 0.25),
    # 16,384 GPUs, CP 16, DP 8, 131,072-token sequences, 16M tokens: 380 TFLOP/s per GPU.
    "Llama 3 405B, 16,384 GPUs, 128K context": Run(
        _llama(16384, 16, 131072, 128), 380.0, "model", 0.25
    ),
    # BLOOM 176B on 48 nodes of 8 A100 80GB with 4 Omni-Path 100 Gb/s links each: TP 4, PP 12,
    # DP 8, micro-batch 2, 2,048 sequences of 2,048 tokens, full activation checkpointing
    # (github.com/bigscience-workshop/bigscience, train/tr11-176B-ml/tr11-176B-ml.slurm); "about
    # 150 TFLOPs" (bigscience.notion.site, BigScience 176B model page), counted with Megatron's
    # formula and its factor of 4 for recomputation (Megatron-DeepSpeed).
    "BLOOM 176B": Run(
        PlanRequest(
            "bloom-176b",
            gpus=384,
            tp=4,
            pp=12,
            zero=1,
            global_batch=2048,
            micro_batch=2,
            gpu="a100",
            over=("omnipath",),
            nics=4,
            recompute=True,
        ),
        150.0,
        "megatron-recompute",
        0.25,
    ),
}


def published_step_seconds(run: Run) -> float:
    """Return the published throughput as seconds a step, with the source's own FLOP count."""
    result = plan(run.request, load_catalogue())
    layout, model = result.layout, result.model
    if run.flops == "model":
        flops = result.model_flops_per_step
    else:
        # Narayanan et al., SC'21, equation (3): 96 B s l h^2 (1 + s/6h + V/(16 l h)).
        b, s, h = layout.global_batch, layout.seq, model.hidden
        flops = (
            96
            * b
            * s
            * model.layers
            * h
            * h
            * (1 + s / (6 * h) + model.vocab / (16 * model.layers * h))
        )
    return flops / (run.tflops_per_gpu * 1e12 * layout.gpus)


@pytest.mark.parametrize("name", RUNS)
def test_planner_matches_the_published_throughput(name: str) -> None:
    run = RUNS[name]
    assert run.tolerance <= MAX_PLAN_TOLERANCE
    predicted = plan(run.request, load_catalogue()).fastest.step_seconds
    measured = published_step_seconds(run)
    error = measured / predicted - 1  # throughput predicted / published, minus one
    assert abs(error) <= run.tolerance, (
        f"{name}: predicted step {predicted:.2f} s, published {measured:.2f} s"
        f" (throughput {error:+.1%}, tolerance {run.tolerance:.0%})"
    )


def test_the_efficiency_is_calibrated_on_one_run_and_predicts_the_others() -> None:
    calibrated = [name for name, run in RUNS.items() if run.calibrates]
    assert calibrated == ["Llama 3 405B, 8,192 GPUs"]
    assert len(RUNS) - len(calibrated) >= 3
    assert "Llama 3 405B" in load_hardware().compute_efficiency_source
