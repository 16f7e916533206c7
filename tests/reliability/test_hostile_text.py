"""Fuzzed slash command text through the real ``/quiz`` and ``/bandwidth`` parsers, 10,000 each.

Every text is either a command or a clean refusal: a ``UserError`` whose message and usage are
what the Slack handler acknowledges with, short, and free of tracebacks. Nothing else may escape.
The same strategies go through the Bolt app over HTTP in test_hostile_slack.py (fewer cases).
Question files are fuzzed by tests/bank/test_loader.py (the loader) and test_hostile_files.py
(``quizbot validate``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.adapters.slack import render
from bot.bandwidth import BandwidthError, Estimate
from bot.chat import Charts
from bot.chat._charts import request_of
from bot.chat.grammar import BANDWIDTH, QUIZ, BadInput, Call, Form, read_text, usage
from bot.text import lines
from tests.reliability.fuzz import bandwidth_text, quiz_text

pytestmark = pytest.mark.slow

# 10,000 texts per parser, drawn as batches: per text, hypothesis's own bookkeeping would cost
# more than the parsing, and a failing batch still shrinks to one small text.
BATCH = 100
CASES = 10_000
FUZZ = settings(
    max_examples=CASES // BATCH,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Slack shows at most this much of an ack's text; a usage message must fit.
ACK_TEXT_MAX = 3000
CHARTS = Charts.load()


def clean(text: str) -> bool:
    """Return whether a reply shows no traceback or exception name."""
    return not any(mark in text for mark in ("Traceback", 'File "', "Error:", "Exception"))


def ack_text(error: BadInput) -> str:
    """Return what the Slack handler acknowledges a refusal with: the reason and the usage."""
    return render.mrkdwn(lines(error.text, usage(error.grammar, Form.TEXT, error.verb)))


def check_quiz(text: str) -> None:
    """Read one text as the /quiz handler does and check what comes back."""
    try:
        command: object = read_text(QUIZ, text)
    except BadInput as exc:
        command = exc
    if not isinstance(command, BadInput):
        assert isinstance(command, Call) and command.grammar is QUIZ
        return
    assert command.grammar is QUIZ
    assert 0 < len(command.message) <= 200 and clean(command.message)
    assert len(ack_text(command)) <= ACK_TEXT_MAX


def check_bandwidth(text: str) -> None:
    """Estimate one text as the /bandwidth handler does and check what comes back."""
    try:
        result: object = CHARTS.estimate(request_of(read_text(BANDWIDTH, text).args))
    except BandwidthError as exc:
        result = exc
    if isinstance(result, BandwidthError):
        refusal = BadInput(result.text, grammar=BANDWIDTH, verb=BANDWIDTH.verbs[0])
        assert clean(result.message)
        ack = ack_text(refusal)
        assert len(ack) <= ACK_TEXT_MAX and clean(ack)
        return
    assert isinstance(result, Estimate) and result.results


@FUZZ
@given(texts=st.lists(quiz_text, min_size=BATCH, max_size=BATCH))
def test_quiz_text_is_a_command_or_a_usage_message(texts: list[str]) -> None:
    for text in texts:
        check_quiz(text)


@FUZZ
@given(texts=st.lists(bandwidth_text, min_size=BATCH, max_size=BATCH))
def test_bandwidth_text_is_an_estimate_or_a_usage_message(texts: list[str]) -> None:
    for text in texts:
        check_bandwidth(text)
