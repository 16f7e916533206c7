"""Hostile button clicks on Discord: custom_ids naming rounds that are not this server's.

The plain case (a real round clicked from another server) is in
tests/adapters/discord/test_discord_rounds.py; here every variant a forged or stale
``custom_id`` can take. Each gets a private, polite refusal or is ignored, and changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.adapters.discord.app import QuizClient
from bot.engine import QuizEngine
from tests.adapters.discord.conftest import OTHER_GUILD, content_of, is_ephemeral, post_card
from tests.chat.observe import Handled
from tests.reliability.harness import table_rows
from tests.standins.discord_api import DiscordStandIn

HOME = None  # the card's own server


def with_button(custom_id: str) -> list[dict[str, Any]]:
    """Return one action row holding one button with this custom_id."""
    button = {"type": 2, "style": 1, "label": "A. forged", "custom_id": custom_id}
    return [{"type": 1, "components": [button]}]


@pytest.mark.parametrize(
    ("custom_id", "guild", "told"),
    [
        pytest.param("quiz:{round}:A", OTHER_GUILD, "does not exist here", id="other-server"),
        pytest.param("quiz:999999:A", HOME, "does not exist here", id="no-such-round"),
        pytest.param("quiz:{round}:E", HOME, "is not a choice", id="choice-the-question-lacks"),
        pytest.param(
            "quiz:99999999999999999999:A", HOME, "does not exist here", id="round-too-big"
        ),
    ],
)
async def test_forged_custom_ids_are_refused_privately_and_change_nothing(
    bot: QuizClient,
    api: DiscordStandIn,
    engine: QuizEngine,
    caplog: pytest.LogCaptureFixture,
    custom_id: str,
    guild: int | None,
    told: str,
) -> None:
    card, round_id = await post_card(api, engine, tag="storage")
    forged_id = custom_id.format(round=round_id)
    # Discord only delivers custom_ids of buttons on the message, so the forged one is put on
    # a message of its own, as a copied card carrying it would.
    forged = api.add_message(int(card["channel_id"]), {"components": with_button(forged_id)})
    before = await table_rows(engine.store)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        call = await api.interact(api.click(int(forged["id"]), forged_id, user=4242, guild=guild))
    assert is_ephemeral(call), call.body
    assert told in content_of(call), content_of(call)
    assert "Traceback" not in content_of(call)
    assert await table_rows(engine.store) == before  # type: ignore[arg-type]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


@pytest.mark.parametrize(
    "custom_id",
    ["quiz:{round}:a", "quiz:-1:A", "quiz:{round}", "quiz::A", "x" * 100, "", "quiz:{round}:A:B"],
)
async def test_custom_ids_that_are_not_ours_are_ignored(
    bot: QuizClient,
    api: DiscordStandIn,
    engine: QuizEngine,
    caplog: pytest.LogCaptureFixture,
    custom_id: str,
) -> None:
    card, round_id = await post_card(api, engine, tag="storage")
    before = await table_rows(engine.store)  # type: ignore[arg-type]
    handled = Handled(bot.chat)
    forged = api.click(int(card["id"]), custom_id.format(round=round_id), user=4343)
    with caplog.at_level(logging.WARNING):
        await api.send_interaction(forged)
        # The gateway delivers in order: once a later command is answered, the client has
        # read the forged click; had it taken it, the chat core would have started on it first.
        probe = await api.interact(api.command("quiz", "help", user=4343))
    assert is_ephemeral(probe)
    assert handled.started == 1  # the probe alone
    assert [c for c in api.calls if forged["token"] in c.path] == []
    assert await table_rows(engine.store) == before  # type: ignore[arg-type]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
