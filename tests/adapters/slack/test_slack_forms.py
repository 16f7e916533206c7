"""Slack's forms beyond the shared scenarios: where the answer to a modal goes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conformance.drivers import SlackDriver, driving
from tests.conformance.test_forms import GOOD
from tests.conftest import FakeClock


@pytest.fixture
async def slack(tmp_path: Path) -> AsyncIterator[SlackDriver]:
    async with driving("slack", tmp_path, FakeClock()) as driver:
        yield driver


async def test_a_form_from_a_channel_the_bot_is_not_in_is_answered_in_its_dms(
    slack: SlackDriver,
) -> None:
    # A slash command works in a private channel the bot was never added to; an ephemeral
    # message there does not.
    slack.standin.private.add(slack.place.channel)
    sent = await slack.add(GOOD, user="admin")
    assert sent.errors == {}
    refused = [c for c in slack.standin.of("chat.postEphemeral") if not c.ok]
    assert refused, "the ephemeral answer was not tried first"
    [told] = [
        c for c in slack.standin.of("chat.postMessage") if c.params["channel"] == slack.uid("admin")
    ]
    assert "gpu-topology-matrix" in told.params["text"] and "next round" in told.params["text"]
    stored = await slack.engine.store.bank_layer(slack.place.platform, slack.place.workspace)
    assert [s.question_id for s in stored.questions] == ["gpu-topology-matrix"]
