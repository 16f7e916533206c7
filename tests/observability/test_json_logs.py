"""QUIZBOT_LOG_FORMAT=json: every log line a process writes is one JSON object."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from bot.logs import JsonFormatter


def test_a_process_logs_one_json_object_a_line(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZBOT_")}
    env["QUIZBOT_LOG_FORMAT"] = "json"
    # No server listens on port 9: the store retries, logging a warning each time, then gives up.
    env["QUIZBOT_DATABASE_URL"] = "postgresql+asyncpg://quiz:hunter2@127.0.0.1:9/quizbot"
    result = subprocess.run(
        [sys.executable, "-m", "bot", "--log-level", "INFO", "db", "upgrade"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(records) == 3  # one warning per retry
    for record in records:
        assert set(record) >= {"ts", "level", "logger", "msg"}
        assert datetime.fromisoformat(record["ts"]).tzinfo is not None
        assert record["level"] == "WARNING"
        assert record["logger"] == "bot.storage._retry"
        assert "database connection lost" in record["msg"]
    # The one line that is not a log record is the command's own message to the user.
    assert [line for line in lines if not line.startswith("{")] == [lines[-1]]
    assert "hunter2" not in result.stderr


def test_context_fields_and_tracebacks_are_kept():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord(
            "bot.adapters.slack", logging.ERROR, __file__, 1, "handler failed", None, sys.exc_info()
        )
    record.platform = "slack"
    record.workspace = "T1"
    record.error_id = "e-42"
    data = json.loads(JsonFormatter().format(record))
    assert (data["platform"], data["workspace"], data["error_id"]) == ("slack", "T1", "e-42")
    assert data["msg"] == "handler failed"
    assert "RuntimeError: boom" in data["exc"]
