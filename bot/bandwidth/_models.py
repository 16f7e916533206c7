"""Cost models: the alpha-beta formulas for a transfer and for each collective as NCCL runs it.

Every formula is ``latency term + bandwidth term``: ``alpha`` is the one-way latency of a
message step and ``B`` the bandwidth in bytes per second. ``S`` is the buffer size in bytes
(the whole buffer: for all-gather the gathered output, for reduce-scatter the input).
docs/bandwidth.md lists the same formulas and where each comes from.

For a collective the candidates are the algorithms NCCL itself chooses between (ring, tree,
NVLS and NVLS-tree on NVSwitch boxes, CollNet when the fabric reduces in the switch); NCCL
runs the one its tuner predicts fastest, and so does :func:`collective`. The two-level
hierarchical all-reduce is priced only when asked for: NCCL does not run it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

# The algorithms a caller may force (``--algo``); "auto" is NCCL's own choice.
ALGORITHMS = ("auto", "ring", "tree", "nvls", "collnet", "hier")
NOT_NCCL = "hier"
# The protocols a caller may force (``--proto``, NCCL_PROTO); "auto" is NCCL's own choice.
PROTOCOL_CHOICES = ("auto", "ll", "ll128", "simple")
# Who launches the kernels: each GPU its own process or thread, or one thread a node in turn.
LAUNCH_CHOICES = ("each", "single")


# NCCL's tuner keeps one row of constants per GPU generation (compCapIndex in
# src/graph/tuning.cc): Volta, Ampere (Ada too: compute capability 8.x), Hopper, Blackwell.
VOLTA, AMPERE, HOPPER, BLACKWELL = 0, 1, 2, 3
# The generation of the GPUs each intra-node link joins (NVIDIA V100, A100, H100 and B200
# datasheets: NVLink 2, 3, 4 and 5); PCIe boxes are read as Ampere-class cards.
GENERATIONS = {"nvlink2": VOLTA, "nvlink3": AMPERE, "nvlink4": HOPPER, "nvlink5": BLACKWELL}


def generation(intra_key: str) -> int:
    """Return the generation row of NCCL's constants for GPUs joined by ``intra_key``."""
    return GENERATIONS.get(intra_key, AMPERE if intra_key.startswith("pcie") else HOPPER)


class Link(NamedTuple):
    """A link as the formulas see it: bytes per second and seconds of latency."""

    bandwidth: float
    latency: float


class Cost(NamedTuple):
    """The time an operation takes, split into its latency and bandwidth terms."""

    latency_s: float
    bandwidth_s: float
    algorithm: str
    protocol: str = "Simple"
    channels: int = 0  # the channels (rings or trees side by side) NCCL runs it on; 0: not NCCL

    @property
    def seconds(self) -> float:
        """Return the whole time: latency term plus bandwidth term."""
        return self.latency_s + self.bandwidth_s


@dataclass(frozen=True, slots=True)
class Cluster:
    """Where a collective runs: nodes of GPUs, a network between nodes, a link inside them.

    ``net`` carries a whole node's bandwidth to the network (all its NICs together) and the
    network's latency (None inside one box); ``intra`` is the GPU-to-GPU link inside a node
    (None with one GPU a node); ``nvls`` the per-GPU rate of an in-switch (NVLS) reduction when
    the box has one; ``sharp`` whether the network's switches reduce (CollNet).
    """

    nodes: int
    gpus: int
    net: Link | None
    intra: Link | None = None
    nvls: Link | None = None
    sharp: bool = False
    intra_kind: str = "nvlink"  # "nvlink" or "pci": which row of NCCL's latency table applies
    net_extra_latency: float = 0.0  # seconds a network hop adds beyond NCCL's InfiniBand figure
    ll128: bool = True  # NCCL enables LL128 (NVLink inside, GPUDirect RDMA between nodes)
    generation: int = HOPPER  # the row of NCCL's per-generation constants (see GENERATIONS)

    @property
    def ranks(self) -> int:
        """Return the number of GPUs taking part."""
        return self.nodes * self.gpus


def transfer(size: float, link: Link) -> Cost:
    """Return the time to send ``size`` bytes over one link: alpha + S / B."""
    return Cost(link.latency, size / link.bandwidth, "direct")


def ring_allreduce(size: float, ranks: int, link: Link) -> Cost:
    """Return the ring all-reduce time: 2(p-1)·alpha + 2(p-1)/p · S/B."""
    steps = 2 * (ranks - 1)
    return Cost(steps * link.latency, steps / ranks * size / link.bandwidth, "ring")


def tree_factor(nodes: int) -> int:
    """Return how many times S each node sends (and receives) in NCCL's double binary tree.

    Each half of the buffer goes down one of two trees. With more than two nodes a node is an
    inner vertex of one tree (it forwards its two children's halves up and the result down
    to both) and a leaf of the other: 2·S each way, the ring's volume. With two nodes each is
    the root of one tree and the leaf of the other: only S each way, half the ring's.
    """
    return 1 if nodes <= 2 else 2


def tree_allreduce(size: float, ranks: int, link: Link) -> Cost:
    """Return the double-binary-tree all-reduce time: 2·floor(log2 p)·alpha + k·S/B.

    ``k`` is :func:`tree_factor`: 2 beyond two ranks (NCCL's own tuner takes the tree's bus
    bandwidth as twice its algorithm bandwidth, as discussed in NVIDIA/nccl-tests#274), and 1 on
    two ranks.
    """
    depth = int(math.log2(ranks)) if ranks > 1 else 0
    k = tree_factor(ranks)
    return Cost(2 * depth * link.latency, k * size / link.bandwidth, "tree")


def ring_allgather(size: float, ranks: int, link: Link) -> Cost:
    """Return the ring all-gather (or reduce-scatter) time: (p-1)·alpha + (p-1)/p · S/B."""
    steps = ranks - 1
    return Cost(steps * link.latency, steps / ranks * size / link.bandwidth, "ring")


def pipelined_broadcast(size: float, ranks: int, link: Link) -> Cost:
    """Return the pipelined (chunked chain) broadcast time: (p-1)·alpha + S/B."""
    return Cost((ranks - 1) * link.latency, size / link.bandwidth, "ring")


def pairwise_alltoall(size: float, ranks: int, link: Link) -> Cost:
    """Return the all-to-all time (S/p to every other rank): (p-1)·alpha + (p-1)/p · S/B."""
    steps = ranks - 1
    return Cost(steps * link.latency, steps / ranks * size / link.bandwidth, "pairwise")


# The domain size the catalogue's NVLS rates were measured on (8-GPU HGX boxes:
# NVIDIA/nccl-tests#212 for H100, NVIDIA/nccl#1807 for B200).
NVLS_MEASURED_GPUS = 8


def nvls_allreduce(
    size: float, nvls: Link, gpus: int = NVLS_MEASURED_GPUS, link: Link | None = None
) -> Cost:
    """Return the NVLS all-reduce over one NVLink domain of ``gpus``: 2·alpha + S·f(G)/B_nvls.

    Each GPU pushes its buffer into the switch, which reduces it, and reads the result back.
    NCCL's tuner holds the NVLS *bus* bandwidth constant whatever the domain size
    (src/graph/tuning.cc: nChannels x bwIntra x nvlsEfficiency x 2, no rank count in it), so
    the per-GPU rate falls as the domain grows: ``f(G) = (2(G-1)/G) / (2(8-1)/8)``, 1 on the
    8-GPU boxes ``B_nvls`` was measured on; 72 GPUs of an NVL72 rack move S x 1.127 / B_nvls.
    A smaller domain never beats ``link``: each GPU still pushes all of S through its own NVLink.
    """
    scale = bus_factor("allreduce", max(gpus, 2)) / bus_factor("allreduce", NVLS_MEASURED_GPUS)
    seconds = size * scale / nvls.bandwidth
    if link is not None:
        seconds = max(seconds, size / link.bandwidth)
    return Cost(2 * nvls.latency, seconds, "nvls")


def fastest(*costs: Cost) -> Cost:
    """Return the quickest of ``costs`` (the first one on a tie)."""
    return min(costs, key=lambda c: c.seconds)


def chain(algorithm: str, *stages: Cost) -> Cost:
    """Return stages run one after another as a single cost named ``algorithm``."""
    return Cost(sum(s.latency_s for s in stages), sum(s.bandwidth_s for s in stages), algorithm)


def collective(
    op: str, size: float, cluster: Cluster, algo: str = "auto", proto: str = "auto"
) -> Cost:
    """Return the time of collective ``op`` on ``size`` bytes: NCCL's pick, or ``algo``.

    ``proto`` forces a protocol as NCCL_PROTO does: an algorithm that cannot run it drops out
    (NVLS, NVLS-tree and CollNet run only Simple), and a forced LL128 runs even where NCCL would
    not enable it by default (src/graph/tuning.cc checks the platform only for the default).
    Raises ValueError when ``algo`` cannot run on ``cluster`` (the request layer refuses
    such requests with a message before they get here).
    """
    options = candidates(op, size, cluster, hier=algo == NOT_NCCL)
    forced = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}.get(proto.lower())
    priced: dict[str, Cost] = {}
    for name, cost in options.items():
        costs = with_protocols(op, cost, cluster, size, forced=forced)
        if forced is not None and costs[0].channels:
            costs = [c for c in costs if c.protocol == forced]
        if costs:
            priced[name] = fastest(*costs)
    return _pick(op, priced, algo)


def collective_formula(op: str, size: float, cluster: Cluster, algo: str = "auto") -> Cost:
    """Return the textbook alpha-beta price of ``op`` (each link's latency a step, no protocols).

    The closed forms docs/bandwidth.md lists, one latency per message step; what quiz
    questions quote. :func:`collective` adds NCCL's protocols and latency table on top.
    """
    return _pick(op, candidates(op, size, cluster, hier=algo == NOT_NCCL), algo)


def _pick(op: str, priced: dict[str, Cost], algo: str) -> Cost:
    if algo == "auto":
        return fastest(*(c for name, c in priced.items() if name != NOT_NCCL))
    found = [c for name, c in priced.items() if name == algo or name == f"{algo}-tree"]
    if not found:
        raise ValueError(f"{algo} cannot run {op} here")
    return fastest(*found)


# NCCL's own cost model (src/graph/tuning.cc in github.com/NVIDIA/nccl, the version with NVLS
# and NVLS-tree): a base latency per algorithm and protocol, plus a latency per hop by hardware
# (NVLink, PCI, network), in microseconds; protocols LL, LL128 and Simple.
PROTOCOLS = ("LL", "LL128", "Simple")
BASE_LATENCY_US = {
    "ring": (6.6, 14.0, 8.4),
    "tree": (6.8, 14.0, 0.0),
}


class HopLatency(NamedTuple):
    """NCCL's per-hop latencies on one kind of hardware, microseconds (LL, LL128, Simple)."""

    ring: tuple[float, float, float]
    tree: tuple[float, float, float]
    nvls: float
    collnet: float


HOP_LATENCY_US = {
    "nvlink": HopLatency((0.6, 1.9, 3.4), (0.6, 1.25, 28.0), 23.0, 3.7),
    "pci": HopLatency((1.0, 2.5, 5.7), (1.0, 1.9, 28.0), 23.0, 3.7),
    "net": HopLatency((2.7, 4.0, 14.0), (5.0, 8.5, 28.0), 18.0, 31.0),
}
NVLS_TREE_NET_US = 14.0
NET_OVERHEAD_US = 1.0  # per inter-node ring step (x3 with Simple), Intel x86 hosts
# What each protocol keeps of the Simple bandwidth: LL sends 8 bytes of data with 8 of flags
# and NCCL prices ring LL at a quarter, tree LL at 1/3.8; LL128 keeps 120 of 128 bytes (0.92;
# 0.7 with one GPU a node), tree LL128 7/9 inside a node.
LL_RING, LL_TREE = 1 / 4, 1 / 3.8
LL128_RING, LL128_RING_ONE_GPU, LL128_TREE_NET, LL128_TREE_NODE = 0.92, 0.7, 120 / 128, 7 / 9


# One host thread driving several GPUs (nccl-tests -g N; one ncclGroupEnd over the N
# communicators) launches their kernels one after another: NCCL's doLaunches (src/group.cc,
# NCCL 2.30) sets each communicator's device and launches its kernel in turn, and nccl-tests
# (src/common.cu, startColl) queues every iteration without waiting, so an iteration goes no
# faster than the thread launches. Measured in nccl-tests#123 (DGX-A100, -g 2 to -g 8, ring, one
# channel): 10 us on 2 GPUs and 33.7 on 8, a straight line of (33.7 - 10) / 6 = 3.95 us for each
# further GPU where NCCL's own ring latency grows by 1.2 (two NVLink LL hops). The transport does
# not enter: 8 RTX 4090 run -g 8 at 38.83 us through host memory and 38.82 us over peer-to-peer
# after a driver that enables it (blog.chlc.cc/p/rtx4090-gpudirect-p2p-unlocked; held out).
SINGLE_THREAD_TWO_GPUS_US = 10.0
SINGLE_THREAD_PER_GPU_US = 3.95


def single_thread_floor(gpus: int) -> float:
    """Return the seconds an iteration takes at least when one host thread launches ``gpus``."""
    if gpus < 2:
        return 0.0
    return (SINGLE_THREAD_TWO_GPUS_US + SINGLE_THREAD_PER_GPU_US * (gpus - 2)) * 1e-6


def launched_by_one_thread(cost: Cost, gpus: int) -> Cost:
    """Return ``cost`` when one host thread launches the kernels of a node's ``gpus`` in turn.

    An iteration takes the longer of NCCL's own time and the thread's launches; the excess is
    latency (the bandwidth term is the GPUs' own).
    """
    floor = single_thread_floor(gpus)
    if cost.seconds >= floor:
        return cost
    return cost._replace(latency_s=floor - cost.bandwidth_s)


def _log2(n: int) -> int:
    return int(math.log2(n)) if n > 1 else 0


def with_protocols(
    op: str, cost: Cost, c: Cluster, size: float | None = None, forced: str | None = None
) -> list[Cost]:
    """Return ``cost`` (an algorithm's Simple-protocol price) under each protocol NCCL allows.

    The latency becomes NCCL's own estimate for the algorithm and protocol; the bandwidth term
    is divided by what the protocol keeps of the Simple bandwidth, by the share of its channels
    NCCL runs a buffer this size on (:func:`channels_used`) and, for the tree, by NCCL's own
    correction for mid-size buffers (:data:`TREE_CORRECTION`).
    """
    name = cost.algorithm
    if name.startswith("hier") or name in ("pairwise", "direct"):
        return [cost]
    us = 1e-6
    intra = HOP_LATENCY_US["pci" if c.intra_kind == "pci" else "nvlink"]
    net = HOP_LATENCY_US["net"]
    extra = c.net_extra_latency
    ranks, nodes, gpn = c.ranks, c.nodes, c.gpus
    if name == "nvls":
        return [cost._replace(latency_s=intra.nvls * us, channels=nvls_channels(c))]
    if name == "nvls-tree":
        latency = intra.nvls + 2 * _log2(nodes) * (NVLS_TREE_NET_US + extra / us)
        return [cost._replace(latency_s=latency * us, channels=nvls_channels(c))]
    full = full_channels(_flat_link(c).bandwidth, c.generation)
    if name == "collnet":
        latency = 2 * (gpn - 1) * intra.collnet + net.collnet + extra / us
        return [cost._replace(latency_s=latency * us, channels=full)]
    volume = bus_factor(op, ranks)
    if size is not None and size > 0 and cost.bandwidth_s > 0:
        # The channels the search finds carry the algorithm's own bus bandwidth at full size.
        full = full_channels(size * volume / cost.bandwidth_s, c.generation)
    out: list[Cost] = []
    for i, proto in enumerate(PROTOCOLS):
        if proto == "LL128" and not c.ll128 and forced != "LL128":
            continue
        if name == "tree":
            latency = BASE_LATENCY_US["tree"][i] + 2 * (
                (gpn - 1) * intra.tree[i] + _log2(nodes) * (net.tree[i] + extra / us)
            )
            keep = {"LL": LL_TREE, "LL128": LL128_TREE_NET if nodes > 1 else LL128_TREE_NODE}
            share = keep.get(proto, 1.0) * TREE_EFFICIENCY
            if size is not None:
                share *= tree_correction(size, i)
        else:
            if op == "allreduce":
                steps, inter = 2 * (ranks - 1), (2 * nodes if nodes > 1 else 0)
            elif op == "broadcast":
                # A chain from the root: ranks - 1 hops, nodes - 1 of them between nodes.
                steps, inter = ranks - 1, nodes - 1
            else:
                steps, inter = ranks - 1, nodes - 1
            hop = intra.ring[i] if nodes == 1 else net.ring[i]
            inner = intra.ring[i]
            if nodes > 1:
                inner = max(inner, NET_OVERHEAD_US * (3 if proto == "Simple" else 1))
            between = hop + extra / us * (2 if proto == "Simple" else 1)
            latency = BASE_LATENCY_US["ring"][i] + (steps - inter) * inner + inter * between
            if (
                proto == "Simple"
                and op == "allreduce"
                and nodes > 1
                and size is not None
                and size / (full * ranks) >= RING_PLATEAU_BYTES
            ):
                latency *= RING_PLATEAU[0] if c.generation < AMPERE else RING_PLATEAU[1]
            ll128 = LL128_RING_ONE_GPU if gpn < 2 and nodes > 1 else LL128_RING
            keep = {"LL": LL_RING, "LL128": ll128}
            share = keep.get(proto, 1.0)
        seconds = cost.bandwidth_s / share
        used = full
        if size is not None:
            ring = name == "ring"
            used = channels_used(size, full, proto, ranks, ring=ring)
            # Each channel carries at most NCCL's per-channel rate: fewer channels, less busbw.
            # Priced at the fractional count (NCCL drops whole channels), so that a larger
            # buffer is never faster; that floor is then one channel's share of the buffer.
            fraction = min(float(full), max(1.0, size / _channel_bytes(proto, ranks, ring=ring)))
            seconds = max(seconds, channel_seconds(size * volume, fraction, c.generation))
        out.append(Cost(latency * us, seconds, name, proto, used))
    return out


# NCCL's channels (src/enqueue.cc, the end of topoGetAlgoInfo): a collective runs on as many
# channels as the topology search found, but a ring or tree buffer smaller than
# channels x threads x a per-thread threshold drops channels until it is not; each channel left
# out takes its share of the bandwidth with it. Threads per channel (src/include/device.h:
# NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640, NCCL_SIMPLE_MAX_NTHREADS 512) and bytes
# a thread (src/include/comm.h: NCCL_LL_THREAD_THRESHOLD 8, NCCL_LL128_THREAD_THRESHOLD 8,
# NCCL_SIMPLE_THREAD_THRESHOLD 64; the ring's LL threshold x the ranks, src/graph/tuning.cc).
NTHREADS = {"LL": 512, "LL128": 640, "Simple": 512}
THREAD_THRESHOLD = {"LL": 8, "LL128": 8, "Simple": 64}
# How many channels the search finds is not a constant; it is taken here as the link's rate over
# NCCL's per-channel LL128 ceiling for the generation (perChMaxRingLL128Bws in
# src/graph/tuning.cc: Volta 20, Ampere 20, Hopper 36.7, Blackwell 40 GB/s), at least 2 and at
# most MAXCHANNELS / 2 = 32 (src/include/device.h: MAXCHANNELS 64; half are kept for p2p).
PER_CHANNEL_GBPS = (20.0, 20.0, 36.7, 40.0)
MIN_CHANNELS, MAX_CHANNELS = 2, 32
# NVLS runs a fixed number of channels whatever the size (src/transport/nvls.cc:
# NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL 24 in one NVLink domain,
# NVLS_NCHANNELS_SM100 32 across nodes).
NVLS_CHANNELS_HOPPER, NVLS_CHANNELS_BLACKWELL, NVLS_CHANNELS_BLACKWELL_NODES = 16, 24, 32
# The tree keeps 0.92 of its bandwidth for an all-reduce (src/graph/tuning.cc: "busBw * .92"),
# and NCCL corrects it again by size, powers of two from 64 B (treeCorrectionFactor in
# src/graph/tuning.cc, "Trees are not perfectly sticking to the model for medium sizes"),
# rows LL, LL128, Simple; 1 beyond the table.
TREE_EFFICIENCY = 0.92
TREE_CORRECTION = (
    (
        1.0,
        1.0,
        1.0,
        1.0,
        0.9,
        0.8,
        0.7,
        0.7,
        0.7,
        0.7,
        0.6,
        0.5,
        0.4,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        1.0,
        1.0,
        1.0,
    ),
    (
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        0.9,
        0.8,
        0.8,
        0.8,
        0.7,
        0.6,
        0.6,
        0.6,
        0.6,
        0.6,
        0.6,
        0.8,
        0.9,
        0.9,
        0.9,
        0.9,
        1.0,
        1.0,
    ),
    (
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.8,
        0.7,
        0.6,
        0.6,
        0.5,
        0.5,
        0.5,
        0.5,
        0.6,
        0.7,
        0.8,
        0.7,
        0.7,
        0.8,
        0.9,
        0.9,
    ),
)
# The ring's "plateau effect" (ncclTopoGetAlgoTime in src/graph/tuning.cc): a multi-node Simple
# all-reduce of at least 64 bytes a channel and a rank pays its latency x 1.9 before Ampere,
# x 1.4 from Ampere on.
RING_PLATEAU_BYTES = 64
RING_PLATEAU = (1.9, 1.4)


def full_channels(bandwidth: float, generation: int = HOPPER) -> int:
    """Return the channels NCCL's search would find for a link of ``bandwidth`` bytes/s."""
    wanted = math.ceil(bandwidth / 1e9 / PER_CHANNEL_GBPS[generation] - 1e-9)
    return max(MIN_CHANNELS, min(MAX_CHANNELS, wanted))


def _channel_bytes(protocol: str, ranks: int, *, ring: bool) -> int:
    per = NTHREADS[protocol] * THREAD_THRESHOLD[protocol]
    return per * ranks if ring and protocol == "LL" else per


def channels_used(size: float, full: int, protocol: str, ranks: int, *, ring: bool) -> int:
    """Return the channels NCCL runs a ``size``-byte ring or tree on (of ``full``)."""
    return max(1, min(full, int(size // _channel_bytes(protocol, ranks, ring=ring))))


def channel_seconds(bus_bytes: float, used: float, generation: int = HOPPER) -> float:
    """Return the least time ``used`` channels take to carry ``bus_bytes`` (size x bus factor).

    NCCL's tuner prices a collective's bus bandwidth as channels x a per-channel bandwidth
    (src/graph/tuning.cc, ``busBw = nChannels * bw``); a channel is capped at the generation's
    per-channel ceiling.
    """
    return bus_bytes / (used * PER_CHANNEL_GBPS[generation] * 1e9)


def nvls_channels(c: Cluster) -> int:
    """Return NCCL's NVLS channel count for the cluster's generation and node count."""
    if c.generation >= BLACKWELL:
        return NVLS_CHANNELS_BLACKWELL_NODES if c.nodes > 1 else NVLS_CHANNELS_BLACKWELL
    return NVLS_CHANNELS_HOPPER


def tree_correction(size: float, protocol: int) -> float:
    """Return NCCL's tree bandwidth correction for a ``size``-byte all-reduce.

    NCCL applies the table's value for the power of two at or below the size; read here on a
    log scale between the table's points (exact at each power of two), so that a larger buffer
    is never priced faster than a smaller one.
    """
    row = (*TREE_CORRECTION[protocol], 1.0)
    position = math.log2(size / 64) if size > 64 else 0.0
    index = int(position)
    if index >= len(row) - 1:
        return 1.0
    low, high = row[index], row[index + 1]
    return low + (high - low) * (position - index)


def candidates(op: str, size: float, cluster: Cluster, *, hier: bool = True) -> dict[str, Cost]:
    """Return every algorithm that can run ``op`` on ``cluster``, by name, with its cost.

    ``hier=False`` leaves out the hierarchical variant, which NCCL never picks.
    """
    if op == "allreduce":
        return _allreduce(size, cluster, hier)
    if op in ("allgather", "reducescatter"):
        return _gather(size, cluster, hier)
    if op == "broadcast":
        return {"ring": _broadcast(size, cluster)}
    if op == "alltoall":
        return {"pairwise": _alltoall(size, cluster)}
    raise ValueError(f"not a collective: {op}")


def _flat_link(cluster: Cluster) -> Link:
    """Return the link a flat ring through every GPU moves at: the slower of NVLink and NIC."""
    net, intra = cluster.net, cluster.intra
    if net is None:
        if intra is None:
            raise ValueError("a cluster needs a network or a link inside the node")
        return intra
    if intra is None or cluster.gpus == 1:
        return net
    # A ring through every GPU crosses NVLink hops and NIC hops; it moves at the pace of the
    # slower of the two, and each step waits for the slower latency.
    return Link(min(intra.bandwidth, net.bandwidth), max(intra.latency, net.latency))


def _allreduce(size: float, c: Cluster, hier: bool) -> dict[str, Cost]:
    ranks = c.ranks
    found = {"ring": ring_allreduce(size, ranks, _flat_link(c))}
    net, intra = c.net, c.intra
    if net is None:
        if c.nvls is not None and c.gpus > 1:
            found["nvls"] = nvls_allreduce(size, c.nvls, c.gpus, c.intra)
        return found
    if intra is None or c.gpus == 1:
        found["tree"] = tree_allreduce(size, c.nodes, net)
        if c.sharp:
            # In-network reduction: each node sends S up once and reads the result once.
            found["collnet"] = Cost(4 * net.latency, size / net.bandwidth, "collnet")
        return found
    k = tree_factor(c.nodes)
    depth = int(math.log2(c.nodes))
    inter = k * size / net.bandwidth
    # NCCL's tree: a chain through the node's GPUs (each sends S down the chain to reduce and
    # S back up to broadcast, pipelined), and the double binary tree between nodes.
    chain_s = 2 * size / intra.bandwidth
    tree_latency = 2 * ((c.gpus - 1) * intra.latency + depth * net.latency)
    found["tree"] = Cost(tree_latency, max(chain_s, inter), "tree")
    if c.nvls is not None:
        # NVLS-tree: the switch reduces inside the node, the tree runs between nodes.
        latency = 2 * (c.nvls.latency + depth * net.latency)
        inside = nvls_allreduce(size, c.nvls, c.gpus, c.intra).bandwidth_s
        found["nvls-tree"] = Cost(latency, max(inside, inter), "nvls-tree")
    if c.sharp:
        inside = (
            nvls_allreduce(size, c.nvls, c.gpus, c.intra).bandwidth_s
            if c.nvls is not None
            else 2 * (c.gpus - 1) / c.gpus * size / intra.bandwidth
        )
        latency = 2 * ((c.gpus - 1) * intra.latency + 2 * net.latency)
        found["collnet"] = Cost(latency, max(inside, size / net.bandwidth), "collnet")
    if hier:
        found["hier"] = _hierarchical_allreduce(size, c, net, intra)
    return found


def _hierarchical_allreduce(size: float, c: Cluster, net: Link, intra: Link) -> Cost:
    # Reduce-scatter inside the node, all-reduce each GPU's shard between the nodes over its
    # share of the NICs, all-gather inside the node. Not an NCCL algorithm.
    per_gpu_net = Link(net.bandwidth / c.gpus, net.latency)
    shard = size / c.gpus
    inter = fastest(
        ring_allreduce(shard, c.nodes, per_gpu_net), tree_allreduce(shard, c.nodes, per_gpu_net)
    )
    local = ring_allgather(size, c.gpus, intra)
    return chain(f"hier+{inter.algorithm}", local, inter, local)


def _gather(size: float, c: Cluster, hier: bool) -> dict[str, Cost]:
    found = {"ring": ring_allgather(size, c.ranks, _flat_link(c))}
    if hier and c.net is not None and c.intra is not None and c.gpus > 1:
        per_gpu_net = Link(c.net.bandwidth / c.gpus, c.net.latency)
        found["hier"] = chain(
            "hier+ring",
            ring_allgather(size / c.gpus, c.nodes, per_gpu_net),
            ring_allgather(size, c.gpus, c.intra),
        )
    return found


def _broadcast(size: float, c: Cluster) -> Cost:
    net, intra = c.net, c.intra
    if net is None or intra is None or c.gpus == 1:
        return pipelined_broadcast(size, c.ranks, _flat_link(c))
    # One chain through every GPU: each hop adds its own latency once to fill the pipe.
    latency = (c.nodes - 1) * net.latency + c.nodes * (c.gpus - 1) * intra.latency
    return Cost(latency, size / _flat_link(c).bandwidth, "ring")


def _alltoall(size: float, c: Cluster) -> Cost:
    net, intra = c.net, c.intra
    if net is None or intra is None or c.gpus == 1:
        return pairwise_alltoall(size, c.ranks, _flat_link(c))
    ranks, gpus = c.ranks, c.gpus
    # Each GPU sends S/p to every other GPU at once: the NVLink share and the NIC share run
    # in parallel on different wires, so the slower of the two sets the pace.
    latency = (ranks - gpus) * net.latency + (gpus - 1) * intra.latency
    inside = (gpus - 1) / ranks * size / intra.bandwidth
    across = gpus * (ranks - gpus) / ranks * size / net.bandwidth
    return Cost(latency, max(inside, across), "pairwise")


def bus_factor(op: str, ranks: int) -> float:
    """Return nccl-tests' busbw / algbw ratio for ``op`` on ``ranks`` ranks (PERFORMANCE.md)."""
    if ranks < 2 or op in ("transfer", "broadcast"):
        return 1.0
    if op == "allreduce":
        return 2 * (ranks - 1) / ranks
    return (ranks - 1) / ranks
