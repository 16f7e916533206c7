"""Secrets never reach a log line, whoever logs them."""

from __future__ import annotations

import json
import logging

import pytest

from bot.config import Settings
from bot.logs import JsonFormatter, TextFormatter
from bot.observability.redact import REDACTED, install_redaction, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("token xoxb-123-456-abcDEF in a body", f"token {REDACTED} in a body"),
        ("{'access_token': 'xoxp-1-2'}", f"{{'access_token': '{REDACTED}'}}"),
        ("app xapp-1-A0-99-ff", f"app {REDACTED}"),
        ("no secrets here", "no secrets here"),
    ],
)
def test_tokens_are_replaced(text: str, expected: str):
    assert redact(text) == expected


def test_every_record_is_redacted_whatever_its_logger(caplog: pytest.LogCaptureFixture):
    install_redaction(["signing-secret-value", "abc", None])
    caplog.set_level(logging.DEBUG)
    logging.getLogger("slack_sdk.web").debug("response %s", {"access_token": "xoxb-9-9-zz"})
    logging.getLogger("aiosqlite").debug("params %r", ("signing-secret-value",))
    logging.getLogger("bot").info("plain %s", "abc")  # too short to count as a secret
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        f"response {{'access_token': '{REDACTED}'}}",
        f"params ('{REDACTED}',)",
        "plain abc",
    ]


@pytest.mark.parametrize("formatter", [JsonFormatter(), TextFormatter("%(message)s %(user)s")])
def test_tracebacks_arguments_and_extra_fields_are_redacted(formatter: logging.Formatter):
    # The review's reproduction: the traceback ("exc") of a logged exception printed the
    # token and a registered secret in clear.
    install_redaction(["registered-secret-value"])
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    log = logging.getLogger("tests.redact.formatter")
    log.addHandler(handler)
    try:
        try:
            raise RuntimeError(
                "db said: [parameters: ('xoxb-9999-LEAK', 'registered-secret-value')]"
            )
        except RuntimeError:
            log.exception(
                "saving %s failed", "xoxp-1-arg", extra={"user": "registered-secret-value"}
            )
    finally:
        log.removeHandler(handler)
    [record] = records
    line = formatter.format(record)
    for secret in ("xoxb-9999-LEAK", "registered-secret-value", "xoxp-1-arg"):
        assert secret not in line
    assert line.count(REDACTED) >= 4
    assert "RuntimeError" in line  # the traceback is still there, cleaned
    if isinstance(formatter, JsonFormatter):
        data = json.loads(line)
        assert data["user"] == REDACTED and REDACTED in data["exc"]


def test_settings_list_every_secret_for_redaction():
    settings = Settings(
        QUIZBOT_DATABASE_URL="postgresql+asyncpg://bot:db-password-1@db/quiz",
        QUIZBOT_DASHBOARD_SECRET="d" * 40,
        QUIZBOT_TOKEN_KEY="key-one-value, key-two-value",
        SLACK_CLIENT_SECRET="client-secret",
        DISCORD_TOKEN="discord-token",
    )
    assert set(settings.secrets()) == {
        "db-password-1",
        "d" * 40,
        "key-one-value",
        "key-two-value",
        "client-secret",
        "discord-token",
    }
