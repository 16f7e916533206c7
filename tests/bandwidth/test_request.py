"""The chat grammar and the request value: what parses, what is refused, and how."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.bandwidth import (
    OPS,
    USAGE,
    BandwidthError,
    BandwidthRequest,
    estimate,
    load_catalogue,
    parse_plan,
    parse_request,
    plan,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("140GB", BandwidthRequest("140GB", 140 * 10**9)),
        (
            "70B params bf16 allreduce nodes=4 gpus=8",
            BandwidthRequest("70B params bf16", 140 * 10**9, "allreduce", nodes=4, gpus=8),
        ),
        (
            "allreduce 70B params bf16 gpus=8 nodes=4",
            BandwidthRequest("70B params bf16", 140 * 10**9, "allreduce", nodes=4, gpus=8),
        ),
        (
            "13B adam all-reduce nodes=16 gpus=8 nics=4 step=0.5",
            BandwidthRequest(
                "13B adam", 208 * 10**9, "allreduce", nodes=16, gpus=8, nics=4, step=0.5
            ),
        ),
        (
            "400Gb over=ib-ndr,1GbE,wifi6",
            BandwidthRequest("400Gb", 50 * 10**9, over=("ib-ndr", "1gbe", "wifi6")),
        ),
        ("1 GiB ALL_GATHER nodes=3", BandwidthRequest("1 GiB", 2**30, "allgather", nodes=3)),
        ("1MB reduce-scatter", BandwidthRequest("1MB", 10**6, "reducescatter")),
        ("1MB broadcast nodes=1,000", BandwidthRequest("1MB", 10**6, "broadcast", nodes=1000)),
        ("1MB alltoall step=350ms", BandwidthRequest("1MB", 10**6, "alltoall", step=0.35)),
        ("1MB allreduce step=2min", BandwidthRequest("1MB", 10**6, "allreduce", step=120.0)),
        ("/bandwidth 5GB transfer", BandwidthRequest("5GB", 5 * 10**9)),
        (
            "5GB allreduce gpus=4 intra=NVLink3",
            BandwidthRequest("5GB", 5 * 10**9, "allreduce", gpus=4, intra="nvlink3"),
        ),
    ],
)
def test_parse_request(text: str, expected: BandwidthRequest) -> None:
    assert parse_request(text) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "Give a size"),
        ("allreduce nodes=4", "Give a size first"),
        ("help", "How to ask"),
        ("lots of data", "Cannot read"),
        ("0GB", "more than zero"),
        ("5GB allreduce broadcast", "one operation"),
        ("5GB nodes=2 nodes=3", "given twice"),
        ("5GB speed=3", "Unknown option 'speed='"),
        ("5GB allreduce nodes=four", "whole number"),
        ("5GB allreduce nodes=0", "between 1 and"),
        ("5GB allreduce nodes=-2", "whole number"),
        ("5GB allreduce nodes=1000000", "between 1 and 100,000"),
        ("5GB allreduce gpus=2000", "between 1 and 1,024"),
        ("5GB allreduce nics=0", "between 1 and"),
        ("5GB allreduce step=0", "more than 0"),
        ("5GB allreduce step=-1", "step= must be a time"),
        ("5GB allreduce step=nan", "step= must be a time"),
        ("5GB allreduce step=1e9", "at most 1,000,000"),
        ("5GB over=", "needs interconnect keys"),
        ("5GB over=IB_HDR", "not an interconnect key"),
        ("5GB allreduce nodes=1", "at least two GPUs"),
        ("5GB allreduce algo=fastest", "algo= must be one of auto, ring, tree"),
        ("5GB alltoall algo=ring", "alltoall has one way"),
        ("5GB allreduce nodes=1 gpus=8 algo=tree", "algo=tree runs between nodes"),
        ("5GB allreduce nodes=4 algo=hier", "algo=hier needs several nodes of several GPUs"),
        ("5GB allreduce nodes=4 algo=nvls", "algo=nvls reduces inside an NVSwitch box"),
        ("5GB allreduce sharp=maybe", "sharp= must be on or off"),
        ("5GB allreduce sharp sharp", "sharp is given twice"),
    ],
)
def test_bad_requests_are_refused_with_usage(text: str, says: str) -> None:
    with pytest.raises(BandwidthError) as caught:
        parse_request(text)
    assert says in caught.value.message
    assert caught.value.usage == USAGE


def test_usage_has_at_least_three_examples() -> None:
    examples = [line for line in USAGE.splitlines() if line.strip().startswith("/bandwidth ")]
    assert len(examples) >= 3
    for line in examples:
        if line.strip().startswith("/bandwidth plan "):
            plan(parse_plan(line.strip()), load_catalogue())
        else:
            parse_request(line.strip())


def test_request_built_directly_is_validated_and_normalised() -> None:
    request = BandwidthRequest("1 GB", 10**9, op="All-Reduce", over=(" IB-HDR ", "1gbe", "1gbe"))
    assert request.op == "allreduce"
    assert request.over == ("ib-hdr", "1gbe")
    assert request.ranks == 2
    with pytest.raises(BandwidthError):
        BandwidthRequest("1 GB", 0)
    with pytest.raises(BandwidthError):
        BandwidthRequest("1 GB", 10**9, op="gossip")
    with pytest.raises(BandwidthError):
        BandwidthRequest("1 GB", 10**9, nodes=True)
    with pytest.raises(BandwidthError):
        BandwidthRequest("1 GB", 10**9, step=float("inf"))


@pytest.mark.parametrize(
    ("text", "algo", "sharp"),
    [
        ("5GB allreduce", "auto", False),
        ("5GB allreduce algo=ring", "ring", False),
        ("5GB allreduce nodes=4 gpus=8 algo=HIER sharp", "hier", True),
        ("5GB allreduce sharp=off", "auto", False),
        ("5GB allreduce sharp=yes", "auto", True),
    ],
)
def test_algo_and_sharp(text: str, algo: str, sharp: bool) -> None:
    request = parse_request(text)
    assert (request.algo, request.sharp) == (algo, sharp)


def test_one_node_of_several_gpus_is_a_question_about_the_box() -> None:
    request = parse_request("1GB allreduce nodes=1 gpus=8 over=nvlink4")
    assert (request.nodes, request.gpus, request.ranks) == (1, 8, 8)


def test_a_transfer_ignores_the_node_count() -> None:
    assert parse_request("5GB nodes=1").nodes == 1


@given(st.text(max_size=120))
def test_random_requests_never_raise_anything_but_bandwidth_error(text: str) -> None:
    try:
        request = parse_request(text)
    except BandwidthError:
        return
    assert 1 <= request.bytes <= 10**18
    assert request.op in OPS


_words = st.lists(
    st.sampled_from(
        [
            "5GB",
            "70B",
            "params",
            "bf16",
            "adam",
            "allreduce",
            "transfer",
            "nodes=4",
            "gpus=8",
            "nics=2",
            "step=0.5",
            "over=ib-hdr,1gbe",
            "nodes=",
            "gpus=x",
            "=",
            "over=,",
            "step=1e400",
            "intra=nvlink3",
            "help",
            "-",
            "nodes=99999999999999999999",
            "1,000",
            "GB",
            "0",
        ]
    ),
    max_size=8,
)


@given(_words)
def test_word_salad_never_raises_anything_but_bandwidth_error(words: list[str]) -> None:
    try:
        request = parse_request(" ".join(words))
    except BandwidthError:
        return
    assert 1 <= request.bytes <= 10**18
    assert request.nodes * request.gpus >= 2 or request.op == "transfer"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1GB allreduce nodes=2 gpus=8 nics=1000", "more NICs than any GPU server"),
        ("1GB allreduce nodes=1 gpus=1024 over=nvlink4", "the largest product joins 256"),
        ("1GB allreduce nodes=2 gpus=512 over=ib-ndr", "the largest product joins 256"),
        ("1GB allreduce nodes=2 gpus=8 intra=wifi6", "is a network between nodes"),
        ("1GB allreduce nodes=2 gpus=8 intra=ib-ndr", "is a network between nodes"),
        ("1GB allreduce nodes=4 gpus=8 over=nvlink4", "joins GPUs inside one"),
        ("1GB allreduce nodes=2 gpus=72 over=nvlink5", "joins GPUs inside one"),
    ],
)
def test_hardware_that_cannot_exist_is_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(BandwidthError, match=says):
        estimate(parse_request(text), load_catalogue())


def test_an_nvl72_rack_is_one_domain_and_efa_defaults_to_a_real_instance() -> None:
    rack = estimate(parse_request("1GiB allreduce nodes=1 gpus=72 over=nvlink5"), load_catalogue())
    assert rack.fastest.algorithm == "nvls"
    efa = estimate(parse_request("1GiB allreduce nodes=2 gpus=8 over=efa"), load_catalogue())
    assert "efa: 4 NICs a node" in efa.assumptions
    one = estimate(
        parse_request("8GiB allreduce nodes=2 gpus=8 over=efa,ib-ndr algo=ring"), load_catalogue()
    )
    by_key = {r.key: r for r in one.results}
    assert by_key["efa"].seconds > 3 * by_key["ib-ndr"].seconds
