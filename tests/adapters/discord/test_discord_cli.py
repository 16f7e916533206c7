"""``quizbot discord`` as a user runs it: missing settings, the invite link, a whole round."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.adapters.discord.conftest import BANK, buttons, content_of, is_ephemeral, revealed
from tests.chat.observe import logging_restored
from tests.standins.discord_api import DiscordStandIn


@pytest.fixture(autouse=True)
def _logging_put_back() -> Iterator[None]:
    """Undo the logging set-up of ``quizbot`` runs made in this process."""
    with logging_restored():
        yield


ROOT = Path(__file__).resolve().parents[3]

# Discord's permission bits, written out independently of discord.py: View Channel 10,
# Send Messages 11, Embed Links 14, Attach Files 15, Read Message History 16,
# Create Public Threads 35, Send Messages in Threads 38.
EXPECTED_PERMISSIONS = sum(1 << bit for bit in (10, 11, 14, 15, 16, 35, 38))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("DISCORD_", "QUIZBOT_")):
            monkeypatch.delenv(name)


def child_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "QUIZBOT_"))}
    env.update(values)
    return env


async def run_cli(*args: str, env: dict[str, str], within: float = 60) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), within)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def test_missing_token_is_one_line_and_exit_2(
    clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["discord"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["quizbot: DISCORD_TOKEN is not set; see docs/discord.md"]


def test_invite_url_from_the_application_id(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISCORD_APPLICATION_ID", "123456789012345678")
    assert main(["discord", "--invite-url"]) == 0
    url = urllib.parse.urlsplit(capsys.readouterr().out.strip())
    assert (url.scheme, url.netloc, url.path) == ("https", "discord.com", "/oauth2/authorize")
    query = urllib.parse.parse_qs(url.query)
    assert query["client_id"] == ["123456789012345678"]
    assert query["scope"] == ["bot applications.commands"]
    assert query["permissions"] == [str(EXPECTED_PERMISSIONS)]


def test_invite_url_without_id_or_token_names_the_variable(
    clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["discord", "--invite-url"]) == 2
    assert "DISCORD_APPLICATION_ID is not set" in capsys.readouterr().err


async def test_invite_url_looks_the_application_up_with_the_token(api: DiscordStandIn) -> None:
    env = child_env(DISCORD_TOKEN=api.token, DISCORD_API_URL=api.api_url)
    status, out, err = await run_cli("discord", "--invite-url", env=env)
    assert status == 0, err
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(out.strip()).query)
    assert query["client_id"] == [str(api.application_id)]
    assert api.find("GET", r"^/oauth2/applications/@me$")


async def test_a_refused_token_is_one_line_and_exit_2(api: DiscordStandIn) -> None:
    env = child_env(DISCORD_TOKEN="not-the-token", DISCORD_API_URL=api.api_url)
    status, _, err = await run_cli("discord", "--invite-url", env=env)
    assert status == 2
    assert err.strip().splitlines()[-1] == "quizbot: DISCORD_TOKEN was refused by Discord"
    assert "Traceback" not in err


@pytest.mark.slow
async def test_quizbot_discord_plays_a_round_end_to_end(
    api: DiscordStandIn, tmp_path: Path
) -> None:
    env = child_env(
        DISCORD_TOKEN=api.token,
        DISCORD_API_URL=api.api_url,
        DISCORD_GATEWAY_URL=api.gateway_url,
        DISCORD_GUILD_ID=str(api.guild_id),
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "discord",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await api.wait_connected(within=60)
        [sync] = api.find("PUT", rf"/guilds/{api.guild_id}/commands$")
        assert {"quiz", "bandwidth"} <= {c["name"] for c in sync.body}

        payload = api.command("quiz", "next", {"tag": "storage"})
        await api.interact(payload, within=30)
        card = api.response_message(payload)
        round_id = int(buttons(card)[0]["custom_id"].split(":")[1])
        mid = int(card["id"])

        right = await api.interact(api.click(mid, f"quiz:{round_id}:B", user=11), within=30)
        wrong = await api.interact(api.click(mid, f"quiz:{round_id}:A", user=12), within=30)
        assert is_ephemeral(right) and "Right!" in content_of(right)
        assert is_ephemeral(wrong) and "Not this time" in content_of(wrong)

        await api.interact(api.command("quiz", "close"), within=30)
        edit = await api.wait_for(lambda c: revealed(c, mid), within=30)
        fields = {f["name"]: f["value"] for f in edit.body["embeds"][0]["fields"]}
        assert fields["Results"] == "2 people answered; 1 right (50%)."
        post = await api.wait_for(
            lambda c: c.method == "POST" and c.path == f"/channels/{mid}/messages", within=30
        )
        assert "parallel file system" in post.body["embeds"][0]["title"]

        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        assert "Traceback" not in err.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
