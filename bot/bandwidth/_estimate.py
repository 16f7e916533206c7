"""Run a request against the catalogue: one timed result per interconnect, fastest first."""

from __future__ import annotations

from dataclasses import dataclass

from bot.bandwidth._catalogue import QUIZ_CHOICES, Catalogue, Interconnect
from bot.bandwidth._models import Cluster, Cost, Link, collective, transfer
from bot.bandwidth._request import BandwidthRequest
from bot.bandwidth._sizes import describe_bytes


@dataclass(frozen=True, slots=True)
class Result:
    """The estimate for one interconnect."""

    key: str
    name: str
    family: str
    purpose: str
    rdma: bool
    seconds: float
    latency_s: float
    bandwidth_s: float
    effective_gbps: float  # bytes moved / seconds, in GB/s (10^9 bytes)
    algorithm: str
    slowdown: float  # seconds / the fastest result's seconds
    quiz_choice: bool
    comm_ratio: float | None = None  # communication / compute, with step=
    efficiency: float | None = None  # step / (step + seconds), with step=


@dataclass(frozen=True, slots=True)
class Estimate:
    """Every interconnect's result for one request, fastest first, and what was assumed."""

    request: BandwidthRequest
    results: tuple[Result, ...]
    assumptions: str
    intra: Interconnect | None = None

    @property
    def fastest(self) -> Result:
        """Return the quickest result."""
        return self.results[0]


def estimate(request: BandwidthRequest, catalogue: Catalogue) -> Estimate:
    """Return the time ``request`` takes over each compared interconnect, fastest first."""
    keys = request.over or catalogue.default_comparison
    if "all" in keys:
        keys = catalogue.keys()
    links = [catalogue.get(key) for key in keys]
    collective_op = request.op != "transfer"
    intra = catalogue.get(request.intra) if collective_op and request.gpus > 1 else None
    costs = [(ic, _cost(request, ic, intra)) for ic in links]
    costs.sort(key=lambda pair: (pair[1].seconds, pair[0].key))
    best = costs[0][1].seconds
    results = tuple(_result(request, ic, cost, best) for ic, cost in costs)
    shared = any(ic.shared_medium for ic in links)
    return Estimate(request, results, assumptions(request, intra, shared=shared), intra)


def nics_per_node(request: BandwidthRequest) -> int:
    """Return the NICs a node uses: nics=, else one per GPU (one link for a transfer)."""
    if request.nics is not None:
        return request.nics
    return 1 if request.op == "transfer" else request.gpus


def node_link(request: BandwidthRequest, ic: Interconnect) -> Link:
    """Return the link between nodes as the formulas see it, for interconnect ``ic``."""
    one = ic.payload_bytes_per_s
    if ic.shared_medium:
        # One radio channel for everyone: every frame crosses the air twice (client to access
        # point to client) and every node that sends at once takes its turn on the channel.
        senders = 1 if request.op == "transfer" else request.nodes
        return Link(one / (2 * senders), ic.latency_s)
    return Link(one * nics_per_node(request), ic.latency_s)


def _cost(request: BandwidthRequest, ic: Interconnect, intra: Interconnect | None) -> Cost:
    net = node_link(request, ic)
    if request.op == "transfer":
        return transfer(request.bytes, net)
    inside = None if intra is None else Link(intra.payload_bytes_per_s, intra.latency_s)
    cluster = Cluster(request.nodes, request.gpus, net, inside)
    return collective(request.op, request.bytes, cluster)


def _result(request: BandwidthRequest, ic: Interconnect, cost: Cost, best: float) -> Result:
    seconds = cost.seconds
    step = request.step
    return Result(
        key=ic.key,
        name=ic.name,
        family=ic.family,
        purpose=ic.purpose,
        rdma=ic.rdma,
        seconds=seconds,
        latency_s=cost.latency_s,
        bandwidth_s=cost.bandwidth_s,
        effective_gbps=request.bytes / seconds / 1e9,
        algorithm=cost.algorithm,
        slowdown=seconds / best,
        quiz_choice=ic.key in QUIZ_CHOICES,
        comm_ratio=None if step is None else seconds / step,
        efficiency=None if step is None else step / (step + seconds),
    )


def assumptions(
    request: BandwidthRequest, intra: Interconnect | None, *, shared: bool = False
) -> str:
    """Return the one line that states what the estimate assumes."""
    size = describe_bytes(request.bytes)
    parts: list[str] = []
    if request.op == "transfer":
        nics = nics_per_node(request)
        links = "one link" if nics == 1 else f"{nics} links striped"
        parts.append(f"{size} sent point to point over {links}; time = latency + size/(rate x eff)")
    else:
        where = f"{request.nodes} nodes x {request.gpus} GPU{'s' if request.gpus > 1 else ''}"
        parts.append(f"{request.op} of {size} across {where} ({request.ranks} ranks)")
        if intra is not None:
            parts.append(
                f"{intra.key} inside each node, {nics_per_node(request)} NICs per node; fastest"
                " of flat ring, tree and hierarchical per interconnect"
            )
        elif request.op == "allreduce":
            parts.append("faster of ring and tree per interconnect")
    parts.append("payload = line rate x protocol efficiency, latency per message step")
    parts.append("full-bisection fabric, no congestion, no retransmits")
    if shared:
        parts.append("Wi-Fi nodes share one channel through an access point")
    if request.step is not None:
        parts.append(
            f"step {request.step:g} s of compute, efficiency = step/(step+comm), no overlap"
        )
    parts.append("GB = 10^9 bytes")
    return "Assumes: " + "; ".join(parts) + "."
