"""A workspace's questions as data: YAML text and back, layering, and what a submission refuses."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.bank.bank import QuestionBank
from bot.bank.loader import check_text, load_bank
from bot.bank.workspace import (
    StoredRevision,
    check_submission,
    from_revision,
    layered,
    question_yaml,
)
from bot.engine.model import Question
from tests.conftest import FakeClock, make_question

ROOT = Path(__file__).resolve().parents[2]


def same(a: Question, b: Question) -> bool:
    """Return whether two questions say the same, wherever each was read from."""
    return replace(a, source="", line=0, revision=None) == replace(
        b, source="", line=0, revision=None
    )


@pytest.fixture(scope="module")
def shipped() -> QuestionBank:
    return load_bank([ROOT / "questions"])


def test_every_shipped_question_survives_its_yaml_text(shipped: QuestionBank) -> None:
    for q in shipped:
        (back,), problems = check_text(question_yaml(q), "text")
        assert not problems
        assert same(back, q), q.id


def test_a_revision_is_named_for_its_workspace_topic() -> None:
    body = question_yaml(make_question("ours"))
    q = from_revision(StoredRevision("ours", 3, body, "U1", FakeClock()()))
    assert (q.revision, q.asked_as, q.source) == (3, "ours@3", "workspace/ours@3")


def test_layering_hides_replaces_and_appends() -> None:
    base = QuestionBank([make_question("a"), make_question("b"), make_question("c")])
    own = [replace(make_question("b"), text="Ours?", revision=1), make_question("d")]
    bank = layered(base, own, hidden={"a", "d"})
    assert [q.id for q in bank] == ["b", "c"]
    assert bank.by_id("b").text == "Ours?"


GOOD = """\
id: our-fabric-uplinks
question: Our training pods reach the storage cluster over which links?
choices:
  A: Two 400 Gb/s uplinks per leaf, one to each spine
  B: One 100 Gb/s uplink shared by all leaves of a pod
  C: The out-of-band management network in each rack
answer: A
explanation:
  short: Each leaf has two 400 Gb/s uplinks, one per storage spine, so one can fail.
  full: >-
    The pod design gives each leaf switch two 400 Gb/s uplinks, one to each of the two storage
    spines, so the loss of a spine halves the bandwidth but never cuts a leaf off.
  why_not:
    B: A single shared 100 Gb/s uplink would cap checkpoint writes far below what pods need.
    C: The management network carries BMC traffic only, at 1 Gb/s, and never storage data.
tags: [storage]
references:
  - title: NVIDIA DGX SuperPOD reference architecture
    url: https://docs.nvidia.com/dgx-superpod/reference-architecture/latest/index.html
"""


def test_a_good_question_is_accepted(shipped: QuestionBank) -> None:
    checked = check_submission(GOOD, "form", shipped, new_only=True)
    assert not checked.problems, checked.problems
    assert not checked.warnings, [str(w) for w in checked.warnings]
    assert not checked.refused()
    assert [q.id for q in checked.questions] == ["our-fabric-uplinks"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (("  A: Two 400", "  A: " + "x" * 76 + " Two 400"), "at most 75"),
        (("answer: A", ""), "missing required field 'answer'"),
        (("Our training pods", "<!channel> Our training pods"), "mentions and chat markup"),
        (("Each leaf has", "Each leaf (@everyone) has"), "mentions and chat markup"),
        (("B: One 100", "B: <@U1> One 100"), "mentions and chat markup"),
        (("which links?", "which [links](https://evil.example)?"), "mentions and chat markup"),
        (("id: our-fabric-uplinks", "id: multinode-interconnect"), "duplicate id"),
    ],
)
def test_bad_input_is_refused_with_its_reason(
    shipped: QuestionBank, change: tuple[str, str], reason: str
) -> None:
    text = GOOD.replace(*change)
    checked = check_submission(text, "form", shipped, new_only=True)
    assert checked.refused()
    assert checked.questions == ()
    assert any(reason in p.message for p in checked.problems), checked.problems


def test_two_questions_with_one_id_are_refused(shipped: QuestionBank) -> None:
    text = "questions:\n" + "".join(
        "  - " + GOOD.replace("\n", "\n    ").rstrip() + "\n" for _ in range(2)
    )
    checked = check_submission(text, "file", shipped)
    assert any("duplicate id 'our-fabric-uplinks'" in p.message for p in checked.problems)


def test_lint_warnings_refuse_unless_allowed(shipped: QuestionBank) -> None:
    # The tag names the keyed choice: a teaching-quality warning, not a format error.
    text = GOOD.replace("tags: [storage]", "tags: [spine]")
    checked = check_submission(text, "form", shipped)
    assert not checked.problems
    assert [f.rule for f in checked.warnings] == ["tag-names-key"]
    assert checked.refused()
    assert not checked.refused(allow_warnings=True)
