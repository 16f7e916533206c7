"""``quizbot validate --lint --database URL``: labels the answers contradict, as warnings."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import main
from bot.engine import Place
from bot.engine.analytics import MIN_ANSWERS
from bot.engine.model import AnswerRecord
from bot.storage import open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FIXTURE = Path(__file__).resolve().parents[1] / "bank" / "lint" / "clean.yaml"


async def answered(url: str, question_id: str, right: int, wrong: int) -> None:
    """Record ``right`` right and ``wrong`` wrong answers to one question."""
    store = await open_store(url)
    try:
        rnd = await store.create_round(
            Place("slack", "T1", "C1"), question_id, opened_at=T0, closes_at=None
        )
        for i in range(right + wrong):
            ok = i < right
            await store.record_answer(
                AnswerRecord(rnd.id, f"U{i}", "B" if ok else "A", ok, 3 if ok else 0, T0, 900)
            )
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("right", "wrong", "warned"),
    [
        (MIN_ANSWERS, 0, "labelled medium, but 100% of 20 answers were right, which is easy"),
        (5, MIN_ANSWERS - 5, "labelled medium, but 25% of 20 answers were right, which is hard"),
        (12, 8, None),  # 60%: medium, as labelled
        (MIN_ANSWERS - 1, 0, None),  # 19 answers: too few to judge
    ],
)
async def test_mislabels_warn_at_the_difficulty_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    right: int,
    wrong: int,
    warned: str | None,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"
    await answered(url, "lint-clean", right, wrong)
    bank = tmp_path / "bank"
    bank.mkdir()
    text = FIXTURE.read_text().replace(
        "tags: [lint-fixture]", "tags: [lint-fixture]\ndifficulty: medium"
    )
    (bank / "q.yaml").write_text(text)
    line = text.splitlines().index("difficulty: medium") + 1
    got = await asyncio.to_thread(main, ["validate", "--lint", "--database", url, str(bank)])
    out = capsys.readouterr().out.splitlines()
    assert got == 0
    found = [o for o in out if o.endswith("[difficulty-label]")]
    if warned is None:
        assert found == []
        assert out[-1].endswith("; 0 mislabelled by their answers")
    else:
        (one,) = found
        assert one.startswith(f"{bank / 'q.yaml'}:{line}: warning: {warned}: label it ")
        assert out[-1].endswith("; 1 mislabelled by their answers")


def test_database_needs_lint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--database", "sqlite+aiosqlite:///x.db", str(FIXTURE)]) == 2
    assert "--database needs --lint" in capsys.readouterr().err


def test_an_unusable_database_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'a.db'}"
    assert main(["validate", "--lint", "--database", url, str(FIXTURE)]) == 1
    captured = capsys.readouterr()
    assert "quizbot validate:" in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert "difficulty-label" not in captured.out
