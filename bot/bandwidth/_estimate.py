"""Run a request against the catalogue: one timed result per interconnect, fastest first."""

from __future__ import annotations

from dataclasses import dataclass

from bot.bandwidth import _words as say
from bot.bandwidth._catalogue import MAX_NICS_PER_NODE, QUIZ_CHOICES, Catalogue, Interconnect
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._format import sig3
from bot.bandwidth._models import (
    NOT_NCCL,
    Cluster,
    Cost,
    Link,
    bus_factor,
    collective,
    generation,
    launched_by_one_thread,
    single_thread_floor,
    transfer,
)
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
    effective_gbps: float  # bytes moved / seconds, in GB/s (10^9 bytes): nccl-tests' algbw
    algorithm: str
    slowdown: float  # seconds / the fastest result's seconds
    quiz_choice: bool
    comm_ratio: float | None = None  # communication / compute, with step=
    efficiency: float | None = None  # step / (step + seconds), with step=
    busbw_gbps: float = 0.0  # algbw x nccl-tests' bus factor for the op and the ranks
    transport: str = ""
    nccl_algorithm: str = ""  # what NCCL itself would run (differs only with algo=)
    protocol: str = ""  # NCCL's protocol for a collective: LL, LL128 or Simple
    channels: int = 0  # the channels NCCL runs the collective on at this size (0: not NCCL)

    @property
    def algbw_gbps(self) -> float:
        """Return nccl-tests' algorithm bandwidth: bytes / time, in GB/s."""
        return self.effective_gbps


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
    inside_box = request.op != "transfer" and request.nodes == 1
    keys = request.over or ((request.intra,) if inside_box else catalogue.default_comparison)
    if "all" in keys:
        keys = catalogue.keys()
        if inside_box:
            keys = tuple(k for k in keys if catalogue.get(k).intra_node)
        elif request.op != "transfer":
            keys = tuple(k for k in keys if not catalogue.get(k).intra_node)
    links = [catalogue.get(key) for key in keys]
    check_hardware(request, links, catalogue)
    if inside_box:
        _check_inside_box(request, links)
    collective_op = request.op != "transfer"
    intra = None
    if collective_op and request.gpus > 1 and not inside_box:
        intra = catalogue.get(request.intra)
    if request.algo == "nvls":
        _check_nvls(request, links if inside_box else [intra] if intra else [])
    costs = [(ic, *_costs(request, ic, intra)) for ic in links]
    costs.sort(key=lambda item: (item[1].seconds, item[0].key))
    best = costs[0][1].seconds
    results = tuple(_result(request, ic, cost, pick, best) for ic, cost, pick in costs)
    shared = any(ic.shared_medium for ic in links)
    text = assumptions(request, intra, shared=shared, results=results, links=links)
    return Estimate(request, results, text, intra)


def check_hardware(
    request: BandwidthRequest, links: list[Interconnect], catalogue: Catalogue
) -> None:
    """Refuse, with the reason, hardware that cannot exist."""
    if request.nics is not None and request.nics > MAX_NICS_PER_NODE:
        raise BandwidthError(
            say.NICS_OVER_MAX_NODE.format(nics=request.nics, most=MAX_NICS_PER_NODE)
        )
    if request.op == "transfer":
        return
    intra = catalogue.get(request.intra)
    if not intra.intra_node:
        raise BandwidthError(say.INTRA_IS_A_NETWORK.format(key=intra.key))
    if request.nodes > 1:
        between = [ic.key for ic in links if ic.intra_node]
        if between:
            raise BandwidthError(say.OVER_INSIDE_DOMAIN.format(keys=", ".join(between)))
    domains = links if request.nodes == 1 else [intra]
    for ic in domains:
        if ic.max_gpus is not None and request.gpus > ic.max_gpus:
            source = ic.source("domain") or say.DOMAIN_SOURCE
            raise BandwidthError(
                say.GPUS_OVER_DOMAIN.format(
                    gpus=request.gpus, name=ic.name, most=ic.max_gpus, source=source
                )
            )


def _check_inside_box(request: BandwidthRequest, links: list[Interconnect]) -> None:
    networks = [ic.key for ic in links if not ic.intra_node]
    if networks:
        raise BandwidthError(say.NETWORK_INSIDE_BOX.format(keys=", ".join(networks)))


def _check_nvls(request: BandwidthRequest, links: list[Interconnect]) -> None:
    missing = [ic.key for ic in links if ic.nvls_efficiency is None]
    if missing or not links:
        where = ", ".join(missing) or request.intra
        raise BandwidthError(say.NVLS_NEEDS_SWITCH.format(where=where))


def nics_per_node(request: BandwidthRequest, ic: Interconnect | None = None) -> int:
    """Return the NICs a node uses: nics=, else the entry's default_nics, else one per GPU.

    A transfer uses one link unless nics= says more.
    """
    if request.nics is not None:
        return request.nics
    if request.op == "transfer":
        return 1
    if ic is not None and ic.default_nics is not None:
        return ic.default_nics
    return request.gpus


def node_link(request: BandwidthRequest, ic: Interconnect) -> Link:
    """Return the link between nodes as the formulas see it, for interconnect ``ic``.

    A transfer moves at the link's payload rate; a collective at what NCCL sustains on the
    link's transport (its collective efficiency), over all the node's NICs.
    """
    one = ic.payload_bytes_per_s if request.op == "transfer" else ic.collective_bytes_per_s
    if ic.shared_medium:
        # One radio channel for everyone: every frame crosses the air twice (client to access
        # point to client) and every node that sends at once takes its turn on the channel.
        senders = 1 if request.op == "transfer" else request.nodes
        return Link(one / (2 * senders), ic.latency_s)
    rate = one * nics_per_node(request, ic)
    if request.op != "transfer":
        # A GPU reaches its NICs over its own PCIe link: more NICs than that carries add nothing.
        rate = min(rate, request.gpus * host_link_bytes_per_s(request.intra))
    return Link(rate, ic.latency_s)


# The PCIe generation of the GPUs each NVLink generation joins (x16 links): A100 PCIe 4.0, H100
# and H200 PCIe 5.0, B200 PCIe 5.0 (NVIDIA A100, H100 and DGX B200 datasheets).
HOST_LINK = {"nvlink3": "pcie4", "nvlink4": "pcie5", "nvlink5": "pcie5"}
_PCIE_GBPS = {"pcie3": 126.0, "pcie4": 252.0, "pcie5": 504.0, "pcie6": 1008.0}
PCIE_COLLECTIVE_EFFICIENCY = 0.80  # the catalogue's PCIe efficiency (measured copies)


def host_link_bytes_per_s(intra: str) -> float:
    """Return what one GPU moves to or from its NICs over PCIe, in bytes per second."""
    gbps = _PCIE_GBPS.get(HOST_LINK.get(intra, intra), _PCIE_GBPS["pcie5"])
    return gbps * 1e9 / 8 * PCIE_COLLECTIVE_EFFICIENCY


def gpu_link(ic: Interconnect) -> Link:
    """Return a GPU-to-GPU link inside a box as the collective formulas see it."""
    return Link(ic.collective_bytes_per_s, ic.latency_s)


def nvls_link(ic: Interconnect) -> Link | None:
    """Return the per-GPU NVLS rate of an NVSwitch link; None when the switch cannot reduce."""
    rate = ic.nvls_bytes_per_s
    return None if rate is None else Link(rate, ic.latency_s)


IB_LATENCY_S = 0.7e-6  # the InfiniBand hop NCCL's latency table was measured on


def hardware_kinds(
    intra: Interconnect | None, net: Interconnect | None, gpu_link_key: str | None = None
) -> dict[str, str | float | bool | int]:
    """Return the Cluster fields that pick NCCL's latency rows, protocols and constants.

    ``gpu_link_key`` names the link inside the node when ``intra`` is None (one GPU a node),
    for the GPU generation NCCL's per-generation constants follow.
    """
    pci = intra is not None and intra.transport != "nvlink"
    extra = 0.0 if net is None else max(0.0, net.latency_s - IB_LATENCY_S)
    ll128 = not pci and (net is None or net.transport == "rdma")
    key = intra.key if intra is not None else gpu_link_key or ""
    return {
        "intra_kind": "pci" if pci else "nvlink",
        "net_extra_latency": extra,
        "ll128": ll128,
        "generation": generation(key),
    }


def _costs(
    request: BandwidthRequest, ic: Interconnect, intra: Interconnect | None
) -> tuple[Cost, str]:
    """Return the priced cost and the algorithm NCCL itself would run."""
    if request.op == "transfer":
        cost = transfer(request.bytes, node_link(request, ic))
        return cost, cost.algorithm
    if request.nodes == 1:
        kinds = hardware_kinds(ic, None)
        cluster = Cluster(1, request.gpus, None, gpu_link(ic), nvls_link(ic), **kinds)  # type: ignore[arg-type]
    else:
        inside = None if intra is None else gpu_link(intra)
        nvls = None if intra is None else nvls_link(intra)
        sharp = request.sharp and ic.sharp
        kinds = hardware_kinds(intra, ic, request.intra)
        cluster = Cluster(
            request.nodes,
            request.gpus,
            node_link(request, ic),
            inside,
            nvls,
            sharp,
            **kinds,  # type: ignore[arg-type]
        )
    proto = request.proto
    pick = collective(request.op, request.bytes, cluster, proto=proto)
    algo = request.algo
    cost = pick
    if algo != "auto" and not (algo == "collnet" and not cluster.sharp):
        cost = collective(request.op, request.bytes, cluster, algo, proto)
    if request.launch == "single":
        cost = launched_by_one_thread(cost, request.gpus)
    return cost, pick.algorithm


def _result(
    request: BandwidthRequest, ic: Interconnect, cost: Cost, pick: str, best: float
) -> Result:
    seconds = cost.seconds
    step = request.step
    algbw = request.bytes / seconds / 1e9
    ranks = request.ranks if request.op != "transfer" else 2
    return Result(
        key=ic.key,
        name=ic.name,
        family=ic.family,
        purpose=ic.purpose,
        rdma=ic.rdma,
        seconds=seconds,
        latency_s=cost.latency_s,
        bandwidth_s=cost.bandwidth_s,
        effective_gbps=algbw,
        algorithm=cost.algorithm,
        slowdown=seconds / best,
        quiz_choice=ic.key in QUIZ_CHOICES,
        comm_ratio=None if step is None else seconds / step,
        efficiency=None if step is None else step / (step + seconds),
        busbw_gbps=algbw * bus_factor(request.op, ranks),
        transport=ic.transport,
        nccl_algorithm=pick,
        protocol="" if request.op == "transfer" or cost.algorithm == "pairwise" else cost.protocol,
        channels=cost.channels,
    )


def assumptions(
    request: BandwidthRequest,
    intra: Interconnect | None,
    *,
    shared: bool = False,
    results: tuple[Result, ...] = (),
    links: list[Interconnect] | None = None,
) -> str:
    """Return the one line that states what the estimate assumes."""
    size = describe_bytes(request.bytes)
    parts: list[str] = []
    if request.op == "transfer":
        nics = nics_per_node(request)
        over = "one link" if nics == 1 else f"{nics} links striped"
        parts.append(f"{size} sent point to point over {over}; time = latency + size/(rate x eff)")
    else:
        parts.append(_topology(request, size, intra))
        if request.nics is None and request.nodes > 1:
            for ic in links or []:
                if ic.default_nics is not None:
                    where = ic.source("nics") or "catalogue"
                    parts.append(f"{ic.key}: {ic.default_nics} NICs a node ({where})")
        parts.append(_algorithms(request, results))
        if request.nodes > 1:
            parts.append(
                "NICs sustain rate x collective efficiency of their transport (RDMA about 0.96,"
                " NCCL's TCP sockets 0.44-0.88)"
            )
    if request.op in ("transfer", "alltoall"):
        parts.append("latency per message step; full-bisection fabric, no congestion")
    else:
        parts.append(
            "latency from NCCL's own tuning model for the algorithm and protocol (LL, LL128,"
            " Simple: the fastest); GPUs reach their NICs over PCIe; full-bisection fabric, no"
            " congestion"
        )
    if request.launch == "single" and request.op != "transfer":
        parts.append(
            f"one host thread launches the {request.gpus} GPUs of a node in turn (nccl-tests -g):"
            f" an iteration takes at least {sig3(single_thread_floor(request.gpus) * 1e6)} µs"
        )
    if shared:
        parts.append("Wi-Fi nodes share one channel through an access point")
    if request.step is not None:
        parts.append(
            f"step {request.step:g} s of compute, efficiency = step/(step+comm), no overlap"
        )
    parts.append("GB = 10^9 bytes")
    return "Assumes: " + "; ".join(parts) + "."


def _topology(request: BandwidthRequest, size: str, intra: Interconnect | None) -> str:
    if request.nodes == 1:
        return f"{request.op} of {size} across the {request.gpus} GPUs of one box over each link"
    where = f"{request.nodes} nodes x {request.gpus} GPU{'s' if request.gpus > 1 else ''}"
    text = f"{request.op} of {size} across {where} ({request.ranks} ranks)"
    if intra is not None:
        nics = nics_per_node(request)
        text += f", {intra.key} inside each node, {nics} NIC{'s' if nics > 1 else ''} per node"
    return text


def _algorithms(request: BandwidthRequest, results: tuple[Result, ...]) -> str:
    if request.op != "allreduce" and request.algo in ("auto", "ring"):
        return "NCCL's ring" if request.op != "alltoall" else "pairwise exchange"
    if request.algo == "auto":
        text = "NCCL's pick of ring, tree"
        if request.nodes == 1 or request.gpus > 1:
            text += ", NVLS on NVSwitch boxes"
        if request.sharp:
            text += ", CollNet where the switches reduce (SHARP)"
        elif request.nodes > 1:
            text += " (no SHARP unless asked)"
        return text
    picks = sorted({r.nccl_algorithm for r in results if r.nccl_algorithm != r.algorithm})
    label = "hierarchical, which NCCL does not run" if request.algo == NOT_NCCL else request.algo
    text = f"algo={request.algo} forced ({label})"
    if picks:
        text += f"; NCCL itself would pick {' or '.join(picks)}"
    return text
