"""``quizbot questions`` and ``import opentdb --workspace`` run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bank.test_workspace import GOOD

REPO = Path(__file__).resolve().parents[2]
BANK = REPO / "tests" / "adapters" / "slack" / "bank"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "QUIZBOT_QUESTIONS": str(BANK),
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'q.db'}",
    }


def quizbot(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def stored(env: dict[str, str], workspace: str = "T1") -> str:
    run = quizbot(env, "questions", "list", "--workspace", workspace)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_add_export_import_round_trip(env: dict[str, str], tmp_path: Path) -> None:
    source = tmp_path / "ours.yaml"
    source.write_text(GOOD, encoding="utf-8")
    run = quizbot(env, "questions", "add", "--workspace", "T1", "--from", str(source))
    assert run.returncode == 0, run.stderr
    assert "our-fabric-uplinks: revision 1" in run.stdout
    assert "our-fabric-uplinks  revision 1  by cli" in stored(env)
    # Adding it again is refused: editing is an import.
    again = quizbot(env, "questions", "add", "--workspace", "T1", "--from", str(source))
    assert again.returncode == 1
    assert "duplicate id 'our-fabric-uplinks'" in again.stderr
    for fmt in ("yaml", "csv"):
        out = tmp_path / f"t1.{fmt}"
        run = quizbot(env, "questions", "export", "--workspace", "T1", "--format", fmt)
        assert run.returncode == 0, run.stderr
        out.write_text(run.stdout, encoding="utf-8", newline="")
        into = f"T2-{fmt}"
        run = quizbot(env, "questions", "import", str(out), "--workspace", into)
        assert run.returncode == 0, run.stderr
        back = quizbot(env, "questions", "export", "--workspace", into, "--format", fmt)
        assert back.stdout == out.read_text(encoding="utf-8")
        # The same file again changes nothing.
        same = quizbot(env, "questions", "import", str(out), "--workspace", into)
        assert "stored 0 revision(s)" in same.stdout
    # An edit is a new revision.
    source.write_text(GOOD.replace("over which links?", "over which links, today?"), "utf-8")
    run = quizbot(env, "questions", "import", str(source), "--workspace", "T1")
    assert "our-fabric-uplinks: revision 2" in run.stdout


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (("  A: Two 400", "  A: " + "x" * 70 + " Two 400"), "at most 75"),
        (("Our training pods", "<!channel> Our training pods"), "mentions and chat markup"),
        (("B: One 100", "B: <@U1> One 100"), "mentions and chat markup"),
        (("answer: A\n", ""), "missing required field 'answer'"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_stored(
    env: dict[str, str], tmp_path: Path, change: tuple[str, str], reason: str
) -> None:
    source = tmp_path / "bad.yaml"
    # With a good question beside it: neither is stored.
    source.write_text(
        "questions:\n"
        + "".join(
            "  - " + text.replace("\n", "\n    ").rstrip() + "\n"
            for text in (GOOD.replace("our-fabric-uplinks", "fine-one"), GOOD.replace(*change))
        ),
        encoding="utf-8",
    )
    run = quizbot(env, "questions", "import", str(source), "--workspace", "T1")
    assert run.returncode == 1
    assert reason in run.stderr and "nothing stored in slack T1" in run.stderr
    assert "no questions of its own" in stored(env)


def test_prompts_build_a_question(env: dict[str, str]) -> None:
    answers = "\n".join(
        [
            "Our training pods reach the storage cluster over which links?",
            "Two 400 Gb/s uplinks per leaf, one to each spine",
            "One 100 Gb/s uplink shared by all leaves of a pod",
            "The out-of-band management network in each rack",
            "",
            "a",
            "Each leaf has two 400 Gb/s uplinks, one per storage spine, so one can fail.",
            "The pod design gives each leaf switch two 400 Gb/s uplinks, one to each of the two "
            "storage spines, so the loss of a spine halves the bandwidth but never cuts a leaf.",
            "A single shared 100 Gb/s uplink would cap checkpoint writes far below the need.",
            "The management network carries BMC traffic only, at 1 Gb/s, never storage data.",
            "prompted-uplinks",
            "storage",
            "NVIDIA DGX SuperPOD reference architecture",
            "https://docs.nvidia.com/dgx-superpod/reference-architecture/latest/index.html",
            "",
            "",
        ]
    )
    run = quizbot(env, "questions", "add", "--workspace", "T1", stdin=answers)
    assert run.returncode == 0, run.stderr
    assert "prompted-uplinks: revision 1" in run.stdout
    cut = quizbot(env, "questions", "add", "--workspace", "T1", stdin="only a question?\n")
    assert cut.returncode == 2 and "ended before the question was complete" in cut.stderr


def test_hide_refuses_an_unknown_id_hides_and_shows_again(env: dict[str, str]) -> None:
    run = quizbot(env, "questions", "hide", "slack-test-checkpoint", "nope", "--workspace", "T1")
    assert run.returncode == 1 and "no question nope" in run.stderr
    assert "none hidden" in stored(env)
    run = quizbot(env, "questions", "hide", "slack-test-checkpoint", "--workspace", "T1")
    assert run.returncode == 0 and "slack-test-checkpoint: hidden" in run.stdout
    assert "slack-test-checkpoint  hidden" in stored(env)
    again = quizbot(env, "questions", "hide", "slack-test-checkpoint", "--workspace", "T1")
    assert again.returncode == 0 and "slack-test-checkpoint: already hidden" in again.stdout
    assert "none hidden" in stored(env, "T2")  # another workspace still asks it
    shown = quizbot(env, "questions", "unhide", "slack-test-checkpoint", "--workspace", "T1")
    assert shown.returncode == 0 and "slack-test-checkpoint: shown again" in shown.stdout
    assert "none hidden" in stored(env)


def test_opentdb_into_a_workspace(env: dict[str, str], tmp_path: Path) -> None:
    response = tmp_path / "trivia.json"
    entry = {
        "type": "multiple",
        "difficulty": "medium",
        "category": "Science: Computers",
        "question": "What does &quot;NIC&quot; stand for?",
        "correct_answer": "Network Interface Card",
        "incorrect_answers": ["Node Index Counter", "New Internet Cable", "Null Input Channel"],
    }
    response.write_text(json.dumps({"response_code": 0, "results": [entry]}), encoding="utf-8")
    args = ("import", "opentdb", str(response), "--workspace", "T1")
    refused = quizbot(env, *args)
    assert refused.returncode == 1 and "--allow-warnings" in refused.stderr
    assert "no questions of its own" in stored(env)
    run = quizbot(env, *args, "--allow-warnings")
    assert run.returncode == 0, run.stderr
    assert "revision 1" in run.stdout and "1 own question(s)" in stored(env)
    both = quizbot(env, *args, "--out", str(tmp_path / "out"))
    assert both.returncode == 2 and "not both" in both.stderr
    assert not (tmp_path / "out").exists()


async def test_proposals_are_listed_approved_and_rejected_from_the_terminal(
    env: dict[str, str],
) -> None:
    from bot.bank.loader import load_bank
    from bot.bank.workspace import WorkspaceBanks, question_yaml
    from bot.storage import open_store
    from tests.conftest import FakeClock, make_question

    store = await open_store(env["QUIZBOT_DATABASE_URL"])
    try:
        banks = WorkspaceBanks(load_bank([BANK]), store)
        for qid in ("theirs-one", "theirs-two"):
            body = question_yaml(make_question(qid))
            await banks.submit(
                "slack", "T1", body, author="U-bob", admin=False, at=FakeClock()(), channel="C1"
            )
    finally:
        await store.close()
    listed = quizbot(env, "questions", "proposals", "--workspace", "T1")
    assert listed.returncode == 0, listed.stderr
    assert "proposal 1  theirs-one  by U-bob" in listed.stdout and "pending" in listed.stdout
    assert "slack T1: 2 proposal(s)" in listed.stdout
    assert (
        "no proposals waiting" in quizbot(env, "questions", "proposals", "--workspace", "T2").stdout
    )
    approved = quizbot(env, "questions", "approve", "1")
    assert approved.returncode == 0, approved.stderr
    assert "theirs-one is live as revision 1" in approved.stdout
    assert "theirs-one  revision 1  by U-bob" in stored(env)
    again = quizbot(env, "questions", "reject", "1", "--reason", "late")
    assert again.returncode != 0 and "was approved already, by cli" in again.stderr
    rejected = quizbot(env, "questions", "reject", "2", "--reason", "Too close to theirs-one.")
    assert rejected.returncode == 0 and "(Too close to theirs-one.)" in rejected.stdout
    unknown = quizbot(env, "questions", "approve", "9")
    assert unknown.returncode != 0 and "There is no proposal 9." in unknown.stderr
    every = quizbot(env, "questions", "proposals", "--workspace", "T1", "--all")
    assert "approved by cli" in every.stdout and "rejected by cli" in every.stdout
    assert "theirs-two" not in stored(env)
