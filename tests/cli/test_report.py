"""``quizbot report questions`` as a user runs it: a subprocess on its own bank and database."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.engine import Place
from bot.engine.model import AnswerRecord
from bot.storage import open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

QUESTION = """\
- id: {qid}
  question: Which one is {qid}?
  choices: {{A: first answer, B: second answer, C: third answer, D: fourth answer}}
  answer: A
  difficulty: {difficulty}
  explanation: {{short: Because., full: Because it is.}}
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    bank = tmp_path / "bank"
    bank.mkdir()
    body = "".join(
        QUESTION.format(qid=q, difficulty=d)
        for q, d in [("easy-one", "easy"), ("hard-one", "hard"), ("unasked", "medium")]
    )
    (bank / "q.yaml").write_text("questions:\n" + body)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("QUIZBOT_", "SLACK_"))}
    return {
        **clean,
        "QUIZBOT_QUESTIONS": str(bank),
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'r.db'}",
    }


async def fill(url: str) -> None:
    """25 answers to "hard-one" in T1, 24 of them right (so it looks easy); one in T2."""
    store = await open_store(url)
    try:
        rnd = await store.create_round(
            Place("slack", "T1", "C1"), "hard-one", opened_at=T0, closes_at=None
        )
        for i in range(25):
            choice = "A" if i < 24 else "B"
            await store.record_answer(
                AnswerRecord(rnd.id, f"U{i}", choice, choice == "A", 3, T0, 1000 + 100 * i)
            )
        other = await store.create_round(
            Place("discord", "G2", "C1"), "easy-one", opened_at=T0, closes_at=None
        )
        await store.record_answer(AnswerRecord(other.id, "U1", "C", False, 0, T0, 500))
    finally:
        await store.close()


def report(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", "report", "questions", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_json_report_with_flags(env: dict[str, str]):
    await fill(env["QUIZBOT_DATABASE_URL"])
    out = report(env, "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["questions"]
    assert rows[0]["id"] == "hard-one"  # flagged first
    hard = rows[0]
    assert (hard["rounds"], hard["answers"], hard["correct"]) == (1, 25, 24)
    assert hard["share_correct"] == pytest.approx(0.96)
    assert hard["choice_shares"] == {"A": 0.96, "B": 0.04, "C": 0.0, "D": 0.0}
    assert hard["median_seconds"] == pytest.approx(2.2)  # the 13th of 1.0 .. 3.4 s
    assert hard["measured"] == "easy"
    flags = {f["flag"] for f in hard["flags"]}
    assert flags == {"label", "dead-distractor"}
    unasked = next(r for r in rows if r["id"] == "unasked")
    assert unasked["answers"] == 0 and unasked["flags"] == []


async def test_workspace_platform_and_asked_filters(env: dict[str, str]):
    await fill(env["QUIZBOT_DATABASE_URL"])
    out = report(env, "--workspace", "G2", "--format", "json", "--asked")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["questions"]
    assert [(r["id"], r["answers"]) for r in rows] == [("easy-one", 1)]
    out = report(env, "--platform", "slack", "--format", "csv")
    table = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["id"]: r["answers"] for r in table} == {
        "hard-one": "25",
        "easy-one": "0",
        "unasked": "0",
    }


async def test_table_report_reads_as_text(env: dict[str, str]):
    await fill(env["QUIZBOT_DATABASE_URL"])
    out = report(env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["question", "label", "asked"]
    assert lines[1].split()[:5] == ["hard-one", "hard>easy", "1", "25", "96%"]
    assert "    ! labelled hard, but 96% of 25 answers were right, which is easy" in lines
    assert lines[-1] == "3 questions, 2 answered, 1 flagged"


def test_bad_format_is_a_usage_error(env: dict[str, str]):
    out = report(env, "--format", "xml")
    assert out.returncode == 2
    assert "invalid choice: 'xml'" in out.stderr
    assert "Traceback" not in out.stderr
