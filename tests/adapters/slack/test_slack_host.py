"""Where ``quizbot slack`` listens in HTTP mode: this machine, unless told or in a container."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

import pytest

from bot.cli import build_parser
from bot.config import CONTAINER_MARKERS, Settings, in_container
from tests.adapters.slack.conftest import BANK, SECRET
from tests.adapters.slack.test_slack_process import ROOT, bot_env
from tests.standins.slack_api import SlackApiStandIn

LISTENING = re.compile(r"listening on http://([\d.]+):(\d+)/slack/events \(plain HTTP")


@pytest.mark.parametrize(
    ("env", "container", "host"),
    [
        ({}, False, "127.0.0.1"),
        ({}, True, "0.0.0.0"),
        ({"QUIZBOT_HOST": "10.1.2.3"}, False, "10.1.2.3"),
        ({"QUIZBOT_HOST": "127.0.0.1"}, True, "127.0.0.1"),
    ],
)
def test_the_default_address(env: dict[str, str], container: bool, host: str) -> None:
    assert Settings(**env).listen_host(container=container) == host


def test_a_container_is_known_by_its_runtime_s_marker_file(tmp_path: Path) -> None:
    docker, podman = tmp_path / ".dockerenv", tmp_path / ".containerenv"
    assert not in_container((docker, podman))
    podman.touch()
    assert in_container((docker, podman))
    assert [m.name for m in CONTAINER_MARKERS] == [".dockerenv", ".containerenv"]


def test_the_command_line_leaves_the_choice_to_the_settings_unless_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = build_parser()
    assert parser.parse_args(["slack"]).host is None
    assert parser.parse_args(["slack", "--host", "192.0.2.1"]).host == "192.0.2.1"
    with pytest.raises(SystemExit):
        parser.parse_args(["slack", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "127.0.0.1" in help_text and "0.0.0.0 inside a container" in help_text
    assert "TLS proxy" in help_text


def test_the_image_listens_on_every_address() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^\s+QUIZBOT_HOST=0\.0\.0\.0\b", dockerfile, re.MULTILINE)


@pytest.mark.slow
async def test_quizbot_slack_listens_where_quizbot_host_says(
    tmp_path: Path, standin: SlackApiStandIn
) -> None:
    env = bot_env(
        SLACK_BOT_TOKEN="xoxb-host",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=standin.url,
        QUIZBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'host.db'}",
        QUIZBOT_QUESTIONS=str(BANK),
        QUIZBOT_HOST="127.0.0.1",
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bot", "slack", "--port", "0"),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        seen: list[str] = []
        while (match := LISTENING.search(" ".join(seen[-1:]))) is None:
            raw = await asyncio.wait_for(proc.stderr.readline(), 60)
            assert raw, "quizbot slack exited:\n" + "\n".join(seen)
            seen.append(raw.decode(errors="replace"))
        assert match.group(1) == "127.0.0.1"
        # Nothing at start-up suggests SLACK_BOT_TOKEN is ignored (Bolt's note about it is).
        assert not any("will be unused" in line for line in seen), seen
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
