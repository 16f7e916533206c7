"""Plumbing for running ``quizbot play`` as a user would, on a bank and database of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def bank_env(tmp_path: Path, bank_yaml: str) -> dict[str, str]:
    """Return an environment whose question bank is ``bank_yaml`` and whose database is fresh."""
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "q.yaml").write_text(bank_yaml)
    return {
        **os.environ,
        "QUIZBOT_QUESTIONS": str(bank),
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'play.db'}",
    }


def run_play(env: dict[str, str], stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``quizbot play ARGS`` with ``stdin`` piped in; bounded by a timeout."""
    return subprocess.run(
        [sys.executable, "-m", "bot", "play", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
