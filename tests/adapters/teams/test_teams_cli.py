"""``quizbot teams`` as a user runs it: missing credentials, then a whole round end to end."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.chat.observe import logging_restored
from tests.standins.teams_connector import CHANNEL, TeamsStandIn

ROOT = Path(__file__).resolve().parents[3]
BANK = ROOT / "tests" / "adapters" / "slack" / "bank"
LISTENING = re.compile(r"listening on (http://\S+/api/messages)")


@pytest.fixture(autouse=True)
def _logging_put_back() -> Iterator[None]:
    """Undo the logging set-up of ``quizbot`` runs made in this process."""
    with logging_restored():
        yield


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("TEAMS_", "QUIZBOT_")):
            monkeypatch.delenv(name)


def child_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEAMS_", "QUIZBOT_"))}
    env.update(values)
    return env


def test_missing_app_id_is_one_line_and_exit_2(
    clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["teams"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["quizbot: TEAMS_APP_ID is not set; see docs/teams.md"]


def test_missing_password_names_it_and_the_local_alternative(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEAMS_APP_ID", "00000000-0000-4000-8000-000000000001")
    assert main(["teams"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("quizbot: TEAMS_APP_PASSWORD is not set; see docs/teams.md")


def test_the_development_mode_refuses_to_listen_beyond_this_machine(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEAMS_ANONYMOUS", "true")
    monkeypatch.setenv("QUIZBOT_HOST", "0.0.0.0")
    assert main(["teams"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("quizbot: TEAMS_ANONYMOUS takes activities nobody signed")


@pytest.fixture
async def standin() -> AsyncIterator[TeamsStandIn]:
    teams = TeamsStandIn(anonymous=True)
    await teams.start()
    try:
        yield teams
    finally:
        await teams.stop()


async def _listening(stream: asyncio.StreamReader) -> str:
    while line := (await stream.readline()).decode():
        if found := LISTENING.search(line):
            return found[1]
    raise AssertionError("quizbot teams ended before it listened")


@pytest.mark.slow
async def test_quizbot_teams_plays_a_round_end_to_end(
    standin: TeamsStandIn, tmp_path: Path
) -> None:
    # The SDK's development mode (TEAMS_ANONYMOUS): activities come without a token and the
    # bot sends without one (a client-credentials token needs Microsoft's login service). A
    # token that is given is still checked: a forged one is refused.
    env = child_env(
        TEAMS_APP_ID=standin.app_id,
        TEAMS_ANONYMOUS="true",
        TEAMS_KEYS_URL=standin.keys_url,
        TEAMS_PORT="0",
        QUIZBOT_HOST="127.0.0.1",
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "teams",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        url = await asyncio.wait_for(_listening(proc.stderr), 60)
        drain = asyncio.create_task(proc.stderr.read())

        forged = await standin.deliver(
            url, standin.mention("next storage", user="29:ada"), token=standin.sign(audience="x")
        )
        assert forged.status == 401
        asked = await standin.deliver(
            url, standin.mention("next storage", user="29:ada"), token=None
        )
        assert asked.status == 202
        (card,) = standin.in_conversation(CHANNEL)
        actions = card.activity["attachments"][0]["content"]["actions"]
        assert [a["type"] for a in actions] == ["Action.Execute"] * len(actions)
        round_id = actions[0]["data"]["button"].split(":")[1]

        right = await standin.deliver(
            url, standin.press(card.id, {"button": f"quiz:{round_id}:A"}, user="29:bob"), token=None
        )
        wrong = await standin.deliver(
            url, standin.press(card.id, {"button": f"quiz:{round_id}:B"}, user="29:cy"), token=None
        )
        assert right.status == 200 and "Right!" in right.body["value"]
        assert wrong.status == 200 and "Not this time" in wrong.body["value"]

        await standin.deliver(url, standin.mention("close", user="29:ada"), token=None)
        reply = await standin.wait_for(lambda: standin.replies_to(card.id), 30)
        assert card.updates, "the card was not updated to its results"
        closed = str(card.activity)
        assert "2 people answered; 1 right (50%)." in closed
        assert "parallel file system" in str(reply[-1].activity)

        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
        err = (await drain).decode()
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
