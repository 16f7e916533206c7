"""Secrets never reach a log line, whoever logs them."""

from __future__ import annotations

import logging

import pytest

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
