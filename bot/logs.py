"""Logging set-up: plain text by default, one JSON object a line with QUIZBOT_LOG_FORMAT=json."""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the record as a JSON line."""
        data: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("platform", "workspace", "channel", "user", "round_id", "error_id"):
            value = getattr(record, key, None)
            if value is not None:
                data[key] = value
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def setup_logging(level: str = "INFO") -> None:
    """Configure the root logger once, from QUIZBOT_LOG_FORMAT (``text`` or ``json``)."""
    handler = logging.StreamHandler()
    if os.environ.get("QUIZBOT_LOG_FORMAT", "text").lower() == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
