"""Names on Slack: learnt from real requests through Bolt, and users.info for people seen by id."""

from __future__ import annotations

from bot.engine.names import NameKind
from tests.adapters.slack.conftest import CHANNEL, TEAM, Harness, reaction
from tests.standins.slack_api import BOT_SCOPE, POST_PUBLIC

ADA, GRACE, KATHERINE = "U07ABC12345", "U07DEF67890", "U07GHI24680"


async def stored(slack: Harness) -> dict[tuple[NameKind, str], str]:
    await slack.bot.chat.names.settle()
    known = await slack.engine.store.display_names("slack", TEAM)
    return {key: k.name for key, k in known.items()}


async def test_names_come_from_commands_clicks_and_users_info(slack: Harness) -> None:
    slack.standin.people[KATHERINE] = "Katherine J."
    round_id, ts = await slack.open_card()
    before = slack.handled.count
    assert (await slack.command("leaderboard", user=ADA)).status == 200
    assert (await slack.click(round_id, "A", user=GRACE)).status == 200
    # A reaction carries only the person's id: quizbot asks users.info once.
    assert (await slack.event(reaction(KATHERINE, "one", ts), event_id="Ev7")).status == 200
    await slack.handled.wait(before + 3)
    names = await stored(slack)
    assert names[(NameKind.USER, ADA)] == ADA.lower()  # the command's user_name
    assert names[(NameKind.USER, GRACE)] == GRACE.lower()  # the click's username
    assert names[(NameKind.USER, KATHERINE)] == "Katherine J."
    assert names[(NameKind.CHANNEL, CHANNEL)] == "quiz"
    # The payloads give the workspace's domain; its name comes from team.info, asked once.
    assert names[(NameKind.WORKSPACE, TEAM)] == "Stand-in Cluster Team"
    assert [c.params["team"] for c in slack.standin.of("team.info")] == [TEAM]
    asked = [c.params["user"] for c in slack.standin.of("users.info")]
    assert asked.count(KATHERINE) == 1

    # A second reaction by the same person asks nothing more, and nothing is written again.
    before = slack.handled.count
    assert (await slack.event(reaction(KATHERINE, "two", ts), event_id="Ev8")).status == 200
    await slack.handled.wait(before + 1)
    await stored(slack)
    assert [c.params["user"] for c in slack.standin.of("users.info")].count(KATHERINE) == 1


async def test_without_team_read_the_workspace_domain_stands_in(slack: Harness) -> None:
    # An app installed before team:read was asked for: team.info is refused, the domain is shown.
    slack.standin.granted = {s for s in BOT_SCOPE.values() if s and s != "team:read"}
    slack.standin.granted.add(POST_PUBLIC)
    before = slack.handled.count
    assert (await slack.command("leaderboard", user=ADA)).status == 200
    await slack.handled.wait(before + 1)
    names = await stored(slack)
    assert names[(NameKind.WORKSPACE, TEAM)] == "standin"
    [refused] = slack.standin.of("team.info")
    assert refused.params["team"] == TEAM
