"""Keep secrets out of every log line, whichever library writes it and at whatever level.

slack_sdk logs whole responses at DEBUG (an OAuth exchange carries the new bot token) and
aiosqlite logs statement parameters (an installation row holds it too). Redacting when a record
is made covers them all, and any handler, without trusting each library to be careful.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

# Slack's token families: bot, user, app-level, refresh and the rest.
TOKEN = re.compile(r"\b(?:xox[a-z]|xapp)-[A-Za-z0-9-]+")
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6

_secrets: set[str] = set()
_installed = False


def redact(text: str) -> str:
    """Return the text with tokens and known secrets replaced."""
    text = TOKEN.sub(REDACTED, text)
    for secret in _secrets:
        text = text.replace(secret, REDACTED)
    return text


def install_redaction(secrets: Iterable[str | None] = ()) -> None:
    """Redact Slack tokens and these secrets from every log record made from now on."""
    global _installed
    # A short value would redact ordinary words; real secrets are long.
    _secrets.update(s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH)
    if _installed:
        return
    _installed = True
    make_record = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:
            return record  # a broken format string is the logging module's to report
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return record

    logging.setLogRecordFactory(factory)
