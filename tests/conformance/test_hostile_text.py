"""Text from a question file or a user is shown as written on every platform: no mention pings,
no link is injected, no markup breaks out.

The review's reproduction: a reference URL with ``>|<!channel>`` in it rendered a real
``<!channel>`` in the Slack thread reply. The loader now refuses such a URL, and each
renderer escapes every string in one place, so the same words in every other field of a question
(and in what a user types) reach the wire inert.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.adapters.discord import render as discord_render
from bot.adapters.slack import render as slack_render
from bot.adapters.teams import render as teams_render
from bot.bank.loader import load_bank
from bot.text import Link, Pre, Text, render
from tests.conformance import drivers
from tests.conftest import FakeClock

DISCORD_ID = "123456789012345678"
HOSTILE = (
    f"<!channel> <!everyone> <@UADMIN> @everyone @here <@{DISCORD_ID}> "
    "[click](https://evil.example) <https://evil.example|click> ```@everyone```"
)
SHORT = "<!here> @everyone [x](https://evil.example)"
REVIEW_URL = "https://example.com/a>|<!channel>|<https://evil.example|click"
QUESTION = {
    "id": "hostile-text",
    "question": f"Which one? {HOSTILE}",
    "choices": {"A": f"Right {SHORT}", "B": f"Wrong {SHORT}"},
    "answer": "A",
    "explanation": {
        "short": f"Short {HOSTILE}",
        "full": f"Full {HOSTILE}",
        "why_not": {"B": f"Why not {HOSTILE}"},
    },
    "tags": ["hostile"],
    "references": [{"title": f"Ref {HOSTILE}", "url": "https://example.com/a_(b)?x=1&y=2"}],
}


def assert_inert(platform: str, text: str) -> None:
    """Fail if the raw wire text holds a live mention, an injected link or a broken-out fence."""
    if platform == "slack":
        for live in ("<!channel>", "<!everyone>", "<!here>", "<@UADMIN>", "<https://evil"):
            assert live not in text, live
        assert "&lt;!channel&gt;" in text
    elif platform == "teams":
        # Button titles are plain text on Teams: shown as written.
        labels = {f"A. Right {SHORT}", f"B. Wrong {SHORT}"}
        text = "\n".join(line for line in text.split("\n") if line not in labels)
        assert "<at>" not in text
        assert re.search(r"(?<!\\)\[(click|x)\]\(", text) is None, "a masked link got through"
        assert re.search(r"(?<!\\)<!channel", text) is None, "markup got through"
        assert "\\[click\\]" in text or "\\[x\\]" in text
    else:
        # Button labels are plain text on Discord (no markdown, no mentions): shown as written.
        labels = {f"A. Right {SHORT}", f"B. Wrong {SHORT}", f"✓ A. Right {SHORT}"}
        text = "\n".join(line for line in text.split("\n") if line not in labels)
        for live in ("@everyone", "@here", f"<@{DISCORD_ID}>"):
            assert live not in text, live
        assert re.search(r"(?<!\\)\[(click|x)\]\(", text) is None, "a masked link got through"
        assert "```@" not in text
        assert "@\u200beveryone" in text


@pytest.fixture(params=("slack", "discord", "teams"))
async def chat(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Any]:
    bank = tmp_path / "bank"
    shutil.copytree(drivers.BANK, bank)
    (bank / "hostile.yaml").write_text(yaml.safe_dump(QUESTION), encoding="utf-8")
    monkeypatch.setattr(drivers, "BANK", bank)
    async with drivers.driving(request.param, tmp_path, FakeClock()) as driver:
        yield driver


async def test_every_field_of_a_hostile_question_reaches_the_wire_inert(chat: Any) -> None:
    card = await chat.card("hostile")
    told = await chat.click(card, "B", user="bob")
    assert "Short" in told
    if chat.platform == "teams":
        # The answer to a click is the invoke's message, which Teams shows as plain text (no
        # markdown, no mention): the words arrive as written, with nothing escaped.
        assert f"Why not {HOSTILE}" in told.text
    else:
        assert_inert(chat.platform, told.text)
    await chat.command("quiz", "close", {}, user="admin")
    shown = await chat.revealed(card)
    for part in ("Which one?", "Right", "Full", "Why not", "Ref"):
        assert part in shown, part
    assert_inert(chat.platform, shown.text)
    # The reference's URL is kept, its brackets encoded so they cannot end the link.
    assert "https://example.com/a_%28b%29?x=1&" in shown.text


async def test_what_a_user_types_is_echoed_inert(chat: Any) -> None:
    seen = await chat.command("quiz", "next", {"tag": HOSTILE[:60]}, user="bob")
    assert seen.private and "is not a tag" in seen
    if chat.platform == "slack":
        for live in ("<!channel>", "<!everyone>", "<@UADMIN>"):
            assert live not in seen.text, live
    else:
        # Inside a code span Discord shows mentions as text; outside one, none may stand.
        outside = re.sub(r"`[^`]*`", "", seen.text)
        assert "@everyone" not in outside and "<@" not in outside


def test_the_loader_refuses_the_reviews_reference_url(tmp_path: Path) -> None:
    entry = dict(QUESTION, references=[{"title": "spec", "url": REVIEW_URL}])
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(entry), encoding="utf-8")
    with pytest.raises(Exception, match=r"reference url .* none of < > \| \" `"):
        load_bank([tmp_path])


@pytest.mark.parametrize("platform", ["slack", "discord", "teams"])
def test_a_link_cannot_end_early_even_if_a_url_got_past_the_loader(platform: str) -> None:
    styles = {"slack": slack_render.STYLE, "teams": teams_render.STYLE}
    style = styles.get(platform, discord_render.STYLE)
    shown = render(Text((Link(f"spec {HOSTILE}", REVIEW_URL),)), style)
    assert_inert(platform, shown)
    if platform == "slack":
        # One link: its URL runs to the first "|" (ours), and the only ">" closes it.
        url = shown.partition("|")[0]
        assert url == "<https://example.com/a%3E%7C%3C!channel%3E%7C%3Chttps://evil.example%7Cclick"
        assert shown.count(">") == 1 and shown.endswith(">")
    elif platform == "teams":
        assert shown.count("](") == 1 and shown.endswith(")")
        assert "%28" not in shown.partition("](")[0]
    else:
        assert shown.count("](<") == 1 and shown.endswith(">)")


async def test_a_plan_model_name_cannot_break_out_of_the_table(chat: Any) -> None:
    # The review: with layers= and hidden= the name was any text; on Discord it closed the code
    # block around the table and added a masked link to the bot's channel message.
    name = "```@everyone[x](https://evil.example)```"
    seen = await chat.command(
        "bandwidth", "", {"plan": f"{name} gpus=8 layers=32 hidden=4096"}, user="bob"
    )
    assert seen.private and "A model name is letters, digits" in seen
    assert "```@" not in seen.text and "[x](https://evil" not in seen.text


def test_a_preformatted_block_on_discord_has_one_fence_each_side() -> None:
    shown = render(
        Text((Pre("table\n```@everyone [x](https://evil.example)```\nend"),)), discord_render.STYLE
    )
    assert shown.startswith("```\n") and shown.endswith("\n```")
    assert shown.count("```") == 2


async def test_a_refusal_quotes_at_most_a_little_of_what_was_typed(chat: Any) -> None:
    # The review: /quiz next with a 4,000-character tag echoed all of it, and the Slack answer
    # went past the 3,000 characters a reply may have.
    seen = await chat.command("quiz", "next", {"tag": "a" * 4000}, user="bob")
    assert seen.private and "No question has the tag" in seen
    assert "a" * 41 not in seen.text and len(seen.text) < 500
