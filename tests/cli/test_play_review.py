"""``quizbot play --review`` run as a subprocess, on a database prepared by earlier sessions."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.engine.learning import CardKey
from bot.storage import open_store
from tests.cli.conftest import bank_env, run_play

BANK = """\
questions:
  - id: bf16-bytes
    question: How many bytes does one bf16 value take?
    choices: {A: "1", B: "2", C: "4"}
    answer: B
    explanation:
      short: Sixteen bits are two bytes.
      full: bfloat16 keeps float32's 8-bit exponent and 7 bits of mantissa in 16 bits.
      why_not: {A: That is fp8 or int8., C: That is fp32.}
    tags: [memory]
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return bank_env(tmp_path, BANK)


def play(env: dict[str, str], stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_play(env, stdin, "--user", "ada", *args)


def make_due(env: dict[str, str]) -> None:
    """Move ada's card for bf16-bytes into the past, as if days had gone by."""

    async def run() -> None:
        store = await open_store(env["QUIZBOT_DATABASE_URL"])
        try:
            key = CardKey("console", "local", "ada", "bf16-bytes")
            card = await store.card(key)
            assert card is not None
            # As if the days to its due date had gone by: the last review moves back as far.
            shift = card.due_at - (datetime.now(UTC) - timedelta(minutes=1))
            assert card.last_review is not None
            moved = replace(card, due_at=card.due_at - shift, last_review=card.last_review - shift)
            assert await store.put_card(moved)
        finally:
            await store.close()

    asyncio.run(run())


def answered(env: dict[str, str]) -> int:
    async def run() -> int:
        store = await open_store(env["QUIZBOT_DATABASE_URL"])
        try:
            rows = await store.score_rows("console", "local", None, user="ada")
            return sum(r.answered for r in rows)
        finally:
            await store.close()

    return asyncio.run(run())


def test_nothing_to_review_on_a_fresh_database(env: dict[str, str]):
    result = play(env, "", "--review")
    assert result.returncode == 0, result.stderr
    assert "Nothing to review yet." in result.stdout
    assert result.stderr == ""


def test_an_answered_question_comes_back_when_due(env: dict[str, str]):
    first = play(env, "a\n", "--count", "1")
    assert "Not this time. You chose A) 1; the answer is B) 2." in first.stdout

    waiting = play(env, "", "--review")
    assert waiting.returncode == 0
    # /quiz review's own words, as in chat.
    assert "Nothing to review right now; your next review is due" in waiting.stdout
    assert "Review: a question due again" not in waiting.stdout

    make_due(env)
    again = play(env, "x\nb\n", "--review")
    assert again.returncode == 0, again.stderr
    out = again.stdout
    assert "Review: a question due again" in out
    assert "How many bytes does one bf16 value take?" in out
    assert "'x' is not a choice: type one of A, B, C" in out
    assert "Right! You chose B) 2." in out
    assert "It comes back" in out
    assert "bfloat16 keeps float32's 8-bit exponent" in out
    assert "C) 4: That is fp32." in out
    # One question was due: the next /quiz review says when the next one is.
    assert "Nothing to review right now; your next review is due" in out

    make_due(env)
    later = play(env, "B\n", "--review")
    assert "Right! You chose B) 2." in later.stdout
    assert "Nothing to review right now; your next review is due" in later.stdout
    assert max(len(line) for line in later.stdout.splitlines()) <= 80
    assert answered(env) == 0  # practice and review answers never count towards scores


def test_quitting_a_review_changes_nothing(env: dict[str, str]):
    play(env, "c\n", "--count", "1")
    make_due(env)
    result = play(env, "q\n", "--review")
    assert result.returncode == 0
    assert "Review: a question due again" in result.stdout
    assert "Traceback" not in result.stderr
    # Still due: the next review asks it again.
    again = play(env, "", "--review")
    assert "Review: a question due again" in again.stdout


def test_review_takes_no_tag(env: dict[str, str]):
    result = play(env, "", "--review", "--tag", "memory")
    assert result.returncode == 2
    assert "--review asks the questions that are due" in result.stderr
