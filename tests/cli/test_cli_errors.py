"""The ``quizbot`` command fails with one line, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


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


def test_an_unreachable_service_is_one_line_and_status_1(tmp_path):
    env = {
        **os.environ,
        "DISCORD_TOKEN": "not-a-real-token",
        "DISCORD_API_URL": f"http://127.0.0.1:{_closed_port()}/api/v10",
        "QUIZBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'q.db'}",
        "QUIZBOT_HEALTH_PORT": "",
    }
    result = subprocess.run(
        [sys.executable, "-m", "bot", "--log-level", "ERROR", "discord"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("quizbot: Cannot connect to host 127.0.0.1")
