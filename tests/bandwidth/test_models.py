"""Every formula on hand-computed cases, the choice between algorithms, and monotonicity."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bandwidth import BandwidthRequest, Catalogue, Interconnect, estimate, load_catalogue
from bot.bandwidth._estimate import nics_per_node, node_link
from bot.bandwidth._models import (
    Cluster,
    Cost,
    Link,
    bus_factor,
    candidates,
    collective,
    collective_formula,
    nvls_allreduce,
    pairwise_alltoall,
    pipelined_broadcast,
    ring_allgather,
    ring_allreduce,
    transfer,
    tree_allreduce,
)

US = 1e-6
# 1 GB/s and 1 us: numbers small enough to check by hand.
LINK = Link(bandwidth=1e9, latency=1 * US)
S = 8e9


def _same(cost: Cost, latency: float, bandwidth: float, algorithm: str) -> None:
    assert cost.latency_s == pytest.approx(latency, rel=1e-12)
    assert cost.bandwidth_s == pytest.approx(bandwidth, rel=1e-12)
    assert cost.seconds == pytest.approx(latency + bandwidth, rel=1e-12)
    assert cost.algorithm == algorithm


@pytest.mark.parametrize(
    ("cost", "latency", "bandwidth", "algorithm"),
    [
        # transfer: alpha + S/B
        (transfer(S, LINK), 1 * US, 8.0, "direct"),
        (transfer(1, LINK), 1 * US, 1e-9, "direct"),
        # ring all-reduce: 2(p-1) alpha + 2(p-1)/p S/B; p=4: 6 us + 1.5 x 8 s
        (ring_allreduce(S, 4, LINK), 6 * US, 12.0, "ring"),
        (ring_allreduce(S, 2, LINK), 2 * US, 8.0, "ring"),
        (ring_allreduce(S, 8, LINK), 14 * US, 14.0, "ring"),
        # tree all-reduce: 2 floor(log2 p) alpha + k S/B, k = 2 beyond two ranks, 1 on two
        (tree_allreduce(S, 4, LINK), 4 * US, 16.0, "tree"),
        (tree_allreduce(S, 6, LINK), 4 * US, 16.0, "tree"),
        (tree_allreduce(S, 1024, LINK), 20 * US, 16.0, "tree"),
        (tree_allreduce(S, 2, LINK), 2 * US, 8.0, "tree"),
        # NVLS: the switch reduces, each GPU moves S each way: 2 alpha + S/B
        (nvls_allreduce(S, LINK), 2 * US, 8.0, "nvls"),
        # all-gather and reduce-scatter: (p-1) alpha + (p-1)/p S/B; p=4: 3 us + 6 s
        (ring_allgather(S, 4, LINK), 3 * US, 6.0, "ring"),
        # broadcast, a pipelined chain (NCCL's ring): (p-1) alpha + S/B
        (pipelined_broadcast(S, 4, LINK), 3 * US, 8.0, "ring"),
        (pipelined_broadcast(S, 100, LINK), 99 * US, 8.0, "ring"),
        # all-to-all: (p-1) alpha + (p-1)/p S/B
        (pairwise_alltoall(S, 4, LINK), 3 * US, 6.0, "pairwise"),
    ],
)
def test_flat_formulas(cost: Cost, latency: float, bandwidth: float, algorithm: str) -> None:
    _same(cost, latency, bandwidth, algorithm)


@pytest.mark.parametrize(
    ("size", "ranks", "algorithm"),
    [
        (1e3, 8, "tree"),  # latency-bound: 6 steps beat 14
        (1e3, 64, "tree"),
        (S, 8, "ring"),  # bandwidth-bound: 1.75 S/B beats 2 S/B
        (1e3, 2, "tree"),  # two ranks: the same bytes, fewer... equal steps, first on a tie
        (S, 3, "ring"),
        (1e3, 3, "tree"),
    ],
)
def test_allreduce_picks_the_faster_of_ring_and_tree(
    size: float, ranks: int, algorithm: str
) -> None:
    cost = collective_formula("allreduce", size, Cluster(ranks, 1, LINK))
    assert cost.seconds == min(
        ring_allreduce(size, ranks, LINK).seconds, tree_allreduce(size, ranks, LINK).seconds
    )
    if ranks != 2:
        assert cost.algorithm == algorithm


# Two nodes of four GPUs: NVLink-like 100 GB/s and 2 us inside, 8 GB/s per node and 1 us outside.
INTRA = Link(100e9, 2 * US)
NET = Link(8e9, 1 * US)
NVLS = Link(60e9, 2 * US)
TWO_BY_FOUR = Cluster(nodes=2, gpus=4, net=NET, intra=INTRA)
FOUR_BY_FOUR = Cluster(nodes=4, gpus=4, net=NET, intra=INTRA)


@pytest.mark.parametrize(
    ("op", "algo", "latency", "bandwidth", "algorithm"),
    [
        # flat ring through 8 GPUs at the slower link: 14 x 2 us, 14/8 x 8e9/8e9 s
        ("allreduce", "ring", 28 * US, 1.75, "ring"),
        # 2-node tree: a chain in each node (2 S / 100e9 = 0.16 s), and each node sends S once
        # over its NICs (1 s): 2 x (3 x 2 us + 1 x 1 us) latency
        ("allreduce", "tree", 14 * US, 1.0, "tree"),
        # NCCL's own pick on two nodes is the tree, not the ring
        ("allreduce", "auto", 14 * US, 1.0, "tree"),
        # hierarchical (asked for): reduce-scatter inside (6 us + 0.06 s), all-reduce of the
        # 2e9-byte shard between 2 nodes at 2e9 B/s per GPU (2 us + 1 s), all-gather (0.06 s)
        ("allreduce", "hier", 14 * US, 1.12, "hier+ring"),
        # all-gather: NCCL's ring 7 x 2 us + 7/8 s; hierarchical 1 us + 0.5 s, then 6 us + 0.06 s
        ("allgather", "auto", 14 * US, 0.875, "ring"),
        ("allgather", "hier", 7 * US, 0.56, "hier+ring"),
        ("reducescatter", "hier", 7 * US, 0.56, "hier+ring"),
        # one chain through all 8 GPUs: 1 network hop, 2 x 3 NVLink hops; paced by the network
        ("broadcast", "auto", 13 * US, 1.0, "ring"),
        # 4 network exchanges and 3 NVLink ones; NVLink share 3/8 x 8e9/100e9 = 0.03 s runs beside
        # the network share 4 x 4/8 x 8e9/8e9 = 2 s
        ("alltoall", "auto", 10 * US, 2.0, "pairwise"),
    ],
)
def test_two_level_formulas(
    op: str, algo: str, latency: float, bandwidth: float, algorithm: str
) -> None:
    _same(collective_formula(op, S, TWO_BY_FOUR, algo), latency, bandwidth, algorithm)


def test_beyond_two_nodes_the_tree_moves_twice_the_bytes_and_the_ring_wins_big_buffers() -> None:
    tree = candidates("allreduce", S, FOUR_BY_FOUR)["tree"]
    # 2 x (3 x 2 us + log2(4) x 1 us) latency; max(2 S / 100e9, 2 S / 8e9) = 2 s
    _same(tree, 16 * US, 2.0, "tree")
    # ring: 30 x 2 us, 30/16 x 1 s
    _same(collective_formula("allreduce", S, FOUR_BY_FOUR), 60 * US, 1.875, "ring")


def test_the_two_node_tree_can_beat_the_nic_rate() -> None:
    # busbw = 2(p-1)/p x S / t: the ring sits at the NIC's 8 GB/s, the tree near twice that
    # (less NCCL's 0.92 for the tree).
    ring = collective("allreduce", S, TWO_BY_FOUR, "ring")
    tree = collective("allreduce", S, TWO_BY_FOUR, "tree")
    assert bus_factor("allreduce", 8) * S / ring.bandwidth_s == pytest.approx(NET.bandwidth)
    tree_busbw = bus_factor("allreduce", 8) * S / tree.bandwidth_s
    assert tree_busbw == pytest.approx(1.75 * 0.92 * NET.bandwidth)


def test_nvls_inside_one_box_and_nvls_tree_between_boxes() -> None:
    box = Cluster(1, 8, None, INTRA, NVLS)
    # ring: 14 x 2 us + 1.75 x 0.08 s = 0.140028 s; NVLS: 4 us + 8e9 / 60e9 s
    _same(collective_formula("allreduce", S, box, "ring"), 28 * US, 0.14, "ring")
    _same(collective_formula("allreduce", S, box), 4 * US, S / 60e9, "nvls")
    two = Cluster(2, 4, Link(200e9, 1 * US), INTRA, NVLS)
    # NVLS-tree: 2 x (2 us + 1 us); max(S x (1.5 / 1.75) / 60e9, S / 200e9): four GPUs share
    # the switch's bus bandwidth measured on eight, so each moves its buffer faster
    _same(collective_formula("allreduce", S, two), 6 * US, S * 1.5 / 1.75 / 60e9, "nvls-tree")
    assert "nvls" not in candidates("allreduce", S, Cluster(1, 8, None, INTRA))


def test_collnet_only_with_sharp_and_it_halves_the_network_bytes() -> None:
    assert "collnet" not in candidates("allreduce", S, FOUR_BY_FOUR)
    sharp = Cluster(4, 4, NET, INTRA, sharp=True)
    # inside: reduce-scatter and all-gather, 2 x 3/4 x 0.08 s; between: each node S once, 1 s
    _same(candidates("allreduce", S, sharp)["collnet"], 16 * US, 1.0, "collnet")
    assert collective("allreduce", S, sharp).algorithm == "collnet"


# ----- NCCL's protocols and latency table (src/graph/tuning.cc) -----


def test_an_8_byte_all_reduce_in_one_box_is_ring_ll_at_nccls_latency() -> None:
    # Two GPUs over NVLink: ring LL base 6.6 us + 2 steps x 0.6 us.
    cost = collective("allreduce", 8, Cluster(1, 2, None, INTRA))
    assert (cost.algorithm, cost.protocol) == ("ring", "LL")
    assert cost.latency_s == pytest.approx(7.8 * US)


def test_small_all_reduces_across_nodes_take_the_tree_with_ll() -> None:
    # 16 nodes of 8: tree LL 6.8 + 2 x (7 x 0.6 + 4 x 5.0) us.
    cost = collective("allreduce", 8, Cluster(16, 8, NET, INTRA))
    assert (cost.algorithm, cost.protocol) == ("tree", "LL")
    assert cost.latency_s == pytest.approx(55.2 * US)


def test_the_protocol_moves_from_ll_to_simple_as_the_buffer_grows() -> None:
    box = Cluster(1, 8, None, INTRA)
    protocols = [collective("allreduce", 2**k, box, "ring").protocol for k in (3, 20, 33)]
    assert protocols[0] == "LL" and protocols[-1] == "Simple"
    big = collective("allreduce", 2**33, box, "ring")
    assert big.bandwidth_s == pytest.approx(collective_formula("allreduce", 2**33, box).bandwidth_s)


def test_ll128_is_left_out_over_pcie_and_sockets() -> None:
    pci = Cluster(1, 8, None, INTRA, intra_kind="pci", ll128=False)
    for k in range(3, 34, 3):
        assert collective("allreduce", 2**k, pci).protocol != "LL128"


def test_nvls_pays_nccls_fixed_latency() -> None:
    box = Cluster(1, 8, None, INTRA, NVLS)
    assert collective("allreduce", 2**33, box).latency_s == pytest.approx(23 * US)


def test_a_forced_algorithm_that_cannot_run_is_refused() -> None:
    with pytest.raises(ValueError, match="nvls cannot run"):
        collective("allreduce", S, TWO_BY_FOUR, "nvls")


@pytest.mark.parametrize(
    ("op", "ranks", "factor"),
    [
        ("allreduce", 8, 1.75),
        ("allreduce", 2, 1.0),
        ("allgather", 8, 0.875),
        ("reducescatter", 4, 0.75),
        ("alltoall", 16, 15 / 16),
        ("broadcast", 8, 1.0),
        ("transfer", 2, 1.0),
    ],
)
def test_bus_factors_follow_nccl_tests(op: str, ranks: int, factor: float) -> None:
    assert bus_factor(op, ranks) == pytest.approx(factor)


# ----- from requests: NICs, shared media, compute steps -----

CATALOGUE = load_catalogue(extra=None)


def _only(key: str, **fields: object) -> Catalogue:
    ic = replace(CATALOGUE.get(key), **fields)  # type: ignore[arg-type]
    return Catalogue((ic, CATALOGUE.get("nvlink4"), CATALOGUE.get("nvlink3")), (key,))


@pytest.mark.parametrize(
    ("request_", "nics"),
    [
        (BandwidthRequest("1GB", 10**9), 1),
        (BandwidthRequest("1GB", 10**9, nics=4), 4),
        (BandwidthRequest("1GB", 10**9, "allreduce"), 1),
        (BandwidthRequest("1GB", 10**9, "allreduce", gpus=8), 8),
        (BandwidthRequest("1GB", 10**9, "allreduce", gpus=8, nics=2), 2),
    ],
)
def test_nics_default_to_one_per_gpu(request_: BandwidthRequest, nics: int) -> None:
    assert nics_per_node(request_) == nics


def test_the_node_link_is_rate_times_collective_efficiency_times_nics() -> None:
    hdr = CATALOGUE.get("ib-hdr")
    link = node_link(BandwidthRequest("1GB", 10**9, "allreduce", gpus=8, nics=4), hdr)
    assert link.bandwidth == pytest.approx(4 * 200e9 / 8 * 0.96)
    assert link.latency == pytest.approx(0.7e-6)
    tcp = node_link(BandwidthRequest("1GB", 10**9, "allreduce"), CATALOGUE.get("100gbe"))
    assert tcp.bandwidth == pytest.approx(100e9 / 8 * 0.44)  # NCCL's socket transport
    one = node_link(BandwidthRequest("1GB", 10**9), CATALOGUE.get("100gbe"))
    assert one.bandwidth == pytest.approx(100e9 / 8 * 0.941)  # a transfer: TCP's own goodput


@pytest.mark.parametrize(("op", "nodes", "share"), [("transfer", 2, 2), ("allreduce", 4, 8)])
def test_wifi_nodes_share_one_channel(op: str, nodes: int, share: int) -> None:
    wifi = CATALOGUE.get("wifi6")
    link = node_link(BandwidthRequest("1GB", 10**9, op, nodes=nodes, gpus=8), wifi)
    assert link.bandwidth == pytest.approx(1.201e9 / 8 * 0.65 / share)


def test_a_transfer_is_latency_plus_size_over_rate_times_efficiency() -> None:
    result = estimate(BandwidthRequest("1GB", 10**9, over=("10gbe",)), CATALOGUE).fastest
    assert result.latency_s == pytest.approx(10.5e-6)
    assert result.bandwidth_s == pytest.approx(1e9 / (10e9 / 8 * 0.941))
    assert result.effective_gbps == pytest.approx(1e9 / result.seconds / 1e9)


def test_step_gives_comm_ratio_and_scaling_efficiency() -> None:
    request = BandwidthRequest("1GB", 10**9, "allreduce", step=2.0, over=("1gbe", "ib-hdr"))
    for r in estimate(request, CATALOGUE).results:
        assert r.comm_ratio == pytest.approx(r.seconds / 2.0)
        assert r.efficiency == pytest.approx(2.0 / (2.0 + r.seconds))


def test_results_are_sorted_fastest_first_with_slowdowns() -> None:
    result = estimate(BandwidthRequest("10GB", 10**10, "allreduce", gpus=8), CATALOGUE)
    seconds = [r.seconds for r in result.results]
    assert seconds == sorted(seconds)
    assert result.results[0].slowdown == 1.0
    for r in result.results:
        assert r.slowdown == pytest.approx(r.seconds / seconds[0])


def test_intra_link_can_be_chosen() -> None:
    slow = estimate(BandwidthRequest("10GB", 10**10, "allreduce", gpus=8, intra="pcie4"), CATALOGUE)
    fast = estimate(BandwidthRequest("10GB", 10**10, "allreduce", gpus=8), CATALOGUE)
    assert slow.intra is not None and slow.intra.key == "pcie4"
    assert slow.fastest.seconds > fast.fastest.seconds


# ----- monotonicity -----

OPS = ("transfer", "allreduce", "allgather", "reducescatter", "broadcast", "alltoall")
_topology = st.tuples(
    st.sampled_from(OPS),
    st.integers(min_value=2, max_value=64),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([None, 1, 2, 8]),
)
_keys = st.sampled_from([ic.key for ic in CATALOGUE if not ic.intra_node])


@settings(max_examples=150)
@given(
    _topology,
    _keys,
    st.integers(min_value=1, max_value=10**17),
    st.integers(min_value=1, max_value=10**17),
)
def test_more_bytes_are_never_faster(
    topology: tuple[str, int, int, int | None], key: str, a: int, b: int
) -> None:
    op, nodes, gpus, nics = topology
    small, large = sorted((a, b))

    def seconds(nbytes: int) -> float:
        req = BandwidthRequest("x", nbytes, op, nodes=nodes, gpus=gpus, nics=nics, over=(key,))
        return estimate(req, CATALOGUE).fastest.seconds

    assert seconds(small) <= seconds(large)


@settings(max_examples=150)
@given(
    _topology,
    _keys,
    st.integers(min_value=1, max_value=10**15),
    st.floats(min_value=0.01, max_value=100.0),
    st.floats(min_value=1.0, max_value=1000.0),
)
def test_more_bandwidth_is_never_slower(
    topology: tuple[str, int, int, int | None], key: str, nbytes: int, rate: float, factor: float
) -> None:
    op, nodes, gpus, nics = topology
    base = CATALOGUE.get(key)
    request = BandwidthRequest("x", nbytes, op, nodes=nodes, gpus=gpus, nics=nics, over=(key,))

    def seconds(ic: Interconnect) -> float:
        return estimate(request, _only(key, rate_gbps=ic.rate_gbps)).fastest.seconds

    slower = seconds(replace(base, rate_gbps=rate))
    faster = seconds(replace(base, rate_gbps=rate * factor))
    assert faster <= slower


@settings(max_examples=100)
@given(_topology, _keys, st.integers(min_value=1, max_value=10**15))
def test_more_latency_is_never_faster(
    topology: tuple[str, int, int, int | None], key: str, nbytes: int
) -> None:
    op, nodes, gpus, nics = topology
    request = BandwidthRequest("x", nbytes, op, nodes=nodes, gpus=gpus, nics=nics, over=(key,))
    base = CATALOGUE.get(key).latency_us
    quick = estimate(request, _only(key, latency_us=base)).fastest.seconds
    slow = estimate(request, _only(key, latency_us=base * 10 + 1)).fastest.seconds
    assert quick <= slow
