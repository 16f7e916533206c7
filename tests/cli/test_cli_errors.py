"""The ``quizbot`` command fails with one line, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_reader_that_goes_away_ends_the_output_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "bandwidth", "140GB", "--over", "all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # like `| head -0`: the reader is gone before the first line is written
    _, err = proc.communicate(timeout=60)
    assert err == b""


BAD_DATABASES = {
    # Three slashes make the path relative: a folder that does not exist here.
    "missing folder": (
        "sqlite+aiosqlite:///no/such/folder/quizbot.db",
        "no/such/folder does not exist (three slashes make a relative path)",
    ),
    "bad scheme": ("mysql://db.example.com/quiz", "must be sqlite+aiosqlite:///FILE"),
    "not a URL": ("quizbot.db", "QUIZBOT_DATABASE_URL is not a database URL"),
    "server down": (
        f"postgresql+asyncpg://quiz:s3cret@127.0.0.1:{_closed_port()}/quiz",
        "Connect call failed",
    ),
}
COMMANDS = {
    "play": ["play"],
    "play --review": ["play", "--review"],
    "report questions": ["report", "questions"],
    "slack": ["slack"],
    "discord": ["discord"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
@pytest.mark.parametrize(("url", "reason"), BAD_DATABASES.values(), ids=BAD_DATABASES.keys())
def test_a_bad_database_url_is_one_line_and_status_2(tmp_path, command, url, reason):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("QUIZBOT_", "SLACK_"))},
        "QUIZBOT_DATABASE_URL": url,
        "SLACK_BOT_TOKEN": "xoxb-7071234567-token",
        "SLACK_SIGNING_SECRET": "0123456789abcdef0123456789abcdef",
        "DISCORD_TOKEN": "MTIzNDU2Nzg5MDEyMzQ1Njc4.bad.database",
    }
    result = subprocess.run(
        [sys.executable, "-m", "bot", "--log-level", "ERROR", *command],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, lines
    assert lines[0].startswith("quizbot: ")
    assert reason in lines[0]
    assert "s3cret" not in result.stderr
    assert not (tmp_path / "no").exists()
