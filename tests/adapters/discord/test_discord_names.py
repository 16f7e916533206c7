"""Names on Discord: the person, channel and server of each interaction, from the gateway cache."""

from __future__ import annotations

from bot.adapters.discord.app import QuizClient
from bot.engine import QuizEngine
from bot.engine.names import NameKind
from tests.standins.discord_api import DiscordStandIn


async def test_an_interaction_stores_the_names_discord_gave(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    await api.interact(api.command("quiz", "leaderboard", user=1_234_567_890_123_456_789))
    await bot.chat.names.settle()
    guild = str(api.guild_id)
    channel = api.channel_ids(api.guild_id)[0]
    known = await engine.store.display_names("discord", guild)
    names = {key: k.name for key, k in known.items()}
    assert (
        names[(NameKind.USER, "1234567890123456789")] == f"user{1_234_567_890_123_456_789 % 10_000}"
    )
    assert names[(NameKind.CHANNEL, str(channel))] == api.channels[channel]["name"]
    assert names[(NameKind.WORKSPACE, guild)] == f"guild {api.guild_id % 10_000}"
