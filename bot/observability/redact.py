"""Keep secrets out of every log line, whichever library writes it and at whatever level.

slack_sdk logs whole responses at DEBUG (an OAuth exchange carries the new bot token), aiosqlite
logs statement parameters, and a database error's text carries the statement's parameters (an
installation row holds the tokens). Two layers keep them out:

- when a record is made, its message (arguments filled in) and its traceback are redacted, so
  every handler, a test's included, sees the clean text;
- quizbot's own formatters (``bot.logs``) redact the whole line they write as well, which also
  covers ``extra=`` fields and anything a handler adds after the record was made.
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
_tracebacks = logging.Formatter()


def redact(text: str) -> str:
    """Return the text with tokens and known secrets replaced."""
    text = TOKEN.sub(REDACTED, text)
    for secret in _secrets:
        text = text.replace(secret, REDACTED)
    return text


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Redact a record's message and traceback in place (the traceback formatted once, here)."""
    try:
        message = record.getMessage()
    except Exception:
        return record  # a broken format string is the logging module's to report
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and not record.exc_text:
        # Formatters print exc_text when it is set, so none of them formats the raw one again.
        record.exc_text = _tracebacks.formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record


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
        return redact_record(make_record(*args, **kwargs))

    logging.setLogRecordFactory(factory)
