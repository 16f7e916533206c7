"""The bundled catalogue (every key, a source for every number) and user files on top of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bandwidth import (
    ENV_VAR,
    QUIZ_CHOICES,
    TRANSPORTS,
    BandwidthError,
    BandwidthRequest,
    estimate,
    load_catalogue,
    parse_catalogue_text,
)
from bot.bandwidth._chart import FAMILY_COLOURS

# The keys the product promises (ARCHITECTURE.md, /bandwidth).
PROMISED = [
    *("1gbe", "10gbe", "25gbe", "100gbe", "200gbe", "400gbe", "800gbe"),
    *("roce-100", "roce-200", "roce-400", "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr"),
    *("nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "pcie6"),
    *("wifi6", "wifi6e", "wifi7", "fc32", "fc64", "fc128", "efa", "slingshot", "omnipath"),
]


@pytest.fixture(autouse=True)
def _no_user_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_every_promised_key_is_in_the_bundled_catalogue() -> None:
    catalogue = load_catalogue()
    assert set(PROMISED) <= set(catalogue.keys())


def test_every_number_has_a_source() -> None:
    missing = [
        f"{ic.key}.{what}"
        for ic in load_catalogue()
        for what in ("rate", "efficiency", "latency")
        if not (ic.source(what) or "").strip()
    ]
    assert missing == []


def test_every_transport_and_collective_figure_has_a_source() -> None:
    missing = []
    for ic in load_catalogue():
        assert ic.transport in TRANSPORTS, ic.key
        wanted = ["transport"]
        if ic.collective_efficiency is not None:
            wanted.append("collective")
        if ic.nvls_efficiency is not None:
            wanted.append("nvls")
        if ic.sharp:
            wanted.append("sharp")
        missing += [f"{ic.key}.{w}" for w in wanted if not (ic.source(w) or "").strip()]
    assert missing == []


@pytest.mark.parametrize(
    ("key", "transport", "collective"),
    [
        ("1gbe", "socket", 0.88),
        ("100gbe", "socket", 0.44),
        ("400gbe", "socket", 0.44),
        ("roce-400", "rdma", 0.96),
        ("ib-ndr", "rdma", 0.96),
        ("nvlink4", "nvlink", 0.8),
        ("pcie5", "pcie", 0.8),
    ],
)
def test_the_transport_sets_what_nccl_collectives_reach(
    key: str, transport: str, collective: float
) -> None:
    ic = load_catalogue().get(key)
    assert ic.transport == transport
    assert ic.collective_bytes_per_s == pytest.approx(ic.rate_gbps * 1e9 / 8 * collective)
    if transport == "socket":
        assert ic.collective_bytes_per_s < ic.payload_bytes_per_s  # sockets lose to iperf


def test_nvls_and_sharp_are_where_the_hardware_has_them() -> None:
    catalogue = load_catalogue()
    assert {ic.key for ic in catalogue if ic.nvls_efficiency} == {"nvlink4", "nvlink5"}
    assert {ic.key for ic in catalogue if ic.sharp} == {"ib-hdr", "ib-ndr", "ib-xdr"}


def test_every_entry_is_plausible_and_drawable() -> None:
    for ic in load_catalogue():
        assert 0.5 <= ic.efficiency <= 1, ic.key
        assert 0 < ic.rate_gbps <= 10_000, ic.key
        assert 0 < ic.latency_us <= 10_000, ic.key
        assert ic.family in FAMILY_COLOURS, ic.key
        assert ic.name and len(ic.name) <= 40, ic.key


@pytest.mark.parametrize(
    ("key", "rate_gbps", "rdma"),
    [
        ("1gbe", 1, False),
        ("10gbe", 10, False),
        ("ib-hdr", 200, True),
        ("ib-ndr", 400, True),
        ("nvlink4", 3600, True),  # 900 GB/s both directions = 450 GB/s each way
        ("pcie4", 16 * 16 * 128 / 130, False),  # 16 lanes x 16 GT/s x 128b/130b
        ("pcie5", 16 * 32 * 128 / 130, False),
        ("fc32", 25.6, False),  # 3,200 MB/s per direction
        ("wifi6", 1.201, False),
    ],
)
def test_headline_numbers(key: str, rate_gbps: float, rdma: bool) -> None:
    ic = load_catalogue().get(key)
    assert ic.rate_gbps == pytest.approx(rate_gbps, rel=1e-3)
    assert ic.rdma is rdma


def test_the_default_comparison_is_a_readable_handful_with_the_quiz_choices() -> None:
    catalogue = load_catalogue()
    default = catalogue.default_comparison
    assert 6 <= len(default) <= 12
    assert set(QUIZ_CHOICES) <= set(default)
    families = {catalogue.get(k).family for k in default}
    assert len(families) >= 5
    result = estimate(BandwidthRequest("1GB", 10**9), catalogue)
    assert {r.key for r in result.results if r.quiz_choice} == set(QUIZ_CHOICES)


def test_unknown_key_names_close_matches() -> None:
    with pytest.raises(BandwidthError, match=r"Unknown interconnect 'ib-hrd'. Did you mean ib-hdr"):
        load_catalogue().get("ib-hrd")


USER_FILE = """
interconnects:
  - key: lab-ib
    name: Lab InfiniBand HDR100
    family: infiniband
    purpose: scale-out
    rate_gbps: 100
    efficiency: 0.96
    latency_us: 0.9
    rdma: true
    sources: measured in our lab with ib_write_bw
  - key: 1gbe
    latency_us: 40
  - key: lab-eth
    name: Lab Ethernet 200G
    family: ethernet
    purpose: scale-out
    rate_gbps: 200
    efficiency: 0.94
    collective_efficiency: 0.5
    latency_us: 8
    rdma: false
default_comparison: [lab-ib, 10gbe]
"""


def test_a_user_file_adds_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "links.yaml"
    path.write_text(USER_FILE, encoding="utf-8")
    catalogue = load_catalogue(path)
    lab = catalogue.get("lab-ib")
    assert (
        lab.rate_gbps == 100
        and lab.rdma
        and lab.source("rate") == "measured in our lab with ib_write_bw"
    )
    gbe = catalogue.get("1gbe")
    assert gbe.latency_us == 40
    assert gbe.rate_gbps == 1  # untouched fields keep the bundled values
    assert gbe.source("latency") == f"user file {path}"  # the old citation no longer applies
    assert "IEEE 802.3" in (gbe.source("rate") or "")
    # the quiz choices are always added to a user's default comparison
    assert catalogue.default_comparison == ("lab-ib", "10gbe", *QUIZ_CHOICES)
    assert len(catalogue) == len(load_catalogue()) + 2
    # without a transport, an entry gets the likely one: sockets without RDMA, RDMA with it
    assert catalogue.get("lab-eth").transport == "socket"
    assert catalogue.get("lab-ib").transport == "rdma"
    assert catalogue.get("lab-eth").collective_bytes_per_s == pytest.approx(200e9 / 8 * 0.5)


def test_the_environment_variable_names_the_user_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "links.yaml"
    path.write_text(USER_FILE, encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, str(path))
    assert "lab-ib" in load_catalogue()
    other = tmp_path / "other.yaml"
    other.write_text("interconnects:\n  - key: 10gbe\n    latency_us: 7\n", encoding="utf-8")
    chosen = load_catalogue(other)  # an explicit file wins over the variable
    assert "lab-ib" not in chosen and chosen.get("10gbe").latency_us == 7


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- key: x", "expected a mapping with an 'interconnects:' list"),
        ("interconnects: {key: x}", "'interconnects' must be a list"),
        ("links: []", "unknown top-level key 'links'"),
        ("interconnects:\n  - 5", "each entry must be a mapping"),
        ("interconnects:\n  - key: Big Link", "'key' must be lower-case"),
        (
            "interconnects:\n  - key: new-one\n    rate_gbps: 5",
            "a new interconnect needs name, family",
        ),
        (
            "interconnects:\n  - key: 1gbe\n    rate_gbps: fast",
            "rate_gbps must be a number above 0",
        ),
        ("interconnects:\n  - key: 1gbe\n    rate_gbps: -1", "rate_gbps must be a number above 0"),
        ("interconnects:\n  - key: 1gbe\n    rate_gbps: .nan", "rate_gbps must be a number"),
        (
            "interconnects:\n  - key: 1gbe\n    efficiency: 1.5",
            "efficiency must be a number above 0",
        ),
        (
            "interconnects:\n  - key: 1gbe\n    latency_us: -3",
            "latency_us must be a number at least 0",
        ),
        ("interconnects:\n  - key: 1gbe\n    rdma: maybe", "rdma must be true or false"),
        ("interconnects:\n  - key: 1gbe\n    transport: tcp", "transport must be one of rdma"),
        (
            "interconnects:\n  - key: 1gbe\n    collective_efficiency: 0",
            "collective_efficiency must be a number above 0",
        ),
        ("interconnects:\n  - key: 1gbe\n    sharp: 2", "sharp must be true or false"),
        ("interconnects:\n  - key: 1gbe\n    purpose: fun", "purpose must be one of"),
        ("interconnects:\n  - key: 1gbe\n    family: Big Family", "family must be a short"),
        (
            "interconnects:\n  - key: 1gbe\n    latncy_us: 3",
            "unknown field 'latncy_us' (did you mean 'latency_us'?)",
        ),
        (
            "interconnects:\n  - key: 1gbe\n    sources: {speed: x}",
            "sources must be text, or a mapping",
        ),
        ("interconnects:\n  - key: 1gbe\n  - key: 1gbe", "the key appears twice"),
        ("interconnects:\n  - key: all\n    latency_us: 1", "'all' is reserved"),
        ("default_comparison: [nope]", "default_comparison names unknown interconnect 'nope'"),
        ("default_comparison: nope", "default_comparison must be a list"),
        ("interconnects: [\n", "line"),
    ],
)
def test_bad_user_files_are_refused_clearly(text: str, says: str) -> None:
    with pytest.raises(BandwidthError) as caught:
        parse_catalogue_text(text, "links.yaml", base=load_catalogue())
    assert says in str(caught.value)
    assert "links.yaml" in str(caught.value)


def test_every_problem_is_reported_at_once() -> None:
    text = "interconnects:\n  - key: 1gbe\n    rate_gbps: 0\n    efficiency: 2\n    rdma: 3\n"
    with pytest.raises(BandwidthError) as caught:
        parse_catalogue_text(text, "links.yaml", base=load_catalogue())
    message = str(caught.value)
    for field in ("rate_gbps", "efficiency", "rdma"):
        assert field in message


def test_a_missing_user_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BandwidthError, match="Cannot read the interconnect file"):
        load_catalogue(tmp_path / "nope.yaml")


def test_a_catalogue_without_the_quiz_choices_is_refused() -> None:
    text = (
        "interconnects:\n  - {key: a, name: A, family: ethernet, purpose: lan, rate_gbps: 1,"
        " efficiency: 0.9, latency_us: 1, rdma: false}\n"
    )
    with pytest.raises(BandwidthError, match="the quiz choice 'ib-hdr' is missing"):
        parse_catalogue_text(text, "standalone.yaml")
