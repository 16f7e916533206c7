"""NCCL's channels, its tree by node count and size, and NVLS by the size of the NVLink domain.

Each constant comes from NCCL's source (github.com/NVIDIA/nccl: src/enqueue.cc,
src/graph/tuning.cc, src/transport/nvls.cc, src/include/device.h and comm.h); the published
figures are those of tests/bandwidth/published.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.bandwidth import estimate, load_catalogue, parse_request
from bot.bandwidth._models import (
    AMPERE,
    BLACKWELL,
    HOPPER,
    Cluster,
    Link,
    channel_seconds,
    channels_used,
    collective,
    full_channels,
    generation,
    tree_correction,
)
from bot.bandwidth._render import to_json
from bot.bandwidth._sweep import sweep, sweep_to_json
from tests.bandwidth.published import MEASUREMENTS, error

MIB = 2**20
CATALOGUE = load_catalogue(extra=None)


def _fastest(text: str):  # type: ignore[no-untyped-def]
    return estimate(parse_request(text), CATALOGUE).fastest


# ----- channels -----


def test_small_buffers_run_on_fewer_channels() -> None:
    # Simple: 512 threads x 64 bytes = 32 KiB a channel; LL128: 640 x 8 = 5 KiB; the ring's LL
    # 512 x 8 bytes x the ranks (src/enqueue.cc, src/include/device.h and comm.h).
    assert channels_used(64 * 1024, 10, "Simple", 8, ring=True) == 2
    assert channels_used(64 * 1024, 10, "LL128", 8, ring=True) == 10
    assert channels_used(64 * 1024, 10, "LL", 8, ring=True) == 2
    assert channels_used(64 * 1024, 10, "LL", 8, ring=False) == 10
    assert channels_used(8, 10, "LL", 8, ring=True) == 1
    assert channels_used(2**30, 10, "Simple", 8, ring=True) == 10


def test_the_channel_count_follows_the_link_and_the_generation() -> None:
    # NCCL's per-channel LL128 ceiling: 36.7 GB/s on Hopper, 20 on Ampere (tuning.cc).
    assert full_channels(360e9, HOPPER) == 10
    assert full_channels(192e9, AMPERE) == 10
    assert full_channels(1e9, HOPPER) == 2
    assert full_channels(10e12, BLACKWELL) == 32
    assert generation("nvlink3") == AMPERE and generation("nvlink5") == BLACKWELL
    assert generation("pcie4") == AMPERE


def test_fewer_channels_carry_less_bus_bandwidth() -> None:
    # busbw = channels x the per-channel ceiling at most: 2 Hopper channels carry 73.4 GB/s.
    assert channel_seconds(73.4e9, 2) == pytest.approx(1.0)
    assert channel_seconds(73.4e9, 10) == pytest.approx(0.2)
    assert channel_seconds(40e9, 1, BLACKWELL) == pytest.approx(1.0)


def test_a_mid_size_ring_on_few_channels_is_slower_than_the_alpha_beta_ring() -> None:
    box = Cluster(1, 8, None, Link(360e9, 2e-6))
    small = collective("allreduce", 64 * 1024, box, "ring")
    large = collective("allreduce", 2**30, box, "ring")
    assert small.channels < large.channels == 10
    wire = 1.75 * 64 * 1024 / 360e9
    assert small.bandwidth_s > 1.5 * wire


def test_channels_are_in_the_json_and_the_sweep() -> None:
    result = estimate(parse_request("64KiB allreduce nodes=1 gpus=8 over=nvlink3"), CATALOGUE)
    item = to_json(result)["results"][0]
    assert item["channels"] == result.fastest.channels >= 1
    request = parse_request("1GiB allreduce nodes=2 gpus=8 intra=nvlink3 over=ib-hdr")
    points = sweep_to_json(sweep(request, CATALOGUE, request.bytes))["sweep"][0]["points"]  # type: ignore[index]
    channels = [p["channels"] for p in points]  # type: ignore[index]
    assert channels[0] < channels[-1]
    assert channels == sorted(channels) or min(channels) == 1


# ----- the tree by node count and size -----


def test_nccl_corrects_the_tree_for_mid_size_buffers() -> None:
    # treeCorrectionFactor (tuning.cc): 2 MiB = 64 B x 2^15; LL128 row 0.6, Simple row 0.6.
    assert tree_correction(2 * MIB, 1) == 0.6
    assert tree_correction(2 * MIB, 2) == 0.6
    assert tree_correction(32 * MIB, 1) == 0.9
    assert tree_correction(8, 0) == 1.0
    assert tree_correction(2**30, 2) == 1.0
    # Between powers of two on a log scale: 2.83 MiB is half way from 0.6 to 0.8 (LL128).
    assert tree_correction(2 * MIB * 2**0.5, 1) == pytest.approx(0.7)


def test_a_larger_buffer_is_never_faster_through_the_tree_or_the_channels() -> None:
    for text in (
        "8B allreduce nodes=2 gpus=1 nics=4 over=roce-400 algo=tree",
        "8B allreduce nodes=4 gpus=8 intra=nvlink3 over=ib-hdr",
        "8B allreduce nodes=1 gpus=8 over=nvlink4 algo=ring",
    ):
        request = parse_request(text)
        times = [
            estimate(replace(request, bytes=int(8 * 1.02**k)), CATALOGUE).fastest.seconds
            for k in range(0, 1100, 3)
        ]
        assert times == sorted(times), text


@pytest.mark.parametrize("size", [2, 16, 32])
def test_a_forced_two_node_tree_matches_nccl_tests_at_mid_sizes(size: int) -> None:
    # NVIDIA/nccl-tests#232, held out: 18.5, 39.9 and 41.3 GB/s busbw; the model without NCCL's
    # tree corrections gave 27.2 GB/s at 2 MiB (+47%).
    figure = MEASUREMENTS[f"2x1 H100, 4 NICs, tree, {size} MiB"]
    assert abs(error(figure)) <= 0.10


def _pick(size: str, nodes: int) -> str:
    text = f"{size} allreduce nodes={nodes} gpus=8 intra=nvlink3 over=ib-hdr"
    return str(_fastest(text).algorithm)


def test_the_ring_gives_way_to_the_tree_as_nodes_are_added() -> None:
    # Two nodes: the double binary tree moves half the ring's bytes. From three the ring's
    # bandwidth wins large buffers until its 2(p-1) steps of latency outweigh it; the node
    # count where the tree takes over grows with the buffer.
    assert [_pick("64MiB", n) for n in (2, 3, 4, 8, 64)] == ["tree", "ring", "ring", "tree", "tree"]

    def takeover(size: str) -> int:
        return next(n for n in (3, 4, 6, 8, 16, 32, 64, 128, 256) if _pick(size, n) == "tree")

    assert takeover("4MiB") < takeover("64MiB") < takeover("1GiB")


# ----- NVLS by the size of the NVLink domain -----


def test_nvls_bus_bandwidth_does_not_grow_with_the_domain() -> None:
    # NCCL's tuner has no rank count in the NVLS bus bandwidth (tuning.cc): a 72-GPU NVL72 rack
    # reaches the busbw of an 8-GPU B200 box, 835 GB/s against 830 measured (CoreWeave
    # nccl-tests#43, NVIDIA/nccl#1807); the per-GPU rate falls by 1.75 / 1.97.
    box = _fastest("16GiB allreduce nodes=1 gpus=8 over=nvlink5")
    rack = _fastest("16GiB allreduce nodes=1 gpus=72 over=nvlink5")
    assert rack.algorithm == box.algorithm == "nvls"
    assert rack.busbw_gbps == pytest.approx(box.busbw_gbps, rel=0.01)
    assert rack.algbw_gbps == pytest.approx(box.algbw_gbps * 1.75 / (2 * 71 / 72), rel=0.01)
    assert abs(error(MEASUREMENTS["GB200 NVL72, 8 GiB"])) <= 0.05


def test_a_small_domain_is_held_to_its_own_nvlink() -> None:
    two = _fastest("16GiB allreduce nodes=1 gpus=2 over=nvlink4 algo=nvls")
    nvlink4 = CATALOGUE.get("nvlink4")
    assert two.algbw_gbps <= nvlink4.collective_bytes_per_s / 1e9 * 1.001


@pytest.mark.parametrize(
    ("request_text", "channels"),
    [
        ("1GiB allreduce nodes=1 gpus=8 over=nvlink4", 16),
        ("1GiB allreduce nodes=1 gpus=72 over=nvlink5", 24),
        ("1GiB allreduce nodes=2 gpus=8 intra=nvlink5 over=ib-ndr", 32),
    ],
)
def test_nvls_runs_nccls_channel_count_for_the_generation(request_text: str, channels: int) -> None:
    # src/transport/nvls.cc: NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL 24, and
    # NVLS_NCHANNELS_SM100 32 across nodes.
    result = _fastest(request_text)
    assert result.algorithm in ("nvls", "nvls-tree")
    assert result.channels == channels


# ----- forced protocols and the broadcast chain -----


def test_a_forced_protocol_is_priced_as_nccl_proto_runs_it() -> None:
    auto = _fastest("8B broadcast nodes=2 gpus=1 over=100gbe")
    simple = _fastest("8B broadcast nodes=2 gpus=1 over=100gbe proto=simple")
    assert (auto.protocol, simple.protocol) == ("LL", "Simple")
    # NCCL 2.20.3, src/graph/tuning.cc: ring base latency LL 6.6 us, Simple 8.4; a network hop
    # LL 2.7, Simple 14.0; the TCP hop beyond InfiniBand's 0.7 us (10.5 - 0.7), twice with
    # Simple. One hop: the root's node sends to the other.
    assert auto.latency_s == pytest.approx((6.6 + 2.7 + 9.8) * 1e-6)
    assert simple.latency_s == pytest.approx((8.4 + 14.0 + 2 * 9.8) * 1e-6)
    # LL128 forced runs even over sockets, where NCCL would not enable it by default.
    assert _fastest("1MiB allreduce nodes=2 over=100gbe proto=ll128").protocol == "LL128"
    # NVLS runs only Simple: forcing LL leaves NCCL the ring.
    nvls = _fastest("1GiB allreduce nodes=1 gpus=8 over=nvlink4")
    ll = _fastest("1GiB allreduce nodes=1 gpus=8 over=nvlink4 proto=ll")
    assert (nvls.algorithm, ll.algorithm, ll.protocol) == ("nvls", "ring", "LL")


def test_a_broadcast_chain_has_one_hop_fewer_than_its_ranks() -> None:
    box = Cluster(1, 8, None, Link(300e9, 1e-6), ll128=True)
    # LL on NVLink: 6.6 us base + 7 hops of 0.6 us (NCCL 2.20.3 tuning.cc), 8 GPUs.
    cost = collective("broadcast", 8, box, proto="ll")
    assert cost.latency_s == pytest.approx((6.6 + 7 * 0.6) * 1e-6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("8B allreduce nodes=2 proto=fast", "proto= must be one of"),
        ("8B proto=ll", "transfer is not priced by protocol"),
        ("8B allreduce nodes=1 gpus=8 algo=nvls proto=ll", "runs only Simple"),
    ],
)
def test_a_protocol_that_cannot_apply_is_refused(text: str, message: str) -> None:
    from bot.bandwidth import BandwidthError

    with pytest.raises(BandwidthError, match=message):
        parse_request(text)
