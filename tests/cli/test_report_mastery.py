"""``quizbot report mastery`` as a user runs it: a subprocess on its own bank and database."""

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

from bot.engine.learning import CardKey, Grade, Memory, Review, Study
from bot.storage import open_store

QUESTION = """\
- id: {qid}
  question: Which one is {qid}?
  choices: {{A: first answer, B: second answer, C: third answer, D: fourth answer}}
  answer: A
  explanation: {{short: Because., full: Because it is.}}
"""
TOPICS = {"01-links": ["ib-rate", "nvlink"], "02-collectives": ["ring", "tree", "nvls"]}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    bank = tmp_path / "bank"
    for topic, ids in TOPICS.items():
        (bank / topic).mkdir(parents=True)
        body = "".join(QUESTION.format(qid=q) for q in ids)
        (bank / topic / "q.yaml").write_text("questions:\n" + body)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("QUIZBOT_", "SLACK_"))}
    return {
        **clean,
        "QUIZBOT_QUESTIONS": str(bank),
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'm.db'}",
    }


async def answer(url: str, answers: dict[str, list[str]], platform: str = "slack") -> None:
    """Each person answers these questions just now (right or wrong: recall is 1 at once)."""
    store = await open_store(url)
    try:
        memory = Memory()
        now = datetime.now(UTC)
        for user, ids in answers.items():
            for qid in ids:
                key = CardKey(platform, "T07TEAM", user, qid)
                review = Review(at=now, correct=True, rating=Grade.GOOD)
                await store.study(Study(key, review, memory), choice="A")
    finally:
        await store.close()


def report(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", "report", "mastery", "--workspace", "T07TEAM", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_mastery_per_person_topic_and_team(env: dict[str, str]):
    await answer(
        env["QUIZBOT_DATABASE_URL"],
        {"U07ABC123": ["ib-rate", "ring", "tree"], "U07DEF456": ["nvlink", "ib-rate"]},
    )
    out = report(env, "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    people = {p["user"]: {t["topic"]: t for t in p["topics"]} for p in doc["people"]}
    assert people["U07ABC123"]["01-links"]["mastery"] == pytest.approx(0.5)
    assert people["U07ABC123"]["02-collectives"]["mastery"] == pytest.approx(2 / 3, abs=1e-4)
    assert people["U07DEF456"]["01-links"] == {
        "topic": "01-links",
        "questions": 2,
        "seen": 2,
        "mastery": 1.0,
    }
    assert people["U07DEF456"]["02-collectives"]["seen"] == 0
    team = {t["topic"]: t for t in doc["team"]}
    assert team["01-links"]["mastery"] == pytest.approx(0.75)
    assert (team["02-collectives"]["people"], team["02-collectives"]["learners"]) == (2, 1)

    rows = list(csv.DictReader(io.StringIO(report(env, "--format", "csv").stdout)))
    assert len(rows) == 4
    assert rows[0].keys() == {"user", "name", "topic", "questions", "seen", "mastery"}

    table = report(env).stdout.splitlines()
    assert table[0].split() == ["person", "01-links", "02-collectives"]
    assert table[1].split() == ["U07ABC123", "50%", "67%"]
    assert table[3].split() == ["team", "75%", "33%"]

    mine = json.loads(report(env, "--format", "json", "--user", "U07DEF456").stdout)
    assert [p["user"] for p in mine["people"]] == ["U07DEF456"]


async def test_every_chat_platform_and_the_terminal_can_be_reported(env: dict[str, str]):
    await answer(env["QUIZBOT_DATABASE_URL"], {"29:1ada": ["ib-rate"]}, platform="teams")
    teams = json.loads(report(env, "--platform", "teams", "--format", "json").stdout)
    assert [p["user"] for p in teams["people"]] == ["29:1ada"]
    slack = report(env, "--platform", "slack")
    assert "Nobody has answered a question here yet." in slack.stdout
    console = report(env, "--platform", "console")
    assert console.returncode == 0, console.stderr


def test_nobody_yet_and_a_missing_workspace(env: dict[str, str]):
    empty = report(env)
    assert empty.returncode == 0 and "Nobody has answered a question here yet." in empty.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "bot", "report", "mastery"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "--workspace" in bad.stderr and "Traceback" not in bad.stderr


async def test_people_by_name_where_one_is_stored(env: dict[str, str]):
    from datetime import UTC, datetime

    from bot.engine.names import NameKind

    await answer(env["QUIZBOT_DATABASE_URL"], {"U07ABC123": ["ib-rate"], "U07DEF456": ["ring"]})
    store = await open_store(env["QUIZBOT_DATABASE_URL"])
    try:
        at = datetime(2026, 12, 1, tzinfo=UTC)
        await store.save_names("slack", "T07TEAM", {(NameKind.USER, "U07ABC123"): "Ada L."}, at)
    finally:
        await store.close()
    table = report(env).stdout
    assert "Ada L." in table and "U07ABC123" not in table
    assert "U07DEF456" in table  # no name stored: the id, rather than nothing
    rows = list(csv.DictReader(io.StringIO(report(env, "--format", "csv").stdout)))
    assert {(r["user"], r["name"]) for r in rows} == {
        ("U07ABC123", "Ada L."),
        ("U07DEF456", "U07DEF456"),
    }
