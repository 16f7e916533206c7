"""``quizbot validate`` run as a subprocess, the way a user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BROKEN = Path("tests/bank/broken")
PROBLEM_LINE = re.compile(r"^(?P<file>[^:]+\.ya?ml):(?P<line>\d+): (?P<message>.+)$")


def quizbot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed ``quizbot`` script when there is one, else ``python -m bot``."""
    script = Path(sys.executable).parent / "quizbot"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bot"]
    base = {k: v for k, v in os.environ.items() if k != "QUIZBOT_QUESTIONS"}
    base["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [*command, "validate", *args],
        cwd=REPO,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def question(qid: str, difficulty: str, tags: list[str]) -> dict[str, object]:
    return {
        "id": qid,
        "question": f"Which statement about {qid} is true?",
        "choices": {"A": "The right one", "B": "A wrong one", "C": "Another wrong one"},
        "answer": "A",
        "explanation": {
            "short": "A is right.",
            "full": "A is right, and here is why at length.",
            "why_not": {"B": "B is wrong.", "C": "C is wrong."},
        },
        "tags": tags,
        "difficulty": difficulty,
    }


def good_bank(root: Path) -> Path:
    """Write three questions in two topic folders: one alone, two in a list."""
    (root / "01-networking").mkdir(parents=True)
    (root / "02-collectives").mkdir()
    one = question("ib-latency", "easy", ["networking", "rdma"])
    (root / "01-networking" / "01-ib.yaml").write_text(yaml.safe_dump(one, sort_keys=False))
    pair = {
        "questions": [
            question("ring-steps", "hard", ["collectives"]),
            question("tree-depth", "medium", ["collectives", "networking"]),
        ]
    }
    (root / "02-collectives" / "trees.yml").write_text(yaml.safe_dump(pair, sort_keys=False))
    return root


def test_broken_folder_prints_every_problem_and_exits_1() -> None:
    result = quizbot(str(BROKEN))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    parsed = [PROBLEM_LINE.match(line) for line in lines]
    assert all(parsed), [line for line, m in zip(lines, parsed, strict=True) if not m]
    files = {m["file"] for m in parsed if m}
    expected = {str(p) for p in BROKEN.rglob("*.y*ml")} - {str(BROKEN / "duplicate-ids/first.yaml")}
    assert files == expected
    assert f"{BROKEN}/choice-boolean.yaml:8: choice D: yes was read as a boolean" in result.stdout
    assert (
        f"{BROKEN}/unknown-key.yaml:19: unknown key 'tgas'; did you mean 'tags'?" in result.stdout
    )
    assert (
        f"{BROKEN}/duplicate-ids/second.yaml:2: duplicate id 'same-id' "
        f"(first defined at {BROKEN}/duplicate-ids/first.yaml:2)"
    ) in result.stdout
    assert f"{len(lines)} problems in {len(files)} files" in result.stderr
    assert "Traceback" not in result.stderr


def test_one_broken_file_given_by_name() -> None:
    result = quizbot(str(BROKEN / "sixth-choice.yaml"), str(BROKEN / "empty.yaml"))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{BROKEN}/sixth-choice.yaml:10: too many choices (6): at most 5, A to E",
        f"{BROKEN}/empty.yaml:1: file is empty: expected a question or a `questions:` list",
    ]


def test_good_folder_prints_a_summary_and_exits_0(tmp_path: Path) -> None:
    bank = good_bank(tmp_path / "bank")
    result = quizbot(str(bank))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == (
        "ok: 3 questions, 2 topics (folders), 3 tags; easy 1, medium 1, hard 1\n"
    )


def test_single_good_file(tmp_path: Path) -> None:
    bank = good_bank(tmp_path / "bank")
    result = quizbot(str(bank / "01-networking" / "01-ib.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "ok: 1 question, 1 topic (folders), 2 tags; easy 1, medium 0, hard 0\n"


def test_without_paths_checks_the_configured_folders(tmp_path: Path) -> None:
    bank = good_bank(tmp_path / "bank")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "solo.yaml").write_text(yaml.safe_dump(question("solo", "hard", ["storage"])))
    result = quizbot(env={"QUIZBOT_QUESTIONS": f"{bank}:{extra}"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok: 4 questions, 3 topics (folders), 4 tags;")

    (extra / "solo.yaml").write_text("id: [oops\n")
    result = quizbot(env={"QUIZBOT_QUESTIONS": f"{bank}:{extra}"})
    assert result.returncode == 1
    assert result.stdout.startswith(f"{extra / 'solo.yaml'}:1: invalid YAML")


def test_missing_path_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    result = quizbot(str(tmp_path / "nowhere"))
    assert result.returncode == 1
    assert result.stdout == f"{tmp_path / 'nowhere'}:1: no such file or folder\n"
    assert "Traceback" not in result.stderr


def test_a_tab_gets_the_spaces_hint(tmp_path: Path):
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "tab.yaml").write_text('questions:\n  - id: x\n    question: "Q?"\n\tchoices: {A: a}\n')
    result = subprocess.run(
        [sys.executable, "-m", "bot", "validate", str(bank)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{bank / 'tab.yaml'}:4: invalid YAML")
    assert first.endswith("(YAML indents with spaces, never tabs: replace the tab with spaces)")


def test_tracks_are_checked_with_the_bank_and_counted(tmp_path: Path) -> None:
    bank = good_bank(tmp_path / "bank")
    (bank / "tracks").mkdir()
    good = "title: Trees and rings\nunits:\n  - questions: [ring-steps]\n  - tag: networking\n"
    (bank / "tracks" / "rings.yaml").write_text(good)
    result = quizbot(str(bank))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == (
        "ok: 3 questions, 2 topics (folders), 3 tags; easy 1, medium 1, hard 1; 1 track (2 units)\n"
    )

    bad = "title: Broken\nunits:\n  - questions: [ring-step]\n  - tag: storage\n"
    (bank / "tracks" / "broken.yaml").write_text(bad)
    result = quizbot(str(bank))
    assert result.returncode == 1
    where = bank / "tracks" / "broken.yaml"
    assert result.stdout.splitlines() == [
        f"{where}:3: units[1].questions[1]: no question with id 'ring-step' "
        "(did you mean 'ring-steps'?)",
        f"{where}:4: units[2].tag: no question has the tag 'storage'",
    ]
    assert "2 problems in 1 file" in result.stderr

    # A track file named alone is checked against the configured bank.
    result = quizbot(str(where), env={"QUIZBOT_QUESTIONS": str(bank)})
    assert result.returncode == 1
    assert result.stdout.startswith(f"{where}:3: units[1].questions[1]: no question")


def test_a_broken_template_fails_validate_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from bot.bank import templates as T
    from bot.cli.validate import run_validate

    source = T.TEMPLATES_DIR / "04-buffer-allreduce-ring.yaml"
    data = yaml.safe_load(source.read_text())
    data["mistakes"][0]["formula"] = "step - bubble"  # a formula without a plan request
    broken = tmp_path / "templates"
    broken.mkdir()
    (broken / "04-buffer-allreduce-ring.yaml").write_text(yaml.safe_dump(data))
    original = T.load_templates
    monkeypatch.setattr(T, "load_templates", lambda: original(broken))
    bank = Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"
    status = run_validate(argparse.Namespace(paths=[bank], lint=False, database=None))
    out, err = capsys.readouterr()
    assert status == 1
    assert "04-buffer-allreduce-ring.yaml" in out and "a formula needs a plan request" in out
    assert "template is broken" in err and "Traceback" not in err
