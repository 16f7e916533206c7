"""The validation set: published figures with their sources, setups and modelling requests.

Every figure names where it was published and what was measured. ``calibrates=True`` marks the
figures a catalogue or model constant was fitted on; every other figure is held out: nothing in
the model was tuned to it. ``benchmarks/bandwidth_validation.py`` prints each figure's error,
grouped; ``tests/bandwidth/test_published.py`` holds the model to its tolerances.

Groups:
- ``link``: one point-to-point link (iperf, perftest, copies, NCCL point to point);
- ``latency``: collectives of at most 64 KiB, timed in microseconds;
- ``mid``: collectives from 1 MiB to under 1 GiB, in the tool's bandwidth unit;
- ``large``: collectives of 1 GiB and more;
- ``step``: whole training steps, as tokens or TFLOP/s per GPU.

Metrics follow the tools that published them:
- iperf / iperf3 report goodput in bits per second (10^6 or 10^9);
- perftest (ib_write_bw, ib_read_bw, ib_send_bw) reports MB/sec as MiB/s, or Gb/sec with 10^9;
- nccl-tests report algbw = bytes / time and busbw = algbw x 2(n-1)/n for all-reduce
  (doc/PERFORMANCE.md), and time in microseconds;
- CUDA bandwidthTest reports MB/s in units of 1.024e6 bytes; nvbandwidth reports GB/s (10^9).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.bandwidth import Hardware, PlanRequest, estimate, load_catalogue, parse_request, plan

MIB = 2**20
STEP_TOLERANCE = 0.30  # every run; the aim (90% of them within 20%) is checked as a share
WITHIN = 0.20
GROUPS = ("link", "latency", "mid", "large", "step")


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


def microseconds(_nbytes: int, seconds: float, _ranks: int) -> float:
    return seconds * 1e6


@dataclass(frozen=True)
class Measurement:
    """A published communication figure and the ``/bandwidth`` request that models it."""

    request: str
    metric: Callable[[int, float, int], float]  # (bytes, seconds, ranks) -> the tool's unit
    measured: float
    unit: str
    tolerance: float | None  # None: reported in the table, not yet held to a bound
    source: str = ""
    kinds: frozenset[str] = field(default_factory=frozenset)
    calibrates: bool = False
    algorithm: str | None = None  # the algorithm NCCL should pick, where the source says

    @property
    def lower_is_better(self) -> bool:
        """Return whether the figure is a time (a latency) rather than a rate."""
        return self.metric is microseconds

    def group(self) -> str:
        """Return the figure's group: link, latency, mid or large."""
        request = parse_request(self.request)
        if request.op == "transfer":
            return "link"
        if request.bytes <= 64 * 1024:
            return "latency"
        return "large" if request.bytes >= 2**30 else "mid"

    def predict(self) -> tuple[float, str]:
        """Return the estimator's figure in the tool's unit, and the algorithm it ran."""
        request = parse_request(self.request)
        result = estimate(request, load_catalogue()).fastest
        ranks = request.ranks if request.op != "transfer" else 2
        return self.metric(request.bytes, result.seconds, ranks), result.algorithm


@dataclass(frozen=True)
class Run:
    """A published training run: its layout as a plan request and its throughput."""

    request: PlanRequest
    measured: float
    unit: str  # "tokens/s/GPU" or "TFLOP/s/GPU"
    tolerance: float | None
    source: str = ""
    flops: str = "model"  # for TFLOP/s: "model" (6N plus attention) or "megatron-recompute"
    precision: str = "bf16"
    calibrates: bool = False

    lower_is_better = False

    def group(self) -> str:
        """Return ``step``."""
        return "step"

    def plan_request(self) -> PlanRequest:
        """Return the request, with FP8 where the run used it and the planner models it."""
        names = {f.name for f in dataclasses.fields(PlanRequest)}
        if self.precision == "fp8" and "fp8" in names:
            return dataclasses.replace(self.request, fp8=True)  # type: ignore[call-arg]
        return self.request

    def predict(self, hardware: Hardware | None = None) -> tuple[float, str]:
        """Return the planner's throughput in the source's unit (bundled hardware by default)."""
        result = plan(self.plan_request(), load_catalogue(), hardware)
        step = result.fastest.step_seconds
        layout, model = result.layout, result.model
        if self.unit == "tokens/s/GPU":
            return layout.tokens_per_step / step / layout.gpus, ""
        if self.flops == "model":
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
        return flops / step / layout.gpus / 1e12, ""


Figure = Measurement | Run


def error(figure: Figure) -> float:
    """Return predicted / measured - 1 (for a time, how much slower the prediction is)."""
    predicted, _ = figure.predict()
    return predicted / figure.measured - 1


def kinds(*names: str) -> frozenset[str]:
    return frozenset(names)


MEASUREMENTS: dict[str, Measurement] = {
    # ----- one link -----
    "iperf 1GbE": Measurement(
        "1.17GB over=1gbe",
        mbit_per_s,
        939.0,
        "Mbit/s",
        0.02,
        "Jeremy Stretch, 'Proving the Network is Not the Problem With iperf', packetlife.net,"
        " 2011-02-28: iperf average 939 Mbit/s between two hosts on a gigabit switch",
    ),
    "iperf3 10GbE": Measurement(
        "11.8GB over=10gbe",
        gbit_per_s,
        9.41,
        "Gbit/s",
        0.02,
        "github.com/spidernet-io/spiderpool docs/concepts/io-performance.md: iperf3 node to"
        " node, one stream, 9.41 Gbit/s",
    ),
    "ib_write_bw EDR": Measurement(
        "8MiB over=ib-edr",
        gbit_per_s,
        96.6,
        "Gb/s",
        0.03,
        "NVIDIA developer forum thread 273376 (2023): ib_write_bw on EDR 4x tops out at 96.6 Gb/s",
    ),
    "ib_write_bw 100G": Measurement(
        "8MiB over=ib-edr",
        mib_per_s,
        11_728.47,
        "MiB/s",
        0.03,
        "github.com/linux-rdma/perftest/issues/225: ib_write_bw on a 100 Gb/s InfiniBand card,"
        " 11,728.47 MB/sec (perftest MiB/s)",
    ),
    "ib_read_bw HDR": Measurement(
        "8MiB over=ib-hdr",
        gbyte_per_s,
        23.0,
        "GB/s",
        0.08,
        "github.com/openucx/ucx/issues/8851: ib_read_bw with a ConnectX-6 HDR adapter, 23 GB/s",
    ),
    "NCCL p2p 2x HDR": Measurement(
        "1GiB nics=2 over=ib-hdr",
        gbyte_per_s,
        48.0,
        "GB/s",
        0.03,
        "github.com/NVIDIA/nccl/issues/307 (NCCL maintainer): two HDR links give about 48 GB/s",
    ),
    "ib_send_bw NDR": Measurement(
        "1GiB over=ib-ndr",
        gbit_per_s,
        396.0,
        "Gb/s",
        0.03,
        "github.com/NVIDIA/nccl-tests/issues/309: ib_send_bw --use_cuda reaches 396 Gb/s on a"
        " ConnectX-7 NDR link (written '396 GB/s')",
    ),
    "RDMA WRITE RoCE 100G": Measurement(
        "1GiB over=roce-100",
        gbit_per_s,
        97.5,
        "Gb/s",
        0.02,
        "J. Synchrotron Rad. 27(5):1297-1306 (2020), table 2: RoCE v2 RDMA WRITE on 100 GbE at"
        " 4,096-byte packets, 97.5 Gb/s",
        calibrates=True,
    ),
    "H2D copy PCIe 4.0": Measurement(
        "512MiB over=pcie4",
        gbyte_per_s,
        25.13,
        "GB/s",
        0.03,
        "github.com/NVIDIA/nvbandwidth/issues/42: host-to-device copy on an A100-SXM4-40GB"
        " (PCIe 4.0 x16), nvbandwidth 25.13 GB/s",
    ),
    "H2D copy PCIe 3.0": Measurement(
        "32MiB over=pcie3",
        bandwidthtest_mb_per_s,
        12_150.7,
        "MB/s (1.024e6 B)",
        0.03,
        "github.com/mpicbg-scicomp/gearshifft pull request 82: bandwidthTest pinned host to"
        " device on a P100 (PCIe 3.0 x16), 12,150.7 MB/s",
    ),
    # ----- small collectives: latency -----
    "8 B, 2x A100 NVLink": Measurement(
        "8B allreduce nodes=1 gpus=2 over=nvlink3",
        microseconds,
        10.1,
        "us",
        None,
        "github.com/NVIDIA/nccl/issues/583: nccl-tests all_reduce_perf, 8 bytes between two"
        " A100 over NVLink, 10.1 us (the source of nvlink3's latency)",
        kinds("latency"),
        calibrates=True,
    ),
    "8 B, 8x A100 NVLink, one thread": Measurement(
        "8B allreduce nodes=1 gpus=8 over=nvlink3 algo=ring launch=single",
        microseconds,
        33.7,
        "us",
        None,
        "github.com/NVIDIA/nccl-tests/issues/123: all_reduce_perf -b 8 -e 128 -g 2 to -g 8 on a"
        " DGX-A100 (NCCL_ALGO=Ring, NCCL_MAX_NCHANNELS=1), 10 us on 2 GPUs and 33.7 on 8 (the"
        " source of launch=single's line)",
        kinds("latency"),
        calibrates=True,
    ),
    "8 B, 16x8 H100 IB": Measurement(
        "8B allreduce nodes=16 gpus=8 over=ib-ndr",
        microseconds,
        72.01,
        "us",
        None,
        "github.com/NVIDIA/nccl/issues/1469: all_reduce_perf on 16 H100 nodes (128 GPUs, NCCL"
        " 2.20.5), 8 bytes out of place 72.01 us; NIC count not given (8 NDR NICs assumed;"
        " 8 bytes do not depend on it)",
        kinds("latency"),
        calibrates=True,
    ),
    "8 B, 8x RTX 4090 PCIe": Measurement(
        "8B allreduce nodes=1 gpus=8 over=pcie4 launch=single",
        microseconds,
        42.14,
        "us",
        None,
        "github.com/NVIDIA/nccl/issues/1530: all_reduce_perf -g 8 (one thread drives the eight"
        " GPUs) on 8 GeForce RTX 4090 on PCIe 4.0 in one server, 8 bytes out of place 42.14 us",
        kinds("latency"),
    ),
    # The same box measured both ways: NCCL through host memory (the GeForce driver gives no
    # peer-to-peer) and over peer-to-peer (a driver that enables it), nccl-tests -g 8 each time.
    "8 B, 8x RTX 4090, no P2P": Measurement(
        "8B allreduce nodes=1 gpus=8 over=pcie4 launch=single",
        microseconds,
        38.83,
        "us",
        None,
        "blog.chlc.cc/p/rtx4090-gpudirect-p2p-unlocked: all_reduce_perf -b 8 -e 128M -f 2 -g 8"
        " on 8 GeForce RTX 4090 (2 EPYC 7542, every pair SYS), stock driver without"
        " peer-to-peer, 8 bytes out of place 38.83 us",
        kinds("latency"),
    ),
    "8 B, 8x RTX 4090, P2P": Measurement(
        "8B allreduce nodes=1 gpus=8 over=pcie4 launch=single",
        microseconds,
        38.82,
        "us",
        None,
        "blog.chlc.cc/p/rtx4090-gpudirect-p2p-unlocked: the same box and command after"
        " tinygrad's open-gpu-kernel-modules 550.90.07-p2p enables peer-to-peer (GPU-to-GPU write"
        " latency 11.67 -> 1.19 us, 128 MiB busbw 14.47 -> 20.64 GB/s), 8 bytes out of place"
        " 38.82 us",
        kinds("latency"),
    ),
    "8 B broadcast, 2 nodes TCP": Measurement(
        "8B broadcast nodes=2 gpus=1 over=100gbe algo=ring proto=simple",
        microseconds,
        45.82,
        "us",
        None,
        "github.com/NVIDIA/nccl-tests/issues/82: broadcast_perf between two V100-PCIE hosts over"
        " NCCL's sockets (NCCL_IB_DISABLE=1, NCCL_ALGO=Ring, NCCL_PROTO=Simple), 8 bytes"
        " 45.82 us; the NIC rate is not given (8 bytes do not depend on it)",
        kinds("latency", "TCP sockets"),
    ),
    # ----- mid-size collectives, 1 MiB to under 1 GiB -----
    "3x8 A100, 4 HDR": Measurement(
        "128MiB allreduce nodes=3 gpus=8 nics=4 intra=nvlink3 over=ib-hdr",
        allreduce_busbw,
        96.0,
        "GB/s busbw",
        # 0.10 until NCCL's ring "plateau" latency (x1.4, src/graph/tuning.cc) was priced: the
        # source gives the peak busbw, which no latency term reaches; 0.15 holds it to that
        0.15,
        "github.com/NVIDIA/nccl-tests/issues/119: 3 servers of 8 A100 with 4 HDR HCAs each,"
        " 128 MiB, peak busbw about 96 GB/s ('24GB/s is the peak performance per 200G NIC')",
        kinds("multi-node ring", "RDMA"),
        algorithm="ring",
    ),
    "4x8 V100, 100G TCP": Measurement(
        "128MB allreduce nodes=4 gpus=8 nics=1 intra=nvlink3 over=100gbe",
        allreduce_busbw,
        5.0,
        "GB/s busbw",
        0.20,
        "github.com/NVIDIA/nccl/issues/450: four machines of 8 V100 on one 100 Gb/s TCP network"
        " each, 'the best performance (bus-bw) is between 4~6GB/s' for 8M-128M buffers",
        kinds("TCP sockets"),
        algorithm="ring",
    ),
    "2x8 V100, 100G TCP, ring": Measurement(
        "512MiB allreduce nodes=2 gpus=8 nics=1 intra=nvlink3 over=100gbe algo=ring",
        allreduce_busbw,
        6.0,
        "GB/s busbw",
        0.15,
        "github.com/NVIDIA/nccl/issues/398: two p3dn (8 V100, 100 Gb/s) over NCCL's TCP sockets"
        " with the tree disabled, 'the bus can sustain around 6GB/s'",
        kinds("TCP sockets"),
    ),
    "2x1 H100, 4 NICs, tree, 2 MiB": Measurement(
        "2MiB allreduce nodes=2 gpus=1 nics=4 over=roce-400 algo=tree",
        allreduce_busbw,
        18.53,
        "GB/s busbw",
        None,
        "github.com/NVIDIA/nccl-tests/issues/232: two nodes of one H100 each, 4 RoCE NICs"
        " (NCCL_IB_GID_INDEX=3; 'theoretical busbw should be 200'), NCCL_ALGO=Tree, 2 MiB"
        " busbw 18.53 GB/s",
        kinds("RDMA", "mid-size"),
    ),
    "2x1 H100, 4 NICs, tree, 16 MiB": Measurement(
        "16MiB allreduce nodes=2 gpus=1 nics=4 over=roce-400 algo=tree",
        allreduce_busbw,
        39.90,
        "GB/s busbw",
        None,
        "github.com/NVIDIA/nccl-tests/issues/232 (same run): 16 MiB busbw 39.90 GB/s",
        kinds("RDMA", "mid-size"),
    ),
    "2x1 H100, 4 NICs, tree, 32 MiB": Measurement(
        "32MiB allreduce nodes=2 gpus=1 nics=4 over=roce-400 algo=tree",
        allreduce_busbw,
        41.31,
        "GB/s busbw",
        None,
        "github.com/NVIDIA/nccl-tests/issues/232 (same run): 32 MiB busbw 41.31 GB/s",
        kinds("RDMA", "mid-size"),
    ),
    "GB200 NVL72, 512 MiB": Measurement(
        "512MiB allreduce nodes=1 gpus=72 over=nvlink5",
        allreduce_busbw,
        586.06,
        "GB/s busbw",
        None,
        "github.com/coreweave/nccl-tests pull request 43: all_reduce_perf on a full GB200 NVL72"
        " rack (72 GPUs), 512 MiB out of place busbw 586.06 GB/s",
        kinds("NVLS", "mid-size"),
    ),
    # ----- large collectives, 1 GiB and more -----
    "8x H100 ring": Measurement(
        "8GiB allreduce nodes=1 gpus=8 over=nvlink4 algo=ring",
        allreduce_busbw,
        370.0,
        "GB/s busbw",
        0.05,
        "github.com/NVIDIA/nccl-tests/issues/212 (NCCL maintainer): one box of 8 H100 with"
        " NCCL_ALGO=RING, busbw about 370 GB/s",
        kinds("NVLink", "ring"),
    ),
    "8x H100 NVLS, #212": Measurement(
        "8GiB allreduce nodes=1 gpus=8 over=nvlink4",
        allreduce_busbw,
        480.0,
        "GB/s busbw",
        0.02,
        "github.com/NVIDIA/nccl-tests/issues/212 (same thread): with NVLS about 480 GB/s; where"
        " nvls_efficiency of nvlink4 comes from",
        kinds("NVLS"),
        calibrates=True,
        algorithm="nvls",
    ),
    "8x H100 NVLS, #290": Measurement(
        "8GiB allreduce nodes=1 gpus=8 over=nvlink4",
        allreduce_busbw,
        476.0,
        "GB/s busbw",
        0.05,
        "github.com/NVIDIA/nccl-tests/issues/290 (NCCL maintainer): one H100 node, '476GB/s"
        " looks to be in the expected range for H100' with NVLink SHARP",
        kinds("NVLS"),
        algorithm="nvls",
    ),
    "8x H100 NVLS, #309": Measurement(
        "16GiB allreduce nodes=1 gpus=8 over=nvlink4",
        allreduce_busbw,
        480.0,
        "GB/s busbw",
        0.05,
        "github.com/NVIDIA/nccl-tests/issues/309: Dell XE9680, 8 H100, NCCL 2.26, 'each single"
        " node with 8 pairs still get 480 GB/s'",
        kinds("NVLS"),
        algorithm="nvls",
    ),
    "8x B200 NVLS": Measurement(
        "16GiB allreduce nodes=1 gpus=8 over=nvlink5",
        allreduce_busbw,
        830.0,
        "GB/s busbw",
        0.02,
        "github.com/NVIDIA/nccl/issues/1807: 8 B200 in one box, all_reduce_perf reaches 830+"
        " GB/s; where nvls_efficiency of nvlink5 comes from",
        kinds("NVLS"),
        calibrates=True,
        algorithm="nvls",
    ),
    "8x A100 ring": Measurement(
        "1GiB allreduce nodes=1 gpus=8 over=nvlink3",
        allreduce_busbw,
        200.0,
        "GB/s busbw",
        0.20,
        "github.com/NVIDIA/nccl-tests/issues/149: one HPE Apollo 6500 of 8 A100-SXM4-80GB, up"
        " to 1 GiB, busbw about 200 GB/s (this board lags a DGX)",
        kinds("NVLink", "ring"),
        algorithm="ring",
    ),
    "2x8 A100, 8 HDR, ring": Measurement(
        "8GiB allreduce nodes=2 gpus=8 intra=nvlink3 over=ib-hdr algo=ring",
        allreduce_busbw,
        192.0,
        "GB/s busbw",
        0.05,
        "github.com/NVIDIA/nccl/issues/812 (NCCL maintainer): DGX-A100 with 8 x 200G IB, 'we"
        " measure 192GB/s AllReduce BusBW' with NCCL_ALGO=RING on two nodes",
        kinds("multi-node ring", "RDMA"),
    ),
    "2x8 H100, 8 NDR, ring": Measurement(
        "16GiB allreduce nodes=2 gpus=8 over=ib-ndr algo=ring",
        allreduce_busbw,
        396.0,
        "GB/s busbw",
        0.12,
        "github.com/NVIDIA/nccl-tests/issues/319 (NCCL maintainer): 8 CX7 at 400 Gb/s, 'up to"
        " ~396GB/s with the RING protocol'",
        kinds("multi-node ring", "RDMA"),
    ),
    "2x8 H100, 8 NDR, 2-node tree": Measurement(
        "16GiB allreduce nodes=2 gpus=8 over=ib-ndr",
        allreduce_busbw,
        470.0,
        "GB/s busbw",
        0.12,
        "github.com/NVIDIA/nccl-tests/issues/309: two Dell XE9680, 16 GPU-NIC pairs, 470 GB/s:"
        " NCCL's default on two H100 nodes is NVLS-tree (NVIDIA/nccl#812, nccl-tests#196)",
        kinds("2-node tree", "RDMA"),
        algorithm="nvls-tree",
    ),
    "4x8 H100, 8 NDR": Measurement(
        "16GiB allreduce nodes=4 gpus=8 over=ib-ndr",
        allreduce_busbw,
        365.84,
        "GB/s busbw",
        0.05,
        "github.com/NVIDIA/nccl-tests/issues/309 (same thread): four nodes, 32 pairs, 'max"
        " busbw can get 365.84 GB/s'",
        kinds("multi-node ring", "RDMA"),
    ),
    "2x4 GPUs, 25G TCP, ring": Measurement(
        "2GiB allreduce nodes=2 gpus=4 nics=1 intra=pcie4 over=25gbe algo=ring",
        allreduce_busbw,
        1.7,
        "GB/s busbw",
        0.03,
        "github.com/NVIDIA/nccl-tests/issues/83: Azure VMs on 25 Gb/s TCP, 2 hosts x 4 GPUs,"
        " NCCL_ALGO=Ring, busbw 'maxed out at 1.7GBps'; where the 25 GbE collective efficiency"
        " comes from",
        kinds("TCP sockets"),
        calibrates=True,
    ),
    "GB200 NVL72, 1 GiB": Measurement(
        "1GiB allreduce nodes=1 gpus=72 over=nvlink5",
        allreduce_busbw,
        681.17,
        "GB/s busbw",
        None,
        "github.com/coreweave/nccl-tests pull request 43 (same rack run): 1 GiB busbw 681.17 GB/s",
        kinds("NVLS"),
    ),
    "GB200 NVL72, 8 GiB": Measurement(
        "8GiB allreduce nodes=1 gpus=72 over=nvlink5",
        allreduce_busbw,
        834.57,
        "GB/s busbw",
        None,
        "github.com/coreweave/nccl-tests pull request 43 (same rack run): 8 GiB busbw 834.57 GB/s",
        kinds("NVLS"),
    ),
    "2x8 H100, CoreWeave, 8 GiB": Measurement(
        "8GiB allreduce nodes=2 gpus=8 over=ib-ndr",
        allreduce_busbw,
        440.58,
        "GB/s busbw",
        None,
        "github.com/coreweave/nccl-tests pull request 92: H100 8 GPUs x 2 nodes, 440.58 GB/s"
        " busbw at 8G all-reduce; NICs not stated in the PR (8 NDR InfiniBand a node assumed)",
        kinds("2-node tree", "RDMA"),
    ),
    "2x8 B200, CoreWeave, 8 GiB": Measurement(
        "8GiB allreduce nodes=2 gpus=8 intra=nvlink5 over=ib-ndr",
        allreduce_busbw,
        690.07,
        "GB/s busbw",
        None,
        "github.com/coreweave/nccl-tests pull request 92: B200 8 GPUs x 2 nodes, 690.07 GB/s"
        " busbw at 8G all-reduce; NICs not stated in the PR (8 NDR InfiniBand a node assumed)",
        kinds("2-node tree", "RDMA"),
    ),
}


# ----- whole training steps -----

LLAMA3 = (
    "Llama 3 paper (arXiv:2407.21783) section 3.3.2 and Table 4: TP 8, PP 16, H100, RoCE 400"
    " (one NIC per GPU), FSDP sharding of the gradients and optimizer; interleaved schedule of"
    " 8 virtual stages: section 3.3.2 removes one layer each from the first and last stages so"
    " that 'the first model chunk on the first stage has only the embedding', so a chunk held"
    " one layer, and (126 + 2) / 16 = 8 chunks a rank"
)
MPT = (
    "github.com/mosaicml/llm-foundry scripts/train/benchmarking/README.md, table 'H100 80GB"
    " BF16' (or FP8): MPT {size} on {gpus} H100, FSDP FULL_SHARD, seq {seq}, micro-batch {mb},"
    " global batch {gb}, activation checkpointing {ac}; shape from scripts/train/yamls/pretrain"
    " (d_model, n_layers, vocab 50,368, 4x MLP, tied embedding), checked against the table's"
    " NumParams"
)
NEMO = (
    "github.com/NVIDIA/NeMo docs/source/performance/performance_summary.md (NeMo 24.07,"
    " DGX-H100, FP8 pre-training): {what}; DGX H100 nodes carry 8 ConnectX-7 400 Gb/s"
    " InfiniBand NICs (NVIDIA DGX H100 user guide)"
)

# MPT shapes (scripts/train/yamls/pretrain/mpt-*.yaml): d_model, n_layers.
_MPT_SHAPES = {
    "350m": (1024, 24),
    "760m": (1536, 24),
    "1b": (2048, 24),
    "3b": (2560, 32),
    "7b": (4096, 32),
    "13b": (5120, 40),
    "30b": (7168, 48),
}


def _llama(gpus: int, cp: int, seq: int, batch: int) -> PlanRequest:
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
        interleave=8,
        uneven=True,
    )


def _mpt(
    size: str,
    seq: int,
    mb: int,
    gb: int,
    ac: bool,
    tokens: float,
    *,
    fp8: bool = False,
    calibrates: bool = False,
) -> Run:
    hidden, layers = _MPT_SHAPES[size]
    request = PlanRequest(
        f"mpt-{size}",
        gpus=8,
        gpus_per_node=8,
        tp=1,
        zero=3,
        seq=seq,
        global_batch=gb,
        micro_batch=mb,
        gpu="h100",
        over=("ib-ndr",),
        layers=layers,
        hidden=hidden,
        vocab=50_368,
        recompute=ac,
    )
    source = (
        MPT.format(size=size, gpus=8, seq=seq, mb=mb, gb=gb, ac="on" if ac else "off")
        + f": {tokens:,.0f} tokens/s per GPU"
    )
    return Run(
        request,
        tokens,
        "tokens/s/GPU",
        STEP_TOLERANCE,
        source,
        precision="fp8" if fp8 else "bf16",
        calibrates=calibrates,
    )


def _nemo(request: PlanRequest, tokens: float, what: str, *, calibrates: bool = False) -> Run:
    source = NEMO.format(what=what) + f"; {tokens:,.0f} tokens/s per GPU"
    return Run(
        request, tokens, "tokens/s/GPU", None, source, precision="fp8", calibrates=calibrates
    )


RUNS: dict[str, Run] = {
    "Llama 3 405B, 8,192 GPUs": Run(
        _llama(8192, 1, 8192, 2048),
        430.0,
        "TFLOP/s/GPU",
        STEP_TOLERANCE,
        LLAMA3 + "; 8,192 GPUs, DP 64, 8K sequences, 16M tokens a batch: 430 TFLOP/s per GPU",
        calibrates=True,
    ),
    "Llama 3 405B, 16,384 GPUs": Run(
        _llama(16384, 1, 8192, 2048),
        400.0,
        "TFLOP/s/GPU",
        STEP_TOLERANCE,
        LLAMA3 + "; 16,384 GPUs, DP 128, 8K sequences, 16M tokens: 400 TFLOP/s per GPU",
    ),
    "Llama 3 405B, 16,384 GPUs, 128K context": Run(
        _llama(16384, 16, 131072, 128),
        380.0,
        "TFLOP/s/GPU",
        STEP_TOLERANCE,
        LLAMA3 + "; 16,384 GPUs, CP 16, DP 8, 131,072-token sequences: 380 TFLOP/s per GPU",
    ),
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
            uneven=True,
        ),
        150.0,
        "TFLOP/s/GPU",
        STEP_TOLERANCE,
        "BLOOM 176B on 48 nodes of 8 A100 80GB, 4 Omni-Path 100 Gb/s links each: TP 4, PP 12,"
        " DP 8, micro-batch 2, 2,048 sequences of 2,048 tokens, full activation checkpointing"
        " (github.com/bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm);"
        " 'about 150 TFLOPs' (bigscience.notion.site, BigScience 176B model page), counted with"
        " Megatron's formula and its factor of 4 for recomputation",
        flops="megatron-recompute",
    ),
    # MosaicML MPT on one node of 8 H100 (no network): the compute model alone.
    "MPT-760M, 1K seq, mb 48": _mpt("760m", 1024, 48, 768, False, 78_581, calibrates=True),
    "MPT-760M, 2K seq, mb 24": _mpt("760m", 2048, 24, 384, False, 63_147),
    "MPT-760M, 4K seq, mb 12": _mpt("760m", 4096, 12, 192, False, 55_459),
    "MPT-1B, 2K seq, mb 14": _mpt("1b", 2048, 14, 112, False, 45_455, calibrates=True),
    "MPT-1B, 4K seq, mb 7": _mpt("1b", 4096, 7, 224, False, 38_535),
    "MPT-1B, 16K seq, mb 2": _mpt("1b", 16384, 2, 64, False, 19_649),
    "MPT-3B, 512 seq, mb 40": _mpt("3b", 512, 40, 1920, False, 27_965),
    "MPT-3B, 4K seq, mb 5": _mpt("3b", 4096, 5, 240, False, 20_964),
    "MPT-3B, 8K seq, mb 3": _mpt("3b", 8192, 3, 144, False, 16_578),
    "MPT-7B, 2K seq, mb 6": _mpt("7b", 2048, 6, 48, False, 10_643, calibrates=True),
    "MPT-7B, 4K seq, mb 16, ckpt": _mpt("7b", 4096, 16, 256, True, 8_611),
    "MPT-7B, 8K seq, mb 8, ckpt": _mpt("7b", 8192, 8, 128, True, 6_935),
    "MPT-7B, 32K seq, mb 2, ckpt": _mpt("7b", 32768, 2, 32, True, 3_318),
    "MPT-13B, 2K seq, mb 2": _mpt("13b", 2048, 2, 16, False, 4_792),
    "MPT-13B, 4K seq, mb 10, ckpt": _mpt("13b", 4096, 10, 240, True, 4_717),
    "MPT-13B, 16K seq, mb 3, ckpt": _mpt("13b", 16384, 3, 72, True, 2_985),
    "MPT-30B, 1K seq, mb 6, ckpt": _mpt("30b", 1024, 6, 1008, True, 2_084),
    "MPT-30B, 2K seq, mb 3, ckpt": _mpt("30b", 2048, 3, 504, True, 2_002, calibrates=True),
    "MPT-30B, 8K seq, mb 1, ckpt": _mpt("30b", 8192, 1, 168, True, 1_384),
    "MPT-350M FP8, 512 seq, mb 56": _mpt("350m", 512, 56, 1792, False, 154_420, fp8=True),
    "MPT-1B FP8, 512 seq, mb 56": _mpt("1b", 512, 56, 1792, False, 70_315, fp8=True),
    "MPT-3B FP8, 2K seq, mb 10": _mpt(
        "3b", 2048, 10, 480, False, 30_586, fp8=True, calibrates=True
    ),
    "MPT-3B FP8, 8K seq, mb 3": _mpt("3b", 8192, 3, 144, False, 19_146, fp8=True),
    # The rest of the same tables' 8-GPU rows, added as held-out figures: every one of them,
    # whatever its error; none was used to fit or to choose anything.
    "MPT-30B, 4K seq, mb 1, ckpt": _mpt("30b", 4096, 1, 168, True, 1_802),
    "MPT-13B, 32K seq, mb 1, ckpt": _mpt("13b", 32768, 1, 24, True, 1_976),
    "MPT-13B, 1K seq, mb 40, ckpt": _mpt("13b", 1024, 40, 960, True, 5_502),
    "MPT-7B, 64K seq, mb 1, ckpt": _mpt("7b", 65536, 1, 16, True, 1_956),
    "MPT-7B, 1K seq, mb 64, ckpt": _mpt("7b", 1024, 64, 1024, True, 10_203),
    "MPT-3B, 64K seq, mb 1, ckpt": _mpt("3b", 65536, 1, 16, True, 3_262),
    "MPT-3B, 32K seq, mb 3, ckpt": _mpt("3b", 32768, 3, 144, True, 5_873),
    "MPT-3B, 16K seq, mb 1": _mpt("3b", 16384, 1, 48, False, 11_152),
    "MPT-3B, 1K seq, mb 20": _mpt("3b", 1024, 20, 960, False, 27_046),
    "MPT-1B, 64K seq, mb 1, ckpt": _mpt("1b", 65536, 1, 16, True, 5_506),
    "MPT-1B, 32K seq, mb 1": _mpt("1b", 32768, 1, 32, False, 12_025),
    "MPT-1B, 8K seq, mb 3": _mpt("1b", 8192, 3, 96, False, 29_157),
    "MPT-1B, 1K seq, mb 18": _mpt("1b", 1024, 18, 576, False, 48_910),
    "MPT-1B, 512 seq, mb 56": _mpt("1b", 512, 56, 1792, False, 52_275),
    "MPT-760M, 32K seq, mb 1": _mpt("760m", 32768, 1, 16, False, 16_291),
    "MPT-760M, 16K seq, mb 3": _mpt("760m", 16384, 3, 48, False, 27_815),
    "MPT-760M, 8K seq, mb 6": _mpt("760m", 8192, 6, 96, False, 41_825),
    "MPT-760M, 512 seq, mb 96": _mpt("760m", 512, 96, 1536, False, 83_749),
    "MPT-3B FP8, 32K seq, mb 3, ckpt": _mpt("3b", 32768, 3, 144, True, 5_856, fp8=True),
    "MPT-3B FP8, 512 seq, mb 40": _mpt("3b", 512, 40, 1920, False, 36_527, fp8=True),
    "MPT-1B FP8, 32K seq, mb 1": _mpt("1b", 32768, 1, 32, False, 12_580, fp8=True),
    "MPT-1B FP8, 8K seq, mb 2": _mpt("1b", 8192, 2, 64, False, 32_010, fp8=True),
    "MPT-350M FP8, 32K seq, mb 1": _mpt("350m", 32768, 1, 32, False, 24_439, fp8=True),
    "MPT-350M FP8, 16K seq, mb 2": _mpt("350m", 16384, 2, 64, False, 42_929, fp8=True),
    # NVIDIA NeMo 24.07 on DGX H100, FP8.
    "NeMo GPT-3 175B FP8, 128 GPUs": _nemo(
        PlanRequest(
            "gpt3-175b",
            gpus=128,
            tp=4,
            pp=8,
            interleave=6,
            seq=2048,
            global_batch=256,
            micro_batch=1,
            gpu="h100",
            over=("ib-ndr",),
        ),
        726,
        "GPT3-175B on 128 GPUs, GBS 256, MBS 1, seq 2,048, TP 4, PP 8, VP 6",
        calibrates=True,
    ),
    "NeMo GPT-3 175B FP8, 512 GPUs": _nemo(
        PlanRequest(
            "gpt3-175b",
            gpus=512,
            tp=4,
            pp=8,
            interleave=6,
            seq=2048,
            global_batch=2048,
            micro_batch=2,
            gpu="h100",
            over=("ib-ndr",),
        ),
        782,
        "GPT3-175B on 512 GPUs, GBS 2,048, MBS 2, seq 2,048, TP 4, PP 8, VP 6",
    ),
    "NeMo Llama 3 8B FP8, 8 GPUs": _nemo(
        PlanRequest(
            "llama3-8b",
            gpus=8,
            tp=1,
            cp=2,
            seq=8192,
            global_batch=128,
            micro_batch=1,
            gpu="h100",
            over=("ib-ndr",),
        ),
        12_036,
        "LLAMA3-8B on 8 GPUs, GBS 128, MBS 1, seq 8,192, TP 1, PP 1, CP 2",
    ),
    "NeMo Llama 3 70B FP8, 64 GPUs": _nemo(
        PlanRequest(
            "llama3-70b",
            gpus=64,
            tp=4,
            pp=4,
            cp=2,
            interleave=5,
            seq=8192,
            global_batch=128,
            micro_batch=1,
            gpu="h100",
            over=("ib-ndr",),
        ),
        1_533,
        "LLAMA3-70B on 64 GPUs, GBS 128, MBS 1, seq 8,192, TP 4, PP 4, CP 2, VP 5",
    ),
}

FIGURES: dict[str, Figure] = {**MEASUREMENTS, **RUNS}
