"""Cost models: the alpha-beta formulas for a transfer and for each collective.

Every formula is ``latency term + bandwidth term``: ``alpha`` is the one-way latency of a
message step and ``B`` the payload bandwidth in bytes per second. ``S`` is the buffer size in
bytes (the whole buffer: for all-gather the gathered output, for reduce-scatter the input).
docs/bandwidth.md lists the same formulas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple


class Link(NamedTuple):
    """A link as the formulas see it: payload bytes per second and seconds of latency."""

    bandwidth: float
    latency: float


class Cost(NamedTuple):
    """The time an operation takes, split into its latency and bandwidth terms."""

    latency_s: float
    bandwidth_s: float
    algorithm: str

    @property
    def seconds(self) -> float:
        """Return the whole time: latency term plus bandwidth term."""
        return self.latency_s + self.bandwidth_s


@dataclass(frozen=True, slots=True)
class Cluster:
    """Where a collective runs: nodes of GPUs, a network between nodes, a link inside them.

    ``net`` carries a whole node's bandwidth to the network (all its NICs together) and the
    network's latency; ``intra`` is the GPU-to-GPU link inside a node (None with one GPU).
    """

    nodes: int
    gpus: int
    net: Link
    intra: Link | None = None

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


def tree_allreduce(size: float, ranks: int, link: Link) -> Cost:
    """Return the double-binary-tree all-reduce time: 2·floor(log2 p)·alpha + 2·S/B.

    Every rank sends at most the whole buffer up the trees and the whole buffer down them,
    which is also how NCCL's tuning model prices its tree algorithm.
    """
    depth = int(math.log2(ranks)) if ranks > 1 else 0
    return Cost(2 * depth * link.latency, 2 * size / link.bandwidth, "tree")


def ring_allgather(size: float, ranks: int, link: Link) -> Cost:
    """Return the ring all-gather (or reduce-scatter) time: (p-1)·alpha + (p-1)/p · S/B."""
    steps = ranks - 1
    return Cost(steps * link.latency, steps / ranks * size / link.bandwidth, "ring")


def pipelined_broadcast(size: float, ranks: int, link: Link) -> Cost:
    """Return the pipelined (chunked chain) broadcast time: (p-1)·alpha + S/B."""
    return Cost((ranks - 1) * link.latency, size / link.bandwidth, "pipeline")


def pairwise_alltoall(size: float, ranks: int, link: Link) -> Cost:
    """Return the all-to-all time (S/p to every other rank): (p-1)·alpha + (p-1)/p · S/B."""
    steps = ranks - 1
    return Cost(steps * link.latency, steps / ranks * size / link.bandwidth, "pairwise")


def fastest(*costs: Cost) -> Cost:
    """Return the quickest of ``costs`` (the first one on a tie)."""
    return min(costs, key=lambda c: c.seconds)


def chain(algorithm: str, *stages: Cost) -> Cost:
    """Return stages run one after another as a single cost named ``algorithm``."""
    return Cost(sum(s.latency_s for s in stages), sum(s.bandwidth_s for s in stages), algorithm)


def collective(op: str, size: float, cluster: Cluster) -> Cost:
    """Return the fastest modelled way to run collective ``op`` on ``size`` bytes."""
    if cluster.intra is None or cluster.gpus == 1:
        return _flat(op, size, cluster.nodes, cluster.net)
    return _hierarchical(op, size, cluster, cluster.intra)


def _flat(op: str, size: float, ranks: int, link: Link) -> Cost:
    if op == "allreduce":
        return fastest(ring_allreduce(size, ranks, link), tree_allreduce(size, ranks, link))
    if op in ("allgather", "reducescatter"):
        return ring_allgather(size, ranks, link)
    if op == "broadcast":
        return pipelined_broadcast(size, ranks, link)
    if op == "alltoall":
        return pairwise_alltoall(size, ranks, link)
    raise ValueError(f"not a collective: {op}")


def _hierarchical(op: str, size: float, c: Cluster, intra: Link) -> Cost:
    nodes, gpus, net = c.nodes, c.gpus, c.net
    ranks = c.ranks
    # A flat ring or chain through every GPU crosses NVLink hops and NIC hops; it moves at the
    # pace of the slower of the two, and each step waits for the slower latency.
    slow = Link(min(intra.bandwidth, net.bandwidth), max(intra.latency, net.latency))
    # Inside the hierarchy each GPU drives its own share of the node's NICs.
    per_gpu_net = Link(net.bandwidth / gpus, net.latency)
    shard = size / gpus
    if op == "allreduce":
        flat_ring = ring_allreduce(size, ranks, slow)
        # NCCL's tree: a chain inside each node, a double binary tree between nodes.
        tree_latency = 2 * ((gpus - 1) * intra.latency + int(math.log2(nodes)) * net.latency)
        tree = Cost(tree_latency, 2 * size / slow.bandwidth, "tree")
        inter = fastest(
            ring_allreduce(shard, nodes, per_gpu_net), tree_allreduce(shard, nodes, per_gpu_net)
        )
        local = ring_allgather(size, gpus, intra)
        hier = chain(f"hier+{inter.algorithm}", local, inter, local)
        return fastest(flat_ring, tree, hier)
    if op in ("allgather", "reducescatter"):
        flat_ring = ring_allgather(size, ranks, slow)
        hier = chain(
            "hier+ring",
            ring_allgather(shard, nodes, per_gpu_net),
            ring_allgather(size, gpus, intra),
        )
        return fastest(flat_ring, hier)
    if op == "broadcast":
        # One chain through every GPU: each hop adds its own latency once to fill the pipe.
        latency = (nodes - 1) * net.latency + nodes * (gpus - 1) * intra.latency
        return Cost(latency, size / slow.bandwidth, "pipeline")
    if op == "alltoall":
        # Each GPU sends S/p to every other GPU at once: the NVLink share and the NIC share run
        # in parallel on different wires, so the slower of the two sets the pace.
        latency = (ranks - gpus) * net.latency + (gpus - 1) * intra.latency
        inside = (gpus - 1) / ranks * size / intra.bandwidth
        across = gpus * (ranks - gpus) / ranks * size / net.bandwidth
        return Cost(latency, max(inside, across), "pairwise")
    raise ValueError(f"not a collective: {op}")
