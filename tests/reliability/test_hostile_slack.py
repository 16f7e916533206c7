"""Hostile requests to the real Bolt app over HTTP: each refused cleanly, nothing changed.

Forged signatures and stale timestamps are covered in tests/adapters/slack/test_slack_rounds.py
(401, nothing recorded); here: replays, oversized and malformed bodies, unknown actions, button
values naming rounds that are not this workspace's, and fuzzed slash command text.
"""

from __future__ import annotations

import io
import json
import logging
import urllib.parse
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.adapters.slack import render
from bot.adapters.slack._replay import ReplayGuard
from bot.adapters.slack.handlers import typed
from bot.bandwidth import BandwidthError
from bot.chat._charts import request_of
from bot.chat.grammar import BANDWIDTH, QUIZ, BadInput, Form, read_text, usage
from bot.errors import UserError
from tests.adapters.slack.conftest import (
    CHANNEL,
    TEAM,
    Harness,
    block_actions,
    signed_headers,
)
from tests.reliability.fuzz import quiz_text
from tests.reliability.harness import table_rows

FORM = "application/x-www-form-urlencoded"
BIG = 5 * 1024 * 1024


async def state(slack: Harness) -> dict[str, Any]:
    """Return every row of every table, and what reached the Slack stand-in."""
    tables = await table_rows(slack.engine.store)  # type: ignore[arg-type]
    # The replay guard remembers every signed request it let through, by design.
    tables.pop("request_claims", None)
    return {
        "tables": tables,
        "posted": len(slack.standin.of("chat.postMessage")),
        "edited": len(slack.standin.of("chat.update")),
        "files": len(slack.standin.uploads),
    }


def traceback_free(*texts: str) -> bool:
    """Return whether none of the texts shows a traceback or an exception's name."""
    return not any("Traceback" in t or "Error:" in t or 'File "' in t for t in texts)


async def raw(slack: Harness, body: bytes | io.BytesIO, headers: dict[str, str]) -> tuple[int, str]:
    """POST bytes as they are to the app."""
    async with slack.session.post(
        slack.url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(20)
    ) as resp:
        return resp.status, await resp.text()


def click_form(payload: Any) -> str:
    """Return a block_actions form body carrying any payload (JSON-encoded)."""
    return urllib.parse.urlencode({"payload": json.dumps(payload)})


def with_action(round_id: int, **changes: Any) -> dict[str, Any]:
    """Return a click payload on the round with the first action's fields changed."""
    payload = block_actions(round_id, "A", user="UHOSTILE")
    payload["actions"][0].update(changes)
    return payload


def without(payload: dict[str, Any], key: str) -> dict[str, Any]:
    """Return the payload without one key."""
    return {k: v for k, v in payload.items() if k != key}


# Each case builds a signed body (content type, body) from the open round's id; the app must
# answer one of the statuses, say nothing that shows a traceback, and change nothing.
BODIES: list[Any] = [
    pytest.param(lambda r: ("application/json", "{not json"), (400, 401, 404), id="broken-json"),
    pytest.param(lambda r: ("application/json", "[1, 2"), (400, 401, 404), id="cut-json"),
    pytest.param(lambda r: ("application/json", "null"), (400, 401, 404), id="json-null"),
    pytest.param(lambda r: ("application/json", '"event"'), (400, 401, 404), id="json-string"),
    pytest.param(
        lambda r: ("application/json", json.dumps({"type": "event_callback", "event": 3})),
        (200, 400, 401, 404),
        id="event-not-an-object",
    ),
    pytest.param(lambda r: (FORM, "payload=%7Bnot-json"), (400, 401, 404), id="form-bad-json"),
    pytest.param(lambda r: (FORM, "payload=%5B%5D"), (400, 401, 404), id="form-json-list"),
    pytest.param(lambda r: (FORM, "payload="), (400, 401, 404), id="form-empty-payload"),
    pytest.param(lambda r: (FORM, "%%%&&&==="), (400, 401, 404), id="form-garbage"),
    pytest.param(lambda r: (FORM, "command=%2Fquiz"), (200, 400, 404), id="command-no-fields"),
    pytest.param(lambda r: ("text/plain", "\x00\xff" * 50), (400, 401, 404), id="binary"),
    pytest.param(
        lambda r: (FORM, click_form(with_action(r, action_id="quiz_answer_Z"))),
        (404,),
        id="unknown-action-id",
    ),
    pytest.param(
        lambda r: (FORM, click_form(with_action(r, action_id="admin_reset_scores"))),
        (404,),
        id="foreign-action-id",
    ),
    pytest.param(
        lambda r: (FORM, click_form({**block_actions(r, "A", user="U1"), "actions": []})),
        (200, 400, 404),
        id="no-actions",
    ),
    pytest.param(
        lambda r: (FORM, click_form(without(block_actions(r, "A", user="U1"), "user"))),
        (200, 404),
        id="click-without-user",
    ),
    pytest.param(
        lambda r: (FORM, click_form(without(block_actions(r, "A", user="U1"), "channel"))),
        (200, 404),
        id="click-without-channel",
    ),
]


@pytest.mark.parametrize(("build", "statuses"), BODIES)
async def test_malformed_bodies_are_refused_and_change_nothing(
    slack: Harness, caplog: pytest.LogCaptureFixture, build: Any, statuses: tuple[int, ...]
) -> None:
    round_id, _ts = await slack.open_card()
    before = await state(slack)
    content_type, body = build(round_id)
    data = body.encode("utf-8", "surrogateescape")
    # Unsigned (anyone on the internet): refused, and not one error in the log.
    forged = {"Content-Type": content_type, **signed_headers(body, secret="not-the-secret")}
    with caplog.at_level(logging.WARNING):
        status, text = await raw(slack, data, forged)
    assert status in (400, 401), (status, text)
    assert traceback_free(text)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    # Signed (only Slack, or whoever has the secret): still never a 500 or a traceback.
    signed = {"Content-Type": content_type, **signed_headers(body)}
    status, text = await raw(slack, data, signed)
    assert status in statuses, (status, text)
    assert traceback_free(text)
    assert await state(slack) == before


@pytest.mark.parametrize(
    ("value", "team"),
    [
        pytest.param("{round}:A", "T0OTHER", id="round-of-another-workspace"),
        pytest.param("999999:A", TEAM, id="round-that-does-not-exist"),
        pytest.param("{round}:Z", TEAM, id="choice-the-question-lacks"),
        pytest.param("{round}:", TEAM, id="no-choice"),
        pytest.param("abc:A", TEAM, id="round-not-a-number"),
        pytest.param("-1:A", TEAM, id="negative-round"),
        pytest.param("9" * 40 + ":A", TEAM, id="round-too-big-for-the-database"),
        pytest.param("²:A", TEAM, id="superscript-digit"),
        pytest.param("{round}:" + "A" * 3000, TEAM, id="long-choice"),
        pytest.param("", TEAM, id="empty-value"),
    ],
)
async def test_button_values_that_name_no_round_here_are_refused_politely(
    slack: Harness, caplog: pytest.LogCaptureFixture, value: str, team: str
) -> None:
    round_id, _ts = await slack.open_card()
    before = await state(slack)
    payload = block_actions(
        round_id, "A", user="UHOSTILE", team=team, response_url=slack.standin.response_url("h")
    )
    # A button sent before the ids carried the round (``quiz_answer_A``) names it in its value.
    payload["actions"][0].update(action_id="quiz_answer_A", value=value.format(round=round_id))
    body = click_form(payload)
    with caplog.at_level(logging.WARNING):
        reply = await slack.post(body, FORM)
        assert reply.status == 200
        await slack.standin.wait_calls("response_url")
    (answer,) = slack.standin.responses_to("h")
    assert answer["response_type"] == "ephemeral"
    assert not answer["text"].startswith("Sorry, something went wrong"), answer["text"]
    assert traceback_free(answer["text"])
    assert await state(slack) == before
    assert slack.standin.of("chat.postEphemeral") == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"X-Slack-Request-Timestamp": "abc"}, id="timestamp-not-a-number"),
        pytest.param({"X-Slack-Request-Timestamp": "9" * 5000}, id="timestamp-5000-digits"),
        pytest.param({"X-Slack-Request-Timestamp": "-1"}, id="timestamp-negative"),
        pytest.param({"X-Slack-Request-Timestamp": ""}, id="timestamp-empty"),
        pytest.param({"X-Slack-Signature": "v0=zz"}, id="signature-not-hex"),
        pytest.param({"X-Slack-Signature": "v1=" + "0" * 64}, id="signature-other-version"),
    ],
)
async def test_a_malformed_signature_header_is_401_with_one_quiet_line(
    slack: Harness, caplog: pytest.LogCaptureFixture, headers: dict[str, str]
) -> None:
    # The review's reproduction: X-Slack-Request-Timestamp "abc" (or 5000 digits) with a bogus
    # signature made Bolt raise ValueError: a 500 and an ERROR traceback every time.
    round_id, _ts = await slack.open_card()
    before = await state(slack)
    body = click_form(block_actions(round_id, "A", user="U1"))
    sent = {"Content-Type": FORM, **signed_headers(body), **headers}
    with caplog.at_level(logging.INFO):
        status, text = await raw(slack, body.encode(), sent)
    assert status == 401, (status, text)
    assert traceback_free(text)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text
    assert await state(slack) == before


async def test_a_body_of_several_megabytes_is_refused_before_it_is_read(slack: Harness) -> None:
    round_id, _ts = await slack.open_card()
    before = await state(slack)
    payload = block_actions(round_id, "A", user="UBIG")
    payload["padding"] = "x" * BIG
    body = click_form(payload)
    headers = {"Content-Type": FORM, **signed_headers(body)}
    status, text = await raw(slack, io.BytesIO(body.encode()), headers)
    assert status == 413 and traceback_free(text)
    assert await state(slack) == before


async def test_a_replayed_click_is_refused(slack: Harness) -> None:
    round_id, _ts = await slack.open_card()
    body = click_form(
        block_actions(round_id, "A", user="U1", response_url=slack.standin.response_url("r"))
    )
    headers = {"Content-Type": FORM, **signed_headers(body)}
    assert (await raw(slack, body.encode(), headers))[0] == 200
    await slack.standin.wait_calls("chat.postEphemeral")
    before = await state(slack)
    status, text = await raw(slack, body.encode(), headers)
    assert status == 401 and traceback_free(text)
    assert await state(slack) == before
    assert len(slack.standin.of("chat.postEphemeral")) == 1
    assert slack.standin.responses_to("r") == []


async def test_a_replayed_command_cannot_close_a_newer_round(slack: Harness) -> None:
    await slack.open_card()
    form = {
        "team_id": TEAM,
        "channel_id": CHANNEL,
        "user_id": "U1",
        "command": "/quiz",
        "text": "close",
        "response_url": slack.standin.response_url("close"),
        "trigger_id": "t",
    }
    body = urllib.parse.urlencode(form)
    headers = {"Content-Type": FORM, **signed_headers(body)}
    assert (await raw(slack, body.encode(), headers))[0] == 200
    await slack.standin.wait_calls("chat.postMessage", 2)  # the card, then the thread reply
    newer, _ts = await slack.open_card()
    # The same bytes again, inside Bolt's 5 minutes: a captured request replayed.
    status, _text = await raw(slack, body.encode(), headers)
    assert status == 401
    assert not (await slack.engine.get_round(newer)).is_closed


# ---------------------------------------------------------------- fuzzed command text over HTTP

HTTP_EXAMPLES = 120


USAGE = render.mrkdwn(usage(QUIZ, Form.TEXT))


def refused_quiz(text: str) -> UserError | None:
    """Return the error the /quiz grammar gives the text, or None when it is a command.

    The grammar reads the line as Slack's ingress hands it on: its mentions (``<@U0|ada>``)
    in the neutral form (``<@U0>``), which is what a refusal quotes back.
    """
    try:
        read_text(QUIZ, typed(text))
    except BadInput as exc:
        return exc
    return None


@settings(
    max_examples=HTTP_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=quiz_text)
@example(text="<@U0|>")  # a mention with an empty label, quoted back as the grammar read it
async def test_fuzzed_quiz_text_over_http_gets_usage_and_changes_nothing(
    slack: Harness, text: str
) -> None:
    error = refused_quiz(text)
    if error is None:
        return  # a real command; its effects are tested elsewhere
    before = await state(slack)
    reply = await slack.command(text)
    assert reply.status == 200
    assert render.mrkdwn(error.text) in reply.text and USAGE in reply.text
    assert traceback_free(reply.text)
    assert await state(slack) == before


@settings(
    max_examples=HTTP_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=st.text(max_size=60))
async def test_fuzzed_bandwidth_text_over_http_gets_usage_and_changes_nothing(
    slack: Harness, text: str
) -> None:
    try:
        slack.bot.chat.charts.estimate(request_of(read_text(BANDWIDTH, text).args))
    except BandwidthError:
        pass
    else:
        return  # a real request; its table and chart are tested elsewhere
    before = await state(slack)
    reply = await slack.command(text, name="/bandwidth")
    assert reply.status == 200 and reply.text
    assert traceback_free(reply.text)
    assert await state(slack) == before


# Replays across replicas, redelivered events and the retry header: tests/reliability/test_replay.py


def test_the_replay_memory_forgets_after_its_window_and_past_its_capacity() -> None:
    now = [0.0]
    guard = ReplayGuard(window=300, capacity=3, clock=lambda: now[0])
    assert guard.first_time("a") and not guard.first_time("a")
    now[0] = 301  # past the window Bolt refuses the timestamp anyway
    assert guard.first_time("a")
    for sig in ("b", "c", "d"):
        assert guard.first_time(sig)
    assert guard.first_time("a")  # the oldest went when the memory was full
    assert not guard.first_time("d")


async def test_a_request_is_remembered_until_its_signed_time_runs_out() -> None:
    # The review: the memory ran from receipt, so a request stamped ahead of this replica's
    # clock was still valid (Bolt accepts |now - ts| <= 300) after the guard forgot it.
    from datetime import UTC, datetime

    from slack_bolt.request.async_request import AsyncBoltRequest
    from slack_bolt.response import BoltResponse

    now = [0.0]
    wall = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    guard = ReplayGuard(window=330, clock=lambda: now[0], utc_clock=lambda: wall)
    ahead = int(wall.timestamp()) + 250  # Slack's clock 250 s ahead of this replica's

    async def handled() -> BoltResponse:
        return BoltResponse(status=200, body="")

    def request() -> AsyncBoltRequest:
        return AsyncBoltRequest(
            body="command=%2Fquiz&text=next",
            headers={
                "x-slack-signature": "v0=" + "a" * 64,
                "x-slack-request-timestamp": str(ahead),
            },
        )

    assert (await guard.middleware(request(), handled)).status == 200
    now[0] = 331  # past the receipt window; Bolt still takes the stamp until 550 s from now
    assert (await guard.middleware(request(), handled)).status == 401
    now[0] = 581  # past the signed time and the margin: forgotten
    assert guard.first_time("signature:v0=" + "a" * 64)
