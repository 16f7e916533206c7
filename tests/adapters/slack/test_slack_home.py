"""The App Home tab through the real Bolt app and the Slack stand-in."""

from __future__ import annotations

import json
import re
import urllib.parse

from slack_sdk.models.views import View

from bot.links import LinkMaker, Purpose, Scope, verify
from tests.adapters.slack.conftest import ADMIN, TEAM, Harness

SECRET = "home-tab-secret-0123456789-abcdefghij"
DASHBOARD = "quiz:dashboard"
START_REVIEW = "quiz:start-review"
PRACTICE = "quiz:practice"


def home_opened(user: str, tab: str = "home") -> dict:
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": "D0HOME",
        "tab": tab,
        "event_ts": "1700000004.000100",
    }


def home_click(action_id: str, user: str) -> dict:
    """A block_actions payload from a button in the Home tab: no channel, a view container."""
    return {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "standin"},
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {"type": "view", "view_id": "V0HOME"},
        "trigger_id": "trigger",
        "view": {"id": "V0HOME", "type": "home", "blocks": []},
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "home",
                "value": "start",
                "action_ts": "1700000005.000000",
            }
        ],
    }


async def send_click(slack: Harness, payload: dict):
    body = urllib.parse.urlencode({"payload": json.dumps(payload)})
    return await slack.post(body, "application/x-www-form-urlencoded")


async def published(slack: Harness, count: int = 1) -> dict:
    calls = await slack.standin.wait_calls("views.publish", count)
    view = calls[count - 1].params["view"]
    return json.loads(view) if isinstance(view, str) else view


async def test_opening_the_home_tab_publishes_valid_blocks(slack: Harness) -> None:
    round_id = await slack.post_card("storage")
    await slack.click(round_id, "A", user="U7")
    reply = await slack.event(home_opened("U7"), event_id="Ev-home-1")
    assert reply.status == 200
    view = await published(slack)
    call = slack.standin.of("views.publish")[0]
    assert call.params["user_id"] == "U7"
    View(**view).validate_json()  # slack_sdk's own checks of Block Kit's limits
    shown = json.dumps(view)
    assert view["type"] == "home" and "Your quiz" in shown
    assert "1 of 1 right" in shown and "<@U7>" in shown  # in the week's top ten
    assert DASHBOARD not in shown  # not an admin, and the dashboard is off


async def test_the_messages_tab_publishes_nothing(slack: Harness) -> None:
    await slack.event(home_opened("U7", tab="messages"), event_id="Ev-home-2")
    await slack.event(home_opened("U8"), event_id="Ev-home-3")
    await published(slack)
    assert [c.params["user_id"] for c in slack.standin.of("views.publish")] == ["U8"]


async def test_admins_see_the_dashboard_button_and_get_a_link(slack: Harness) -> None:
    slack.bot.chat.links = LinkMaker(SECRET, "https://quiz.example.org")
    await slack.event(home_opened(ADMIN), event_id="Ev-home-4")
    assert DASHBOARD in json.dumps(await published(slack))
    reply = await send_click(slack, home_click(DASHBOARD, ADMIN))
    assert reply.status == 200
    [dm] = await slack.standin.wait_calls("chat.postMessage", 1)
    assert dm.params["channel"] == ADMIN
    (token,) = re.findall(r"/dashboard/open\?token=([\w\-.]+)", json.dumps(dm.params))
    grant = verify(SECRET, Purpose.LINK, token, slack.clock())
    assert (grant.scope, grant.user, grant.workspace) == (Scope.WORKSPACE, ADMIN, TEAM)


async def test_the_review_button_starts_a_review_in_the_apps_messages(slack: Harness) -> None:
    round_id = await slack.post_card("storage")
    await slack.click(round_id, "B", user="U9")  # a miss: it comes back for review
    await slack.command("close", user=ADMIN)
    # The reveal is posted after the ack: wait for everything started to finish.
    await slack.handled.wait(slack.handled.started)
    slack.clock.advance(days=1, minutes=1)
    await slack.event(home_opened("U9"), event_id="Ev-home-5")
    view = await published(slack)
    assert START_REVIEW in json.dumps(view) and "1 due: practise them with" in json.dumps(view)
    before = len(slack.standin.of("chat.postMessage"))
    reply = await send_click(slack, home_click(START_REVIEW, "U9"))
    assert reply.status == 200
    calls = await slack.standin.wait_calls("chat.postMessage", before + 1)
    dm = calls[before]
    assert dm.params["channel"] == "U9"
    blocks = json.dumps(dm.params.get("blocks"))
    assert '"review:' in blocks  # the review question, with its own buttons


async def test_the_home_tabs_older_buttons_still_work(slack: Harness) -> None:
    slack.bot.chat.links = LinkMaker(SECRET, "https://quiz.example.org")
    reply = await send_click(slack, home_click("quiz_home_dashboard", ADMIN))
    assert reply.status == 200
    [dm] = await slack.standin.wait_calls("chat.postMessage", 1)
    assert dm.params["channel"] == ADMIN and "/dashboard/open?token=" in json.dumps(dm.params)


async def test_the_practice_button_starts_practice_in_the_apps_messages(slack: Harness) -> None:
    round_id = await slack.post_card("storage")
    await slack.click(round_id, "B", user="U9")  # a miss: due again tomorrow
    await slack.command("close", user=ADMIN)
    await slack.handled.wait(slack.handled.started)
    slack.clock.advance(days=1, minutes=1)
    await slack.event(home_opened("U9"), event_id="Ev-home-6")
    shown = json.dumps(await published(slack))
    # The page shows the cards due, the mastery of the topic begun, and the Practice button.
    assert PRACTICE in shown and "1 due: practise them with" in shown
    assert "Mastery: `bank` " in shown, shown
    before = len(slack.standin.of("chat.postMessage"))
    reply = await send_click(slack, home_click(PRACTICE, "U9"))
    assert reply.status == 200
    calls = await slack.standin.wait_calls("chat.postMessage", before + 1)
    dm = calls[before]
    assert dm.params["channel"] == "U9"
    blocks = json.dumps(dm.params.get("blocks"))
    assert "Practice 1: a question due again" in blocks and '"practice:' in blocks
