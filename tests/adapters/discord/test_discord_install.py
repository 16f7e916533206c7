"""What an installing admin is told about Discord holds: who sees what, and who may change it."""

from __future__ import annotations

import pytest

from bot.engine import QuizEngine
from bot.engine.model import Place
from tests.adapters.discord.conftest import MANAGE_GUILD, content_of, is_ephemeral, running
from tests.standins.discord_api import DiscordStandIn


async def test_anyone_sees_the_quiz_commands_and_the_settings(
    engine: QuizEngine, api: DiscordStandIn
) -> None:
    async with running(engine, api):
        [sync] = api.find("PUT", rf"^/applications/{api.application_id}/commands$")
        (quiz,) = [c for c in sync.body if c["name"] == "quiz"]
        # No default member permission: every member sees /quiz and its subcommands.
        assert quiz.get("default_member_permissions") is None
        call = await api.interact(api.command("quiz", "settings", {}, user=4242, permissions=0))
    assert is_ephemeral(call)
    assert "stays open 10 minutes" in content_of(call)
    assert "Only" not in content_of(call)


@pytest.mark.parametrize(
    ("user", "permissions", "allowed"),
    [(4242, MANAGE_GUILD, False), (9001, 0, True)],
)
async def test_with_admins_only_manage_server_is_not_enough(
    engine: QuizEngine, api: DiscordStandIn, user: int, permissions: int, allowed: bool
) -> None:
    async with running(engine, api, admins=frozenset({"9001"})) as client:
        client.chat.admins_only = True
        options = {"minutes": 3}
        payload = api.command("quiz", "settings", options, user=user, permissions=permissions)
        call = await api.interact(payload)
    here = Place("discord", str(api.guild_id), str(api.channel_ids()[0]))
    minutes = (await engine.channel_settings(here)).round_minutes
    if allowed:
        assert "stays open 3 minutes" in content_of(call)
        assert minutes == 3
    else:
        assert "Only the quiz admins can" in content_of(call)
        assert minutes == 10
