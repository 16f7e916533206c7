"""``quizbot validate --lint`` as a user runs it: warnings, the summary line last, exit status."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path("tests/bank/lint")
WARNING = re.compile(r"^(?P<file>[^:]+\.ya?ml):(?P<line>\d+): warning: .+ \[(?P<rule>[a-z-]+)\]$")
COMPUTED_LINE = re.compile(r"lint: \d+ computed templates, 20 instances each: \d+ warnings?")
SUMMARY = re.compile(
    r"^lint: (?P<questions>\d+) questions? in (?P<topics>\d+) topics?; "
    r"length cue (?P<cue>\d+)% of (?P<text>\d+) text-choice \(limit 30%(?:, binomial test)?\); "
    r"letters (?P<letters>[A-E] \d+%(?: [A-E] \d+%)*) \(limit 35%(?:, binomial test)?\); "
    r"extremes keyed (?P<extremes>\d+)% of (?P<sorted>\d+) sorted-number "
    r"\(band 35-65%(?:, binomial test)?\); "
    r"(?P<warnings>\d+) warnings?(?:; (?P<passed>\d+) limits? passed)?$"
)
EVEN = ("Alpha one", "Bravo two", "Charlie 3", "Delta 4")


def word(i: int) -> str:
    """Return a word of letters only, different for every i, so questions share no words."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return "z" + out


def question(i: int, answer: str, cued: bool) -> dict[str, object]:
    """Return a text-choice question; ``cued`` makes the keyed choice strictly the longest."""
    w = word(i)
    texts = list(EVEN)
    if cued:
        texts["ABCD".index(answer)] += ", the longest one"
    return {
        "id": f"q-{w}",
        "question": f"Which {w}a {w}b {w}c is it?",
        "choices": dict(zip("ABCD", texts, strict=True)),
        "answer": answer,
        "explanation": {
            "short": "Because.",
            "full": f"{w}d {w}e {w}f {w}g.",
            "why_not": {
                k: f"Choice {k} misses {w}h{k}, {w}i{k} and {w}j{k} entirely."
                for k in "ABCD"
                if k != answer
            },
        },
        "references": [{"title": "A paper", "url": "https://arxiv.org/abs/2006.15704"}],
    }


def write_bank(
    root: Path, answers: str, cued: int, folder: str = "01-topic", start: int = 0
) -> Path:
    """Write one question per answer letter into root/folder; the first ``cued`` are cued."""
    (root / folder).mkdir(parents=True, exist_ok=True)
    for i, letter in enumerate(answers, start=start):
        q = question(i, letter, i - start < cued)
        (root / folder / f"{i:03d}.yaml").write_text(yaml.safe_dump(q, sort_keys=False))
    return root


def lint(capsys: pytest.CaptureFixture[str], *paths: Path | str) -> tuple[int, list[str], str]:
    """Run ``quizbot validate --lint PATHS`` through the CLI's main()."""
    status = main(["validate", "--lint", *map(str, paths)])
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err


@pytest.mark.parametrize(
    ("cued", "status"),
    [(6, 0), (7, 1)],  # 6 of 20 is 30%, the limit itself; 7 is 35%
)
def test_length_cue_limit_sets_the_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cued: int, status: int
) -> None:
    bank = write_bank(tmp_path, "ABCD" * 5, cued)
    got, lines, _ = lint(capsys, bank)
    assert got == status
    summary = SUMMARY.match(lines[-1])
    assert summary, lines[-1]
    assert summary["cue"] == str(round(100 * cued / 20))
    assert summary["text"] == "20"
    assert summary["letters"] == "A 25% B 25% C 25% D 25%"
    assert int(summary["warnings"]) == cued  # one length-cue warning per cued question
    cue_lines = [m for m in map(WARNING.match, lines) if m and m["rule"] == "length-cue"]
    assert len(cue_lines) == cued
    errors = [line for line in lines if line.startswith("lint: error:")]
    if status:
        assert errors == [
            "lint: error: the keyed choice is strictly the longest in 7 of 20 text-choice "
            "questions (35.0%), over the 30% limit [length-cue]"
        ]
        assert summary["passed"] == "1"
    else:
        assert errors == []
        assert summary["passed"] is None


@pytest.mark.parametrize(
    ("answers", "status"),
    [
        ("A" * 7 + "B" * 5 + "C" * 4 + "D" * 4, 0),  # 35%: the limit itself
        ("A" * 8 + "B" * 4 + "C" * 4 + "D" * 4, 1),  # 40%
    ],
)
def test_letter_limit_sets_the_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answers: str, status: int
) -> None:
    # Two folders, so no single folder is dominated more than the bank is.
    write_bank(tmp_path, answers[::2], 0, "01-one")
    write_bank(tmp_path, answers[1::2], 0, "02-two", start=100)
    got, lines, _ = lint(capsys, tmp_path)
    assert got == status
    summary = SUMMARY.match(lines[-1])
    assert summary, lines[-1]
    share = answers.count("A") * 5
    assert summary["letters"].startswith(f"A {share}% ")
    assert summary["topics"] == "2"
    folders = [line for line in lines if line.startswith("lint: folder ")]
    assert len(folders) == 2
    assert (lines[-2].startswith("lint: error: A is the key of 8 of 20")) is bool(status)


def test_warnings_alone_exit_0_and_the_summary_is_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = write_bank(tmp_path, "ABCD" * 5, 0)
    crafted = ("all-none-above", "numeric-order", "near-duplicate-full")
    for name in crafted:
        text = (REPO / FIXTURES / f"{name}.yaml").read_text()
        (bank / "02-crafted").mkdir(exist_ok=True)
        (bank / "02-crafted" / f"{name}.yaml").write_text(text)
    got, lines, err = lint(capsys, bank)
    assert got == 0, lines
    assert err == ""
    summary = SUMMARY.match(lines[-1])
    assert summary, lines[-1]
    assert (summary["questions"], summary["topics"]) == ("24", "2")
    assert summary["letters"] == "A 21% B 25% C 29% D 25%"
    assert summary["passed"] is None
    warnings = [m for m in map(WARNING.match, lines) if m]
    assert int(summary["warnings"]) == len(warnings)
    assert sorted(m["rule"] for m in warnings) == [
        "all-none-above",
        "near-duplicate",
        "numeric-order",
    ]
    assert all(m["file"].startswith(str(bank / "02-crafted")) for m in warnings)
    assert "binomial test); letters" not in lines[-1]


def test_the_crafted_files_lint_together(capsys: pytest.CaptureFixture[str]) -> None:
    # Variants of one question: every rule fires, and the copies show as near-duplicates. The
    # give-away word is the exception: with the stem in most files, its words are this set's
    # common vocabulary, which the rule leaves out by design.
    got, lines, _ = lint(capsys, FIXTURES)
    summary = SUMMARY.match(lines[-1])
    assert summary, lines[-1]
    rules = {m["rule"] for m in map(WARNING.match, lines) if m}
    from bot.bank.lint import BANK_RULES, RULES

    assert rules == set(RULES) - {"give-away-word"} - set(BANK_RULES)
    # Most of the variants key B: past the bank-wide letter limit; and none of the eight
    # sorted-number variants keys an end (p = 0.5**8, past the binomial test).
    assert got == 1
    assert summary["passed"] == "2"
    assert summary["sorted"] == "8"


def test_a_schema_error_fails_the_lint_before_any_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = write_bank(tmp_path, "ABCD", 4)
    (bank / "01-topic" / "bad.yaml").write_text("id: bad\nquestion: [unclosed\n")
    got, lines, err = lint(capsys, bank)
    assert got == 1
    assert lines == [
        f"{bank / '01-topic' / 'bad.yaml'}:2: invalid YAML: "
        + lines[0].split("invalid YAML: ", 1)[1]
    ]
    assert "warning" not in "\n".join(lines)
    assert "1 problem in 1 file" in err


def test_plain_validate_is_unchanged_by_the_lint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = write_bank(tmp_path, "ABCD" * 5, 20)
    assert main(["validate", str(bank)]) == 0
    out = capsys.readouterr().out
    assert out == "ok: 20 questions, 1 topic (folders), 0 tags; easy 0, medium 20, hard 0\n"


def test_help_documents_every_rule_and_the_limits(capsys: pytest.CaptureFixture[str]) -> None:
    from bot.bank.lint import RULES

    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    text = capsys.readouterr().out
    for rule in RULES:
        assert rule in text
    assert "over 30% of the text-choice questions" in text
    assert "over 35% of the questions" in text
    assert "docs/writing-questions.md" in text


def test_shipped_bank_lints_from_a_subprocess_with_the_summary_last() -> None:
    script = Path(sys.executable).parent / "quizbot"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bot"]
    env = {k: v for k, v in os.environ.items() if k != "QUIZBOT_QUESTIONS"}
    result = subprocess.run(
        [*command, "validate", "--lint", "questions"],
        cwd=REPO,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = result.stdout.splitlines()
    summary = SUMMARY.match(lines[-1])
    assert summary, result.stdout[-2000:] + result.stderr
    assert "Traceback" not in result.stderr
    # The status follows the bank-wide limits, whatever today's bank scores.
    assert result.returncode == (1 if summary["passed"] else 0)
    for line in lines[:-1]:
        assert (
            WARNING.match(line)
            or line.startswith(("lint: folder ", "lint: error: "))
            or (COMPUTED_LINE.fullmatch(line))
        ), line
    # The computed-question templates' instances are linted too, in one counted line.
    assert sum(bool(COMPUTED_LINE.fullmatch(line)) for line in lines) == 1
