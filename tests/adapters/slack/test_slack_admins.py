"""Who is an admin on Slack: workspace admins via users.info, or QUIZBOT_ADMINS alone.

With QUIZBOT_ADMINS_ONLY the bot never calls users.info, so it runs on a token without the
users:read scope: the stand-in here grants the manifest's scopes minus that one, and refuses
any call that needs it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from bot.adapters.slack.app import assemble, check_credentials, start_http, web_client
from bot.chat import Charts
from bot.config import Admins
from bot.engine import QuizEngine
from bot.engine.model import Place
from bot.errors import ConfigError
from bot.links import LinkMaker
from tests.adapters.slack.conftest import ADMIN, CHANNEL, TEAM, Harness, make_settings
from tests.adapters.slack.test_slack_channels import manifest_scopes
from tests.adapters.slack.test_slack_home import home_opened, published
from tests.chat.observe import Handled
from tests.conftest import FakeClock
from tests.standins.slack_api import SlackApiStandIn

LISTED = "ULISTED"
DASHBOARD_ID = "quiz:dashboard"
PLACE = Place("slack", TEAM, CHANNEL)


@asynccontextmanager
async def serving(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
    **env: str,
) -> AsyncIterator[Harness]:
    """Serve the Bolt app, built as the product builds it, with these settings."""
    settings = make_settings(tmp_path, standin, **env)
    async with aiohttp.ClientSession() as session:
        bot = assemble(settings, engine, web_client(settings, session), charts=charts)
        runner, port = await start_http(bot.app, "127.0.0.1", 0)
        try:
            yield Harness(
                bot=bot,
                engine=engine,
                standin=standin,
                session=session,
                url=f"http://127.0.0.1:{port}/slack/events",
                clock=clock,
                handled=Handled(bot.chat),
            )
        finally:
            await runner.cleanup()
            await bot.settle()


async def change(slack: Harness, user: str, minutes: int) -> str:
    """Ask to change the round length as ``user``; return the private answer."""
    name = f"{user}-{minutes}"
    await slack.command(f"settings minutes {minutes}", user=user, respond_to=name)
    await slack.standin.wait_for(lambda: bool(slack.standin.responses_to(name)))
    return str(slack.standin.responses_to(name)[0]["text"])


async def test_listed_admins_only_never_ask_slack_and_need_no_users_read(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
) -> None:
    standin.granted = manifest_scopes() - {"users:read"}
    env = {"QUIZBOT_ADMINS": LISTED, "QUIZBOT_ADMINS_ONLY": "true"}
    async with serving(tmp_path, standin, engine, clock, charts, **env) as slack:
        # A workspace admin is no quiz admin here, and is told who is.
        refused = await change(slack, ADMIN, 3)
        assert "Only the quiz admins can" in refused
        assert (await engine.channel_settings(PLACE)).round_minutes == 10
        saved = await change(slack, LISTED, 3)
        assert "3 minutes" in saved
        assert (await engine.channel_settings(PLACE)).round_minutes == 3
        await slack.command("schedule 09:30 UTC", user=LISTED, respond_to="schedule")
        await standin.wait_for(lambda: bool(standin.responses_to("schedule")))
        assert "Scheduled" in standin.responses_to("schedule")[0]["text"]
        # Everyone else's commands still work on the narrower token.
        await slack.open_card()
    assert standin.of("users.info") == []
    assert standin.refused == []


async def test_otherwise_a_workspace_admin_counts_asked_with_users_info(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
) -> None:
    async with serving(tmp_path, standin, engine, clock, charts, QUIZBOT_ADMINS=LISTED) as slack:
        assert "4 minutes" in await change(slack, ADMIN, 4)
        assert "Only workspace admins can" in await change(slack, "U1", 5)
    assert [c.params["user"] for c in standin.of("users.info")] == [ADMIN, "U1"]
    assert (await engine.channel_settings(PLACE)).round_minutes == 4


async def test_a_token_without_users_read_refuses_politely_and_says_why(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
    caplog: pytest.LogCaptureFixture,
) -> None:
    standin.granted = manifest_scopes() - {"users:read"}
    async with serving(tmp_path, standin, engine, clock, charts, QUIZBOT_ADMINS=LISTED) as slack:
        assert "Only workspace admins can" in await change(slack, ADMIN, 4)
        assert "4 minutes" in await change(slack, LISTED, 4)
    assert standin.refused == [("users.info", "missing_scope")]
    assert any("QUIZBOT_ADMINS_ONLY" in r.getMessage() for r in caplog.records)


def test_admins_only_without_a_list_is_refused_at_start(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, SlackApiStandIn(), QUIZBOT_ADMINS_ONLY="true")
    with pytest.raises(ConfigError, match="QUIZBOT_ADMINS_ONLY is set but QUIZBOT_ADMINS"):
        check_credentials(settings)


async def test_a_scoped_admin_is_an_admin_in_that_workspace_only(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
) -> None:
    # The review: a listed id was an admin in every workspace the bot served.
    env = {
        "QUIZBOT_ADMINS": f"slack:T0ELSEWHERE:{LISTED}, slack:{TEAM}:UHERE",
        "QUIZBOT_ADMINS_ONLY": "true",
    }
    async with serving(tmp_path, standin, engine, clock, charts, **env) as slack:
        assert "Only the quiz admins can" in await change(slack, LISTED, 3)
        assert (await engine.channel_settings(PLACE)).round_minutes == 10
        assert "3 minutes" in await change(slack, "UHERE", 3)
    assert standin.of("users.info") == []


async def test_the_home_tab_follows_admins_only(
    tmp_path: Path,
    standin: SlackApiStandIn,
    engine: QuizEngine,
    clock: FakeClock,
    charts: Charts,
) -> None:
    # The review: the Home tab asked users.info even with QUIZBOT_ADMINS_ONLY, and showed the
    # dashboard button to workspace admins the commands then refused.

    env = {"QUIZBOT_ADMINS": f"slack:{TEAM}:{LISTED}", "QUIZBOT_ADMINS_ONLY": "true"}
    async with serving(tmp_path, standin, engine, clock, charts, **env) as slack:
        slack.bot.chat.links = LinkMaker("h" * 40, "https://quiz.example.org")
        await slack.event(home_opened(ADMIN), event_id="Ev-home-a")
        assert DASHBOARD_ID not in json.dumps(await published(slack, 1))
        await slack.event(home_opened(LISTED), event_id="Ev-home-b")
        assert DASHBOARD_ID in json.dumps(await published(slack, 2))
    assert standin.of("users.info") == []


@pytest.mark.parametrize(
    ("value", "everywhere", "scoped"),
    [
        ("U1, U2", {"U1", "U2"}, set()),
        ("slack:T1:U1,discord:42:7", set(), {("slack", "T1", "U1"), ("discord", "42", "7")}),
        ("U0, slack:T1:U1,", {"U0"}, {("slack", "T1", "U1")}),
    ],
)
def test_admins_are_listed_bare_or_scoped(value: str, everywhere: set, scoped: set) -> None:
    admins = Admins.parse(value)
    assert (admins.everywhere, admins.scoped) == (everywhere, scoped)


@pytest.mark.parametrize("value", ["slack:T1", "matrix:T1:U1", "slack::U1", "a:b:c:d"])
def test_a_bad_admins_entry_is_one_clear_line(value: str) -> None:
    with pytest.raises(ConfigError, match="is neither a user id nor PLATFORM:WORKSPACE:USER"):
        Admins.parse(value)
