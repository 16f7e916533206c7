"""The Teams adapter on the wire: the token check, mentions, chats, presses, references, charts.

Each test runs the real Agents SDK pipeline (the conformance suite's Teams driver) against the
connector stand-in, and asserts on what reached it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.adapters.teams import render
from bot.adapters.teams.handlers import (
    command_of,
    form_sent,
    heard,
    pressed,
    removed_from_team,
    typed_text,
)
from bot.bank.loader import load_bank
from bot.chat import Chart, NotAMember, PostText
from bot.chat.forms import ADD_FIELDS, add_form
from bot.config import Admins
from bot.engine.model import ChoiceTally, Place, Reveal, Round
from bot.errors import ConfigError
from bot.text import text
from tests.conformance.drivers import BANK, TeamsDriver, driving
from tests.conftest import FakeClock
from tests.standins.teams_connector import CHANNEL, TENANT

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
async def teams(tmp_path: Path) -> AsyncIterator[TeamsDriver]:
    async with driving("teams", tmp_path, FakeClock()) as driver:
        yield driver


def paths(driver: TeamsDriver, start: int = 0) -> list[tuple[str, str, int]]:
    return [
        (c.method, urllib.parse.unquote(c.path), c.status) for c in driver.standin.calls[start:]
    ]


# ---------------------------------------------------------------- the token check


async def test_activities_without_a_valid_token_are_refused_and_change_nothing(
    teams: TeamsDriver,
) -> None:
    s = teams.standin
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    start = len(s.calls)
    for token in (
        None,
        s.sign(audience="another-bot"),
        s.sign(key=other_key),
        s.sign(lifetime=-900),
    ):
        answer = await s.deliver(teams.url, s.mention("next storage", user="29:eve"), token=token)
        assert answer.status == 401, token
    assert s.calls[start:] == []
    assert await teams.engine.open_round(teams.place) is None


async def test_a_body_that_is_not_an_activity_is_refused_with_400(teams: TeamsDriver) -> None:
    s = teams.standin
    bad = s.mention("next", user="29:eve")
    bad["text"] = ["not", "a", "string"]
    start = len(s.calls)
    assert (await s.deliver(teams.url, bad)).status == 400
    assert s.calls[start:] == []


# ---------------------------------------------------------------- reading activities


def test_the_bots_mention_is_taken_out_and_the_html_read_back() -> None:
    activity = {
        "text": "<at>quizbot</at> next&nbsp;storage &amp; more",
        "recipient": {"id": "28:bot"},
        "entities": [
            {"type": "mention", "text": "<at>quizbot</at>", "mentioned": {"id": "28:bot"}}
        ],
    }
    assert typed_text(activity) == "next storage & more"


def test_a_person_named_reaches_the_grammar_in_the_neutral_form() -> None:
    activity = {
        "text": "<at>quizbot</at> stats <at>Ada Lovelace</at> &amp; more",
        "recipient": {"id": "28:bot"},
        "entities": [
            {"type": "mention", "text": "<at>quizbot</at>", "mentioned": {"id": "28:bot"}},
            {"type": "mention", "text": "<at>Ada Lovelace</at>", "mentioned": {"id": "29:ada"}},
        ],
    }
    assert typed_text(activity) == "stats <@29:ada> & more"


def test_a_first_word_naming_a_command_picks_it() -> None:
    place = Place("teams", TENANT, CHANNEL)
    assert (
        command_of(place, "u", "bandwidth 1GB").name,
        command_of(place, "u", "bandwidth 1GB").text,
    ) == ("bandwidth", "1GB")
    assert command_of(place, "u", "/quiz next").text == "next"
    assert (
        command_of(place, "u", "next storage").name,
        command_of(place, "u", "next storage").text,
    ) == ("quiz", "next storage")


def test_a_channel_thread_is_placed_in_its_channel_and_a_chat_in_itself() -> None:
    base = {"serviceUrl": "https://smba.example/", "from": {"id": "29:a"}, "id": "1"}
    in_thread = heard(
        base
        | {
            "conversation": {"id": f"{CHANNEL};messageid=17", "conversationType": "channel"},
            "channelData": {"tenant": {"id": TENANT}, "team": {"id": "19:t"}},
        }
    )
    assert in_thread is not None and in_thread.place == Place("teams", TENANT, CHANNEL)
    chat = heard(
        base
        | {"conversation": {"id": "a:chat", "conversationType": "personal", "tenantId": TENANT}}
    )
    assert chat is not None and chat.place == Place("teams", TENANT, "a:chat") and chat.personal
    assert heard(base | {"conversation": {"id": "a:chat"}}) is None  # no tenant: not placed


def test_a_press_is_read_from_execute_and_submit_and_nothing_else() -> None:
    execute = {
        "type": "invoke",
        "name": "adaptiveCard/action",
        "value": {"action": {"verb": render.VERB, "data": {"button": "quiz:1:A"}}},
    }
    assert pressed(execute) == "quiz:1:A"
    assert pressed({"type": "message", "value": {"button": "quiz:1:B"}}) == "quiz:1:B"
    other_verb = {**execute, "value": {"action": {"verb": "other", "data": {"button": "quiz:1:A"}}}}
    assert pressed(other_verb) is None
    assert pressed({**execute, "name": "composeExtension/query"}) is None


def test_a_form_is_a_card_of_inputs_and_is_read_back_with_its_team() -> None:
    place = Place("teams", TENANT, CHANNEL)
    errors = {"B": "76 characters; at most 75.", "question": "Holds '<!channel>'."}
    made = render.form_card(add_form(place, None, values={"answer": "C"}, errors=errors), "T9")
    inputs = [b for b in made["body"] if b["type"].startswith("Input.")]
    assert [b["id"] for b in inputs] == [f.name for f in ADD_FIELDS]
    answer = next(b for b in inputs if b["id"] == "answer")
    assert answer["type"] == "Input.ChoiceSet" and answer["value"] == "C"
    shown = {b["id"]: b["text"] for b in made["body"] if b.get("id", "").endswith("-error")}
    assert shown == {"B-error": errors["B"], "question-error": "Holds '\\<!channel\\>'."}
    [submit] = made["actions"]
    assert submit["type"] == "Action.Execute" and submit["data"] == {
        "button": "add:1",
        "form": True,
        "team": "T9",
    }
    sent = {
        "type": "invoke",
        "name": "adaptiveCard/action",
        "value": {"action": {"verb": render.VERB, "data": {**submit["data"], "question": "Why?"}}},
    }
    assert form_sent(sent) == ("add:1", {"question": "Why?"}, "T9")
    # A button press is not a form sent back, and a form is not a press of its button.
    press = {**sent, "value": {"action": {"verb": render.VERB, "data": {"button": "add:1"}}}}
    assert form_sent(press) is None


def test_a_question_id_too_long_for_a_button_has_no_report_button() -> None:
    q = replace(load_bank([BANK]).questions[0], id="q" * 120)
    tallies = (ChoiceTally(q.choices[0], 1, 1.0, True),)
    now = datetime(2026, 12, 4, tzinfo=UTC)
    rnd = Round(1, Place("teams", TENANT, CHANNEL), q.id, now, None)
    assert "actions" not in render.reveal_card(Reveal(rnd, q, 1, 1, tallies, ()))


# ---------------------------------------------------------------- chats and private answers


async def test_a_private_answer_to_a_channel_mention_goes_to_the_one_to_one_chat(
    teams: TeamsDriver,
) -> None:
    start = len(teams.standin.calls)
    seen = await teams.command("quiz", "settings", {}, user="bob")
    assert seen.private and "a question stays open" in seen
    chat = teams.standin.chat_id("29:bob")
    made, sent = paths(teams, start)[:2]
    assert made == ("POST", "/v3/conversations", 201)
    assert sent == ("POST", f"/v3/conversations/{chat}/activities", 201)
    created = teams.standin.calls[start].body
    assert created["members"] == [{"id": "29:bob"}] and created["tenantId"] == TENANT
    assert not any(p.startswith(f"/v3/conversations/{CHANNEL}") for _, p, _ in paths(teams, start))


async def test_a_command_in_the_one_to_one_chat_is_answered_there(teams: TeamsDriver) -> None:
    s = teams.standin
    start = len(s.calls)
    await teams._deliver(s.mention("me", user="29:cy", personal=True))
    chat = s.chat_id("29:cy")
    assert paths(teams, start) == [("POST", f"/v3/conversations/{chat}/activities", 201)]
    assert "Your quiz" in str(s.calls[start].body)


async def test_a_submit_button_counts_as_a_press(teams: TeamsDriver) -> None:
    card = await teams.card("storage")
    activity = teams.standin.mention("", user="29:dee")
    activity.pop("entities")
    activity.pop("text")
    activity["value"] = {"button": f"quiz:{card.round_id}:A"}
    await teams._deliver(activity)
    assert await teams.engine.answered_count(card.round_id) == 1


async def test_a_button_the_bot_did_not_make_is_ignored(teams: TeamsDriver) -> None:
    card = await teams.card("storage")
    activity = teams.standin.press(card.ref, {"button": "quiz:x:Z"}, user="29:dee")
    answer = await teams.standin.deliver(teams.url, activity)
    assert answer.status == 200
    assert await teams.engine.answered_count(card.round_id) == 0


# ---------------------------------------------------------------- cards


async def test_the_card_has_one_execute_button_per_choice_and_the_reveal_none(
    teams: TeamsDriver,
) -> None:
    card = await teams.card("storage")
    posted = teams.standin.posted[card.ref]
    content = posted.activity["attachments"][0]
    assert content["contentType"] == "application/vnd.microsoft.card.adaptive"
    actions = content["content"]["actions"]
    question = (await teams.engine.get_round(card.round_id)).question_id
    choices = teams.engine.bank.by_id(question).choices
    assert [a["data"]["button"] for a in actions] == [
        f"quiz:{card.round_id}:{c.key}" for c in choices
    ]
    assert {a["type"] for a in actions} == {"Action.Execute"}
    assert "react" not in str(content["content"]["body"])  # no letter reactions on Teams
    await teams.command("quiz", "close", {}, user="admin")
    shown = await teams.revealed(card)
    assert "closed" in shown.text
    # No choice buttons on the closed card: only the report of a problem with the question.
    closed = posted.activity["attachments"][0]["content"]["actions"]
    assert [a["data"]["button"] for a in closed] == [f"report:{question}"]
    (reply,) = teams.standin.replies_to(card.ref)
    assert reply.conversation == CHANNEL


# ---------------------------------------------------------------- unprompted posts


async def test_after_a_restart_the_stored_reference_still_reaches_the_channel(
    teams: TeamsDriver,
) -> None:
    await teams.restart()  # the new process has heard nothing yet: the database remembers
    before = len(teams.standin.in_conversation(CHANNEL))
    await teams.bot.port.send(PostText(teams.place, text("Daily question in five minutes.")))
    assert len(teams.standin.in_conversation(CHANNEL)) == before + 1


async def test_a_channel_never_heard_from_is_not_a_member_and_a_lost_card_is_gone(
    teams: TeamsDriver,
) -> None:
    elsewhere = Place("teams", TENANT, "19:never@thread.tacv2")
    with pytest.raises(NotAMember):
        await teams.bot.port.send(PostText(elsewhere, text("hello")))
    card = await teams.card("storage")
    teams.standin.posted.pop(card.ref)
    await teams.command("quiz", "close", {}, user="admin")
    # The reveal's update finds no card (404, Gone): the results are posted anew instead.
    found = await teams.standin.wait_for(
        lambda: [p for p in teams.standin.in_conversation(CHANNEL) if "closed" in str(p.activity)]
    )
    assert found
    # The connector's 404 reached the core as Gone, which posts the results anew.
    assert ("PUT", f"/v3/conversations/{CHANNEL}/activities/{card.ref}", 404) in paths(teams)


@pytest.mark.parametrize("deleted", [False, True])
async def test_removed_from_the_team_its_schedules_stop_and_its_rounds_close(
    teams: TeamsDriver, deleted: bool
) -> None:
    # Far from the test clock's 09:00, so no daily question is posted meanwhile.
    seen = await teams.command("quiz", "schedule", {"time": "21:00"}, user="admin")
    assert "Scheduled." in seen
    card = await teams.card("storage")
    chat = teams.place  # the channel, and a one-to-one chat that is in no team
    personal = Place("teams", TENANT, teams.standin.chat_id("29:ada"))
    await teams._deliver(teams.standin.mention("me", user="29:ada", personal=True))
    start = len(teams.standin.calls)
    answer = await teams.standin.deliver(teams.url, teams.standin.removed(deleted=deleted))
    assert answer.status < 300
    assert teams.standin.calls[start:] == []  # nothing is posted where the bot was removed
    assert await teams.core.schedules.show(chat) is None
    assert (await teams.engine.get_round(card.round_id)).is_closed
    with pytest.raises(NotAMember):
        await teams.bot.port.send(PostText(chat, text("still here?")))
    # The person's chat with the bot is no part of the team: it is still reached.
    await teams.bot.port.send(PostText(personal, text("still here")))


def test_other_updates_are_not_a_removal() -> None:
    base = {"type": "conversationUpdate", "recipient": {"id": "28:bot"}}
    team = {"channelData": {"team": {"id": "19:t"}}}
    assert removed_from_team(base | team | {"membersRemoved": [{"id": "29:ada"}]}) is None
    assert removed_from_team(base | team | {"membersAdded": [{"id": "28:bot"}]}) is None
    assert removed_from_team(base | {"membersRemoved": [{"id": "28:bot"}]}) is None  # no team
    removal = {"type": "installationUpdate", "action": "remove"} | team
    assert removed_from_team(removal) == "19:t"


# ---------------------------------------------------------------- charts


async def test_a_large_chart_is_served_by_every_replica_and_a_small_one_inlined(
    teams: TeamsDriver,
) -> None:
    seen = await teams.command("bandwidth", "", {"size": "140GB"})
    assert not seen.private
    (chart,) = teams.charts()
    assert chart.startswith(PNG)
    urls = [
        e["url"]
        for p in teams.standin.posted.values()
        for a in p.activity.get("attachments") or []
        for e in a["content"]["body"]
        if e.get("type") == "Image"
    ]
    assert len(urls) == 1
    (served,) = [u for u in urls if u.startswith("http")]
    # Kept in the database: the bot after a restart (another replica alike) still serves it.
    await teams.restart()
    served = served.replace(served.split("/teams/")[0], teams.url.removesuffix("/api/messages"))
    async with aiohttp.ClientSession() as session:
        async with session.get(served) as response:
            assert response.status == 200 and response.content_type == "image/png"
            assert await response.read() == chart
        missing = served.rsplit("/", 1)[0] + "/0123.png"
        async with session.get(missing) as response:
            assert response.status == 404
    small = Chart(png=PNG + b"\0" * 100, filename="small.png", title="small")
    assert teams.bot.images.url(small) == render.inline_url(small)
    teams.bot.images.base = None
    large = Chart(png=PNG + b"\0" * 30_000, filename="large.png", title="large")
    assert teams.bot.images.url(large) is None
    body: list[dict[str, Any]] = render._with_chart([], large, teams.bot.images.url)
    assert body[0]["type"] == "TextBlock" and "too large" in body[0]["text"]


# ---------------------------------------------------------------- admins


def test_quizbot_admins_reads_teams_ids_with_their_colon() -> None:
    admins = Admins.parse(f"teams:{TENANT}:29:ada, 29:bob")
    assert admins.lists("teams", TENANT, "29:ada")
    assert not admins.lists("teams", "another-tenant", "29:ada")
    assert admins.lists("teams", "another-tenant", "29:bob")
    with pytest.raises(ConfigError):
        Admins.parse(f"teams:{TENANT}")


async def test_someone_the_team_does_not_list_is_no_owner(teams: TeamsDriver) -> None:
    teams.standin.members = {"29:admin"}
    teams.standin.listed_members = True
    start = len(teams.standin.calls)
    seen = await teams.command("quiz", "settings", {"minutes": 5}, user="eve")
    assert seen.private and "can change this channel's quiz settings" in seen
    asked = [c for c in teams.standin.calls[start:] if "/members/" in c.path]
    assert [c.status for c in asked] == [404]
    assert "Saved." in await teams.command("quiz", "settings", {"minutes": 5}, user="admin")


async def test_a_listed_admin_is_an_admin_in_a_chat_without_a_team(tmp_path: Path) -> None:
    async with driving("teams", tmp_path, FakeClock()) as driver:
        driver.core.admins = Admins.parse(f"teams:{TENANT}:29:dee")
        start = len(driver.standin.calls)
        await driver._deliver(driver.standin.mention("report", user="29:dee", personal=True))
        chat = driver.standin.chat_id("29:dee")
        said = [c for c in driver.standin.calls[start:] if chat in urllib.parse.unquote(c.path)]
        assert said and "Question report" in str(said[-1].body)
        # Nobody was asked about team ownership: there is no team in a chat.
        assert not [c for c in driver.standin.calls[start:] if "/members/" in c.path]
