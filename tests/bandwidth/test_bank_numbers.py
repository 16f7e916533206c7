"""Rates the shipped questions quote for a named link agree with the /bandwidth catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bandwidth import Catalogue, load_catalogue
from bot.bank import QuestionBank, load_bank
from tests.bandwidth.bank_numbers import check_question, compare_question, compare_text

QUESTIONS = Path(__file__).resolve().parents[2] / "questions"


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


@pytest.fixture(scope="module")
def bank() -> QuestionBank:
    return load_bank([QUESTIONS])


def test_shipped_questions_quote_the_catalogue_rates(
    bank: QuestionBank, catalogue: Catalogue
) -> None:
    mismatches = [m for q in bank for m in check_question(q, catalogue)]
    assert not mismatches, "\n".join(map(str, mismatches))


def test_the_check_has_something_to_check_in_the_shipped_bank(
    bank: QuestionBank, catalogue: Catalogue
) -> None:
    compared = [c for q in bank for _, c in compare_question(q, catalogue)]
    assert len(compared) >= 20
    links = {key for c in compared for key in c.links}
    assert {"ib-ndr", "ib-hdr"} <= links


@pytest.mark.parametrize(
    "sentence",
    [
        "An NDR port carries 200 Gb/s in each direction.",
        "HDR links run at 400 Gb/s.",
        "Each H100 has 600 GB/s of NVLink 4 bandwidth per direction.",
        "A PCIe 5.0 x16 slot moves about 32 GB/s each way.",
        "XDR doubles the rate to 1.6 Tb/s per port.",
        "A 400GbE port moves 100 GB/s.",
        "A 400 GbE port moves 100 GB/s.",
        "Ethernet at 100 Gb/s beats an HDR port's 100 GB/s.",
        "An NDR port delivers 40 GB/s of payload.",  # the bits/bytes slip
        "RoCE 400 links carry 200 Gb/s.",
        "An NDR300 port carries 300 Gb/s.",  # no such split: NDR splits in halves
        "One NDR NIC measured 60 GB/s in nccl-tests.",  # a measurement above line rate
        "Fourth-generation NVLink gives 900 GB/s in each direction, total 1.8 TB/s.",
    ],
)
def test_a_wrong_rate_beside_a_named_link_is_caught(sentence: str, catalogue: Catalogue) -> None:
    results = list(compare_text(sentence, catalogue))
    assert results, "the sentence was not checked at all"
    assert not all(c.ok for c in results), results


@pytest.mark.parametrize(
    "sentence",
    [
        "An NDR port carries 400 Gb/s, or 50 GB/s, in each direction.",
        "NDR runs four lanes at 100 Gb/s each.",
        "EDR was 100 Gb/s per 4x port, HDR 200 Gb/s, and XDR doubles NDR to 800 Gb/s.",
        "800 Gb/s is XDR, the generation after NDR (4 lanes at 200 Gb/s).",
        "NDR switches can also split a port into two 200 Gb/s (NDR200) links.",
        "An H100 has 18 fourth-generation NVLink links of 50 GB/s each (25 GB/s each way), "
        "900 GB/s in total: 450 GB/s out and 450 GB/s in.",
        "NVLink 4 moves 450 GB/s each way.",
        "PCIe 5.0 runs 32 GT/s per lane, nearly 4 GB/s of data per lane.",
        "About 32 GB/s is PCIe 4.0 x16.",
        "A PCIe 5.0 x8 slot gives about 32 GB/s.",
        "A 400 Gb/s network card sits in a PCIe 5.0 x16 slot.",
        "A 200 Gb/s HDR card (25 GB/s) fits a PCIe 4.0 x16 slot.",
        "Eight NDR ports give a server 400 GB/s into the fabric.",
        "10 Gb/s Ethernet cuts that to 2 minutes, 100 Gb/s to 11 seconds, and an NDR port more.",
        "The copy is four hundred times faster over NDR than 1 Gb/s.",
        "Dividing by 1 GB/s, forgetting that NDR's rate is in bits, gives the wrong answer.",
        "A 4x HDR100 port carries 100 Gb/s.",
        "Four 200 Gb/s HDR NICs per node give 100 GB/s per node in all.",
        "Expect 46-48 GB/s per NDR NIC in practice, so eight should give 370-385 GB/s.",
        "An A100 VM with two HDR NICs measured about 27 GB/s against the expected 50 GB/s.",
    ],
)
def test_a_legitimate_phrasing_passes(sentence: str, catalogue: Catalogue) -> None:
    bad = [c for c in compare_text(sentence, catalogue) if not c.ok]
    assert not bad, bad


def test_a_sentence_naming_no_link_is_not_checked(catalogue: Catalogue) -> None:
    assert list(compare_text("The copy runs at 3 GB/s on this cluster.", catalogue)) == []


def test_a_crafted_bad_question_fails_the_check(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "bad-rate.yaml"
    path.write_text(
        """\
id: bad-ndr-rate
question: Each GPU has one InfiniBand NDR port. How much can it send each way?
choices:
  A: 100 Gb/s
  B: 200 Gb/s
  C: 400 Gb/s
answer: B
explanation:
  short: An NDR port sends 200 Gb/s in each direction.
  full: >-
    NDR ports bundle four lanes. HDR was 200 Gb/s a port, and NDR doubles it to 400 Gb/s.
  why_not:
    A: 100 Gb/s is EDR, two generations older.
    C: 400 Gb/s is an XDR port, paired with the newest adapters.
references:
  - title: InfiniBand Trade Association, roadmap
    url: https://www.infinibandta.org/infiniband-roadmap/
"""
    )
    (question,) = load_bank([path]).questions
    mismatches = check_question(question, catalogue)
    assert [(m.question_id, m.where, m.rate) for m in mismatches] == [
        ("bad-ndr-rate", "explanation.short", "200 Gb/s"),
        ("bad-ndr-rate", "why_not C", "400 Gb/s"),
    ]
    assert "ib-ndr" in str(mismatches[0])


def test_the_check_reads_the_catalogue_not_constants(catalogue: Catalogue) -> None:
    from bot.bandwidth import parse_catalogue_text

    slower = parse_catalogue_text(
        "interconnects:\n"
        "  - {key: ib-ndr, name: NDR, family: infiniband, purpose: scale-out, rate_gbps: 300,\n"
        "     efficiency: 0.97, latency_us: 0.7, rdma: true, encoding: '4 x 75 Gb/s'}\n",
        "test",
        base=catalogue,
    )
    sentence = "An NDR port carries 400 Gb/s."
    assert all(c.ok for c in compare_text(sentence, catalogue))
    assert not any(c.ok for c in compare_text(sentence, slower))
