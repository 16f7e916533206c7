"""Logging set-up: plain text by default, one JSON object a line with QUIZBOT_LOG_FORMAT=json.

Both formats redact what they write (``bot.observability.redact``): the message, its arguments,
the traceback and every ``extra=`` field.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime

from bot.observability.redact import redact

EXTRA_FIELDS = ("platform", "workspace", "channel", "user", "round_id", "error_id")


class TextFormatter(logging.Formatter):
    """Format a record as one line of text (and its traceback), secrets redacted."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the record's line, redacted."""
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object, secrets redacted in every field."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the record as a JSON line."""
        data: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        for key in EXTRA_FIELDS:
            value = getattr(record, key, None)
            if value is not None:
                data[key] = redact(value) if isinstance(value, str) else value
        trace = record.exc_text
        if not trace and record.exc_info:
            trace = self.formatException(record.exc_info)
        if trace:
            data["exc"] = redact(trace)
        return json.dumps(data, ensure_ascii=False)


def setup_logging(level: str = "INFO") -> None:
    """Configure the root logger once, from QUIZBOT_LOG_FORMAT (``text`` or ``json``)."""
    handler = logging.StreamHandler()
    if os.environ.get("QUIZBOT_LOG_FORMAT", "text").lower() == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
