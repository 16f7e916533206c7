"""``/bandwidth`` and reveal charts through the real discord.py client and the stand-in."""

from __future__ import annotations

import json

from bot.adapters.discord.app import QuizClient
from bot.engine import QuizEngine
from tests.adapters.discord.conftest import content_of, is_ephemeral, post_card
from tests.standins.discord_api import DiscordStandIn

PNG = b"\x89PNG\r\n\x1a\n"


async def test_bandwidth_is_synced_with_typed_options(bot: QuizClient, api: DiscordStandIn) -> None:
    [sync] = api.find("PUT", rf"^/applications/{api.application_id}/commands$")
    bandwidth = next(c for c in sync.body if c["name"] == "bandwidth")
    options = {o["name"]: o for o in bandwidth["options"]}
    assert list(options) == [
        "size",
        "op",
        "nodes",
        "gpus",
        "nics",
        "step",
        "over",
        "intra",
        "algo",
        "proto",
        "launch",
        "sharp",
        "plan",
    ]
    assert [c["value"] for c in options["proto"]["choices"]] == ["ll", "ll128", "simple"]
    assert [c["value"] for c in options["launch"]["choices"]] == ["each", "single"]
    # A size or a plan: neither alone is required (the flow asks for one of them).
    assert options["size"]["type"] == 3 and options["plan"]["type"] == 3
    assert options["sharp"]["type"] == 5
    assert [c["value"] for c in options["op"]["choices"]] == [
        "transfer",
        "allreduce",
        "allgather",
        "reducescatter",
        "broadcast",
        "alltoall",
    ]
    assert (options["nodes"]["type"], options["nodes"]["min_value"]) == (4, 1)
    assert options["step"]["type"] == 10
    assert not any(o.get("required") for o in options.values())


async def test_bandwidth_answers_with_a_table_and_a_chart(
    bot: QuizClient, api: DiscordStandIn
) -> None:
    payload = api.command("bandwidth", options={"size": "140GB", "op": "allreduce", "nodes": 16})
    call = await api.interact(payload)
    assert call.body["type"] == 5  # deferred: the chart takes a moment to draw
    follow = await api.followup(payload, within=30)
    text = follow.body["content"]
    assert text.startswith("```\nallreduce of 140 GB")
    assert "InfiniBand" in text and "Wi-Fi 6" in text and text.endswith("```")
    [chart] = follow.files
    assert chart.filename.startswith("bandwidth-allreduce-of-140-gb") and chart.data.startswith(PNG)
    assert follow.body["attachments"][0]["filename"] == chart.filename


async def test_a_long_comparison_attaches_the_table(bot: QuizClient, api: DiscordStandIn) -> None:
    payload = api.command("bandwidth", options={"size": "1GB", "over": "all"})
    await api.interact(payload)
    follow = await api.followup(payload, within=30)
    assert follow.body["content"].endswith("(table attached)")
    names = [f.filename for f in follow.files]
    assert names[0].startswith("bandwidth-") and names[0].endswith(".png")
    assert names[1] == "bandwidth.txt"
    table = follow.files[1].data.decode()
    assert "ib-ndr" in table and "omnipath" in table


async def test_bad_bandwidth_input_gets_private_usage(bot: QuizClient, api: DiscordStandIn) -> None:
    call = await api.interact(api.command("bandwidth", options={"size": "lots of data"}))
    assert call.body["type"] == 4 and is_ephemeral(call)
    assert "Usage: /bandwidth [size:140GB]" in content_of(call)
    unknown = await api.interact(api.command("bandwidth", options={"size": "1GB", "over": "x9"}))
    assert "x9" in content_of(unknown) and is_ephemeral(unknown)


async def test_the_reveal_attaches_the_questions_chart_in_the_thread(
    bot: QuizClient, api: DiscordStandIn, engine: QuizEngine
) -> None:
    card, _ = await post_card(api, engine, tag="networking")
    await api.interact(api.command("quiz", "close"))
    post = await api.wait_for(
        lambda c: c.method == "POST" and c.path == f"/channels/{card['id']}/messages", within=30
    )
    [chart] = post.files
    assert chart.data.startswith(PNG)
    assert post.body["embeds"][0]["title"] == "The answer is A. InfiniBand"
    assert json.dumps(post.body["attachments"]).count(chart.filename) == 1
