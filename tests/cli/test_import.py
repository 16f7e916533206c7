"""``quizbot import opentdb`` run as a subprocess, the way a user runs it."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.bank.loader import load_bank

REPO = Path(__file__).resolve().parents[2]


def quizbot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "bot", "import", "opentdb", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def entry(question: str, correct: str, wrong: list[str], kind: str = "multiple") -> dict[str, Any]:
    return {
        "type": kind,
        "difficulty": "medium",
        "category": "Science: Computers",
        "question": question,
        "correct_answer": correct,
        "incorrect_answers": wrong,
    }


ENTRIES = [
    entry("What does &quot;NIC&quot; stand for?", "Network Interface Card", ["A", "B", "C"]),
    entry("RDMA bypasses the kernel.", "True", ["False"], kind="boolean"),
    entry("Too long?", "x" * 80, ["short", "shorter", "shortest"]),
    entry("What does &quot;NIC&quot; stand for?", "Network Interface Card", ["A", "B", "C"]),
    {"type": "multiple"},
]


def write_response(path: Path, entries: list[dict[str, Any]], code: int = 0) -> Path:
    path.write_text(json.dumps({"response_code": code, "results": entries}), encoding="utf-8")
    return path


def test_import_writes_valid_files_and_reports_skips(tmp_path: Path) -> None:
    source = write_response(tmp_path / "trivia.json", ENTRIES)
    out = tmp_path / "out"
    run = quizbot(str(source), "--out", str(out), "--tag", "trivia", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "imported 2 question(s)" in run.stdout
    assert "3 skipped" in run.stdout
    skips = run.stderr.splitlines()
    assert len(skips) == 3, run.stderr
    assert "result 3: skipped: choice too long for a button" in skips[0]
    assert "result 4: skipped: duplicate of result 1" in skips[1]
    assert "result 5: skipped: malformed entry" in skips[2]
    assert all(line.startswith(f"{source}: ") for line in skips)

    bank = load_bank([out])
    assert len(bank) == 2
    nic = next(q for q in bank if q.text == 'What does "NIC" stand for?')
    assert nic.answer_choice.text == "Network Interface Card"
    assert nic.tags == ("trivia", "science-computers")
    boolean = next(q for q in bank if q.text == "RDMA bypasses the kernel.")
    assert [c.text for c in boolean.choices] == ["True", "False"]


def test_near_duplicate_stems_are_reported_and_imports_are_not_alike_otherwise(
    tmp_path: Path,
) -> None:
    entries = [
        entry("What does the acronym CPU stand for?", "Central Processing Unit", ["A", "B", "C"]),
        entry(
            "What does the acronym CPU stand for in computing?",
            "Central Processing Unit",
            ["D", "E", "F"],
        ),
        entry("In which year did the Berlin Wall fall?", "1989", ["1987", "1991", "1985"]),
        entry("The logo for Snapchat is a bell.", "False", ["True"], kind="boolean"),
        entry("Linux was first released in 1991.", "True", ["False"], kind="boolean"),
    ]
    source = write_response(tmp_path / "trivia.json", entries)
    out = tmp_path / "out"
    run = quizbot(str(source), "--out", str(out), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "imported 5 question(s)" in run.stdout
    notes = run.stderr.splitlines()
    assert len(notes) == 1, run.stderr
    assert notes[0].startswith(f"{source}: note: what-does-the-acronym-cpu-stand-for-in-computing-")
    assert "asks nearly what what-does-the-acronym-cpu-stand-for-" in notes[0]
    # The linter agrees: the one real pair and nothing the importer's own wording made alike,
    # and no length cue from "False" being one letter longer than "True".
    from bot.bank.lint import lint

    report = lint(load_bank([out]).questions)
    alike = [f for f in report.findings if f.rule == "near-duplicate"]
    assert {f.question_id for f in alike} == {
        next(q.id for q in load_bank([out]) if q.text.endswith("in computing?"))
    }
    binary = {q.id for q in load_bank([out]) if len(q.choices) == 2}
    assert len(binary) == 2
    assert not [f for f in report.findings if f.rule == "length-cue" and f.question_id in binary]


def test_rerun_is_idempotent_and_never_overwrites_a_changed_file(tmp_path: Path) -> None:
    source = write_response(tmp_path / "trivia.json", ENTRIES[:2])
    out = tmp_path / "out"
    assert quizbot(str(source), "--out", str(out), cwd=tmp_path).returncode == 0
    files = sorted(out.iterdir())
    before = {p: p.read_text() for p in files}

    again = quizbot(str(source), "--out", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "imported 0 question(s)" in again.stdout
    assert "2 already there" in again.stdout
    assert {p: p.read_text() for p in sorted(out.iterdir())} == before

    edited = files[0]
    edited.write_text(before[edited] + "# reviewed by hand\n")
    third = quizbot(str(source), "--out", str(out), cwd=tmp_path)
    assert third.returncode == 0
    assert "exists with different content; not overwritten" in third.stderr
    assert edited.read_text().endswith("# reviewed by hand\n")


def test_base64_response_and_default_output_folder(tmp_path: Path) -> None:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    raw = entry("Which link is faster: NDR or HDR?", "NDR", ["HDR", "EDR", "FDR"])
    encoded = {k: ([b64(x) for x in v] if isinstance(v, list) else b64(v)) for k, v in raw.items()}
    source = write_response(tmp_path / "b64.json", [encoded])
    run = quizbot(str(source), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "encoding base64" in run.stdout
    (question,) = load_bank([tmp_path / "imported-questions"])
    assert question.text == "Which link is faster: NDR or HDR?"
    assert question.answer_choice.text == "NDR"


@pytest.mark.parametrize(
    ("entries", "code", "message"),
    [
        pytest.param([], 1, "response_code 1 (no results", id="response-code"),
        pytest.param([ENTRIES[2]], 0, "choice too long", id="all-skipped"),
        pytest.param([], 0, "imported 0 question(s)", id="empty-results"),
    ],
)
def test_nothing_imported_exits_1(
    tmp_path: Path, entries: list[dict[str, Any]], code: int, message: str
) -> None:
    source = write_response(tmp_path / "r.json", entries, code=code)
    run = quizbot(str(source), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 1
    assert message in run.stderr + run.stdout
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        pytest.param(None, (), "cannot read", id="missing-file"),
        pytest.param("{not json", (), "not valid JSON", id="bad-json"),
        pytest.param("[1, 2]", (), "not an Open Trivia DB response", id="not-a-response"),
        pytest.param(b"\xff\xfe", (), "not UTF-8", id="binary"),
        # The review: deeply nested JSON crashed with a RecursionError traceback.
        pytest.param("[" * 100_000 + "]" * 100_000, (), "nested too deeply", id="deep-nesting"),
        pytest.param('{"response_code": 0, "results": []}', ("--tag", "Bad Tag"), "not valid"),
    ],
)
def test_unreadable_or_invalid_input_exits_2(
    tmp_path: Path, content: str | bytes | None, args: tuple[str, ...], message: str
) -> None:
    source = tmp_path / "r.json"
    if isinstance(content, bytes):
        source.write_bytes(content)
    elif content is not None:
        source.write_text(content)
    run = quizbot(str(source), "--out", str(tmp_path / "out"), *args, cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr
