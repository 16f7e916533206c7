"""What ``pip install .`` ships: every package, and the bundled question bank as package data."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_folder_of_code_is_a_listed_package():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {
        ".".join(folder.relative_to(ROOT).parts)
        for folder in (ROOT / "bot").rglob("*")
        if folder.is_dir() and any(folder.glob("*.py"))
    } | {"bot"}
    # Folders of data only are listed too (setuptools ships a folder's files as package data
    # only when the folder is a listed package).
    data = {"bot.questions", "bot.questions.tracks", "bot.bank.templates"}
    data |= {"bot.web.templates", "bot.web.static"}
    assert listed == found | data


def test_play_installs_no_test_tools():
    makefile = (ROOT / "Makefile").read_text()
    play_install = makefile.split("$(PLAY_STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "pip install --quiet --require-hashes -r $(LOCK)\n" in play_install
    assert "pip install --quiet --no-deps -e .\n" in play_install
    assert "[test]" not in play_install and "TEST_LOCK" not in play_install
    runtime = (ROOT / "requirements" / "runtime.txt").read_text()
    assert "\npytest==" not in runtime and "\nplaywright==" not in runtime
    assert "play: $(PLAY_STAMP)\n" in makefile


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from this checkout, offline, the way ``pip install .`` builds it."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("quizbot-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_ships_the_bank(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    bank = {p.relative_to(ROOT).as_posix() for p in (ROOT / "questions").rglob("*.yaml")}
    assert len(bank) > 100
    assert {f"bot/{name}" for name in bank} <= names
    assert "bot/questions/schema.json" in names
    assert "bot/web/templates/me.html" in names
    # The computed-question templates the bot draws from.
    templates = {p.name for p in (ROOT / "bot" / "bank" / "templates").glob("*.yaml")}
    assert len(templates) >= 9
    assert {f"bot/bank/templates/{name}" for name in templates} <= names


@pytest.mark.slow
def test_an_installed_quizbot_plays_from_its_own_bank(wheel: Path, tmp_path: Path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    away = tmp_path / "elsewhere"  # no checkout here: the bank must come from the package
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZBOT_")}
    env["PYTHONPATH"] = str(site)
    where = subprocess.run(
        [sys.executable, "-c", "import bot.config as c; print(c.__file__, c.BUNDLED_QUESTIONS)"],
        cwd=away,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert where == [str(site / "bot" / "config.py"), str(site / "bot" / "questions")]
    played = subprocess.run(
        [sys.executable, "-m", "bot", "play", "--count", "1"],
        cwd=away,
        env=env,
        input="A\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert played.returncode == 0, played.stderr
    assert "Practice 1: a new question" in played.stdout
