"""One behaviour, every platform: each scenario is written once and run through every driver.

``chat`` runs a scenario on Slack and on Discord (the real slack-bolt and discord.py stacks
against their stand-ins); ``face`` adds the terminal where the terminal can do the same.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bot.bank.loader import load_bank
from bot.bank.workspace import question_yaml
from bot.config import Admins
from bot.engine import ChannelSettings, Period
from bot.engine.learning import CardKey
from bot.engine.model import DifficultyMode, Proposed, Published, ReviewScope
from bot.links import LinkMaker, Purpose, Scope, verify
from bot.scheduler import schedule_store_of
from tests.conformance.drivers import TEMPLATES, eventually
from tests.conftest import make_question

PNG = b"\x89PNG\r\n\x1a\n"
# Teams' reactions are a fixed set (like, heart, laugh, surprised, sad, angry): none is a letter.
NO_LETTER_REACTIONS = "Teams reactions are a fixed set of six with no letters to answer with"


def skip_on(chat: Any, platform: str, why: str) -> None:
    """Skip a scenario that cannot apply to a platform, saying why."""
    if chat.platform == platform:
        pytest.skip(f"{platform}: {why}")


TOKEN = re.compile(r"/dashboard/open\?token=([A-Za-z0-9_\-.]+)")


def verify_link(shown: str, now: datetime) -> Any:
    """Return the grant of the one dashboard link in what was shown."""
    (token,) = TOKEN.findall(shown)
    return verify("conformance-secret-0123456789-abcdef", Purpose.LINK, token, now)


async def open_round(driver: Any) -> Any:
    return await driver.engine.open_round(driver.place)


# ---------------------------------------------------------------- help and questions


async def test_help_lists_every_command(face: Any) -> None:
    seen = await face.command("quiz", "help", {})
    assert seen.private
    for command in ("/quiz next", "/quiz close", "/quiz leaderboard", "/quiz stats"):
        assert command in seen
    for command in ("/quiz settings", "/quiz schedule", "/quiz review", "/bandwidth"):
        assert command in seen


async def test_an_unknown_tag_is_refused_and_opens_nothing(face: Any) -> None:
    seen = await face.ask_for("quantum")
    assert "No question has the tag" in seen and "quantum" in seen
    if face.platform == "terminal":
        assert "`" not in seen.text  # the terminal shows no markup
    assert await open_round(face) is None


async def test_a_tag_that_is_not_a_tag_is_refused(chat: Any) -> None:
    seen = await chat.command("quiz", "next", {"tag": "no_underscores"})
    assert seen.private and "is not a tag" in seen
    assert await open_round(chat) is None


async def test_next_posts_a_card_with_a_button_per_choice(chat: Any) -> None:
    card = await chat.card("storage")
    rnd = await chat.engine.get_round(card.round_id)
    assert rnd.message_ref == card.ref
    assert rnd.closes_at is not None
    shown = await chat.command("quiz", "next", {"tag": "storage"})
    assert shown.private and "already open" in shown


async def test_the_open_card_hides_its_tags_and_the_reveal_shows_them(face: Any) -> None:
    # A tag can name the answer (``infiniband`` on the question keyed InfiniBand): players see
    # the tags only once the answer is known. The test bank's interconnect question is tagged
    # ``networking``, a word its stem and choices never use.
    shown = await face.ask_for("networking")
    assert "InfiniBand" in shown
    assert "networking" not in shown.text and "Tags" not in shown.text
    if face.platform == "terminal":
        played = await face.play("networking", "A")
        card, _, after = played.text.partition("Right!")
        assert "networking" not in card
        assert "Tags: 'networking'" in after
        return
    await face.command("quiz", "close", {}, user="admin")
    card = await face.card("networking")
    await face.click(card, "B", user="bob")
    await face.command("quiz", "close", {}, user="admin")
    revealed = await face.revealed(card)
    assert "networking" in revealed


# The review's ten questions whose tags named the answer on the open card (the tags are gone
# from the bundled bank, tests/bank/test_lint.py keeps them out): each is stored in the
# workspace with its old tag put back, and asked by that tag.
SHIPPED = Path(__file__).resolve().parents[2] / "questions"
GIVE_AWAY_TAGS = {
    "multinode-interconnect": "infiniband",
    "activation-checkpointing-trade": "recomputation",
    "ib-port-stuck-initializing": "subnet-manager",
    "ib-xmitwait-without-errors": "congestion",
    "diurnal-throughput-dip": "dvfs",
    "out-of-band-bmc-network": "bmc",
    "rail-optimized-fabric": "rails",
    "checkpoint-copy-incast-100gbe": "incast",
    "hw-slowdown-straggler-node": "thermal-throttling",
    "ecmp-elephant-flows": "ecmp",
}


def said(text: str, word: str) -> int:
    """Return how often a word is in a text, in any case (a tag may be a word of the stem or
    of a choice: only what is said beyond those is the tag shown)."""
    return text.lower().count(word.lower())


async def test_the_reviewed_give_away_tags_are_not_on_the_open_card(face: Any) -> None:
    shipped = load_bank([SHIPPED], TEMPLATES)
    asked = [replace(shipped.by_id(qid), tags=(tag,)) for qid, tag in GIVE_AWAY_TAGS.items()]
    await face.engine.store.save_revisions(
        face.place.platform,
        face.place.workspace,
        [(q.id, question_yaml(q)) for q in asked],
        author="admin",
        at=face.clock(),
    )
    for q in asked:
        (tag,) = q.tags
        visible = " ".join([q.text, *(c.text for c in q.choices)])
        if face.platform == "terminal":
            played = await face.play(tag, q.answer)
            shown, _, after = played.text.partition("Right!")
            assert after and f"Tags: '{tag}'" in after, played.text
        else:
            card = await face.card(tag)
            assert (await face.engine.get_round(card.round_id)).question_id == q.id
            shown = card.shown
            await face.command("quiz", "close", {}, user="admin")
            revealed = await face.revealed(card)
            assert said(revealed.text, tag) > said(visible, tag), (q.id, revealed.text)
        assert q.text.split()[0] in shown, (q.id, shown)
        # Less the stem and the choices (shown once or twice: text and buttons), nothing on the
        # open card says the tag.
        rest = shown
        for piece in sorted([q.text, *(c.text for c in q.choices)], key=len, reverse=True):
            rest = rest.replace(piece, "")
        assert said(rest, tag) == 0, (q.id, tag, rest)
        assert "Tags" not in shown


async def test_a_right_answer_is_told_privately_with_its_short_explanation(face: Any) -> None:
    seen = await face.play("storage", "A")
    assert seen.private
    assert "Right!" in seen and "Striping spreads the reads" in seen


async def test_a_wrong_answer_is_told_privately_with_why_that_choice_is_wrong(face: Any) -> None:
    seen = await face.play("storage", "B")
    assert seen.private
    assert "Right!" not in seen and "Striping spreads the reads" in seen
    # The chosen distractor's own why_not, not only the short explanation.
    assert "Why not" in seen and "One server's network link caps every reader." in seen


async def test_close_shows_the_results_and_explains_in_the_thread(chat: Any) -> None:
    card = await chat.card("storage")
    chat.clock.advance(seconds=4)
    await chat.click(card, "A", user="ada")
    await chat.click(card, "B", user="bob")
    closed = await chat.command("quiz", "close", {}, user="cy")
    assert closed.private and "Closed" in closed
    shown = await chat.revealed(card)
    assert "2 people answered; 1 right (50%)." in shown
    assert chat.mention("ada") in shown and "(4.0 s)" in shown
    assert "Lustre stripes each file" in shown
    assert "One server's network link caps every reader" in shown
    assert (await chat.engine.get_round(card.round_id)).is_closed


async def test_closing_with_nothing_open_is_refused(chat: Any) -> None:
    seen = await chat.command("quiz", "close", {})
    assert seen.private and "There is no open question in this channel." in seen


async def test_the_timer_closes_a_round_when_its_time_is_up(chat: Any) -> None:
    card = await chat.card("storage")
    chat.clock.advance(minutes=11)
    shown = await chat.revealed(card)
    assert "Nobody answered this one." in shown
    assert (await chat.engine.get_round(card.round_id)).is_closed


# ---------------------------------------------------------------- computed questions


def number_in(choice_text: str) -> str:
    """Return a choice's figure and unit as the explanation writes them (``1.4 s``)."""
    return choice_text.removeprefix("About ")


async def test_next_computed_asks_answers_and_reveals_the_working(chat: Any) -> None:
    card = await chat.card("computed")
    rnd = await chat.engine.get_round(card.round_id)
    template, _, seed = rnd.question_id.partition("#")
    assert template in {t.id for t in TEMPLATES} and seed.isdigit()
    question = await chat.engine.question_of(rnd)
    # The drawn numbers reached the channel: the stem's first words and every choice.
    assert question.text.split(",")[0][:40] in card.shown
    for choice in question.choices:
        assert choice.text in card.shown
    right = await chat.click(card, question.answer, user="ada")
    assert right.private and "Right!" in right
    assert "by the /bandwidth estimator" in right and question.answer_choice.text in right
    wrong = next(k for k in question.keys if k != question.answer)
    told = await chat.click(card, wrong, user="bob")
    assert told.private and "Right!" not in told
    # The why-not names the mistake's own figure.
    assert number_in(question.choice(wrong).text) in told
    await chat.command("quiz", "close", {}, user="cy")
    shown = await chat.revealed(card)
    assert "2 people answered; 1 right (50%)." in shown
    # The thread shows the working: the estimator's request and the computed figures.
    assert "The estimator, asked `/bandwidth " in question.full
    assert "The estimator, asked" in shown and "/bandwidth " in shown
    assert number_in(question.answer_choice.text) in shown
    for choice in question.choices:
        if choice.key != question.answer:
            assert number_in(choice.text) in shown
    # The chart of the computed case is attached to the reveal.
    assert any(png.startswith(PNG) for png in chat.charts())


async def test_a_missed_computed_question_is_reviewed_by_its_instance_id(chat: Any) -> None:
    card = await chat.card("computed")
    question = await chat.engine.question_of(await chat.engine.get_round(card.round_id))
    wrong = next(k for k in question.keys if k != question.answer)
    await chat.click(card, wrong, user="dee")
    chat.clock.advance(days=1)
    review = await chat.review(user="dee")
    assert review.seen.private and "Review: a question due again" in review.seen
    # The buttons carry the instance id on the wire, and the answer is graded against it.
    assert all(v.startswith(f"review:{question.id}:") for v in review.values)
    index = next(i for i, v in enumerate(review.values) if v.endswith(f":{question.answer}"))
    right = await chat.review_click(review, index, user="dee")
    assert right.private and "Right!" in right


async def test_a_computed_question_is_played_on_every_face(face: Any) -> None:
    seen = await face.play("computed", "A")
    assert seen.private
    # The short explanation names the computed key and where it comes from.
    assert "by the /bandwidth estimator" in seen or "by the /bandwidth planner" in seen
    if face.platform == "terminal":
        # quizbot play is a practice session: no round, the person's card for the instance.
        place = face.place
        (card,) = await face.engine.store.cards(place.platform, place.workspace, "ada")
        asked = card.key.question_id
    else:
        (asked,) = await face.engine.store.question_counts(face.place)
    template, _, seed = asked.partition("#")
    assert template in {t.id for t in TEMPLATES} and seed.isdigit()


async def test_a_daily_schedule_of_computed_questions(chat: Any) -> None:
    seen = await chat.command(
        "quiz", "schedule", {"time": "09:05", "tz": "UTC", "tag": "computed"}, user="admin"
    )
    assert seen.private and "Scheduled." in seen
    chat.clock.advance(minutes=5)
    card = await chat.scheduled_card()
    rnd = await chat.engine.get_round(card.round_id)
    assert rnd.scheduled and "#" in rnd.question_id
    question = await chat.engine.question_of(rnd)
    assert all(choice.text in card.shown for choice in question.choices)


async def test_an_admin_mixes_computed_questions_into_the_rotation(chat: Any) -> None:
    shown = await chat.command("quiz", "settings", {}, user="bob")
    assert "/quiz next computed" in shown
    refused = await chat.command("quiz", "settings", {"computed": 40}, user="bob")
    assert refused.private and "can change this channel's quiz settings" in refused
    bad = await chat.command("quiz", "settings", {"computed": 101}, user="admin")
    assert bad.private and "`computed` must be between 0 and 100." in bad
    assert await chat.engine.store.channel_settings(chat.place) == ChannelSettings()
    seen = await chat.command("quiz", "settings", {"computed": 100}, user="admin")
    assert seen.private and "Saved." in seen
    assert "100% of the rounds posted without a tag ask a question computed" in seen
    stored = await chat.engine.store.channel_settings(chat.place)
    assert stored == ChannelSettings(computed_percent=100)
    posted = await chat.command("quiz", "next", {}, user="ada")
    assert not posted.private
    rnd = await open_round(chat)
    assert rnd is not None and "#" in rnd.question_id


# ---------------------------------------------------------------- answers


async def test_a_second_click_is_reported_and_not_counted(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "A", user="ada")
    again = await chat.click(card, "B", user="ada")
    assert again.private and "You already answered" in again
    assert await chat.engine.answered_count(card.round_id) == 1


async def test_a_click_after_the_close_says_closed(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.command("quiz", "close", {})
    late = await chat.click(card, "A", user="bob")
    assert late.private and "This question is closed" in late
    assert await chat.engine.answered_count(card.round_id) == 0


async def test_a_click_from_another_workspace_is_refused(chat: Any) -> None:
    card = await chat.card("storage")
    seen = await chat.click(card, "A", user="ada", elsewhere=True)
    assert seen.private and "That question does not exist here." in seen
    assert await chat.engine.answered_count(card.round_id) == 0


async def test_a_reaction_is_an_answer_told_privately(chat: Any) -> None:
    skip_on(chat, "teams", NO_LETTER_REACTIONS)
    card = await chat.card("storage")
    seen = await chat.react(card, "A", user="eve")
    assert seen is not None and seen.private and "Right!" in seen
    assert await chat.engine.answered_count(card.round_id) == 1


async def test_the_same_reaction_again_says_nothing_another_is_reported(chat: Any) -> None:
    skip_on(chat, "teams", NO_LETTER_REACTIONS)
    card = await chat.card("storage")
    await chat.react(card, "A", user="eve")
    assert await chat.react(card, "A", user="eve") is None
    other = await chat.react(card, "B", user="eve")
    assert other is not None and "You already answered" in other
    assert await chat.engine.answered_count(card.round_id) == 1


async def test_with_changes_allowed_a_second_click_replaces_the_first(chat: Any) -> None:
    await chat.command("quiz", "settings", {"changes": True}, user="admin")
    card = await chat.card("storage")
    await chat.click(card, "B", user="ada")
    changed = await chat.click(card, "A", user="ada")
    assert "You changed your answer from" in changed and "Right!" in changed
    assert await chat.engine.answered_count(card.round_id) == 1


# ---------------------------------------------------------------- scores


async def test_the_leaderboard_ranks_and_tells_the_caller_privately(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "A", user="ada")
    await chat.click(card, "B", user="bob")
    board = await chat.command("quiz", "leaderboard", {"period": "all"}, user="cy")
    assert board.private
    assert f"1. {chat.mention('ada')}: 3 pts, 1/1 right" in board
    assert f"2. {chat.mention('bob')}: 0 pts, 0/1 right" in board
    assert "You have not answered in this period yet." in board


async def test_a_leaderboard_period_that_does_not_exist_is_refused(face: Any) -> None:
    seen = await face.command("quiz", "leaderboard", {"period": "year"})
    assert seen.private and "The leaderboard period is" in seen


async def test_stats_for_oneself_and_for_someone_else(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "A", user="ada")
    mine = await chat.command("quiz", "stats", {}, user="ada")
    theirs = await chat.command("quiz", "stats", {"user": "ada"}, user="bob")
    expected = f"{chat.mention('ada')}: 1 answered, 1 right (100%), 3 points"
    assert mine.private and expected in mine and expected in theirs


# ---------------------------------------------------------------- settings


async def test_anyone_may_look_at_the_settings(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {}, user="bob")
    assert seen.private
    assert "a question stays open 10 minutes" in seen and "changes are not allowed" in seen


async def test_an_admin_changes_only_the_options_given(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {"changes": True}, user="admin")
    assert seen.private and "Saved." in seen and "are allowed" in seen
    assert await chat.engine.store.channel_settings(chat.place) == ChannelSettings(True, None)
    await chat.command("quiz", "settings", {"minutes": 3}, user="admin")
    assert await chat.engine.store.channel_settings(chat.place) == ChannelSettings(True, 3)


async def test_a_member_cannot_change_the_settings(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {"minutes": 3}, user="bob")
    assert seen.private and "can change this channel's quiz settings" in seen
    assert await chat.engine.store.channel_settings(chat.place) == ChannelSettings()


async def test_a_round_length_out_of_range_is_refused(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {"minutes": 0}, user="admin")
    assert seen.private and "`minutes` must be between 1 and 10080." in seen
    assert await chat.engine.store.channel_settings(chat.place) == ChannelSettings()


async def test_an_admin_sets_the_difficulty_mode_and_it_is_shown(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {"difficulty": "adaptive"}, user="admin")
    assert seen.private and "Saved." in seen and "adaptively" in seen
    stored = await chat.engine.store.channel_settings(chat.place)
    assert stored == ChannelSettings(difficulty=DifficultyMode.ADAPTIVE)
    shown = await chat.command("quiz", "settings", {}, user="bob")
    assert "nearest 70%" in shown


async def test_an_admin_sets_the_channel_to_pick_for_its_players_level(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {"difficulty": "level"}, user="admin")
    assert seen.private and "Saved." in seen and "for the players' level" in seen
    stored = await chat.engine.store.channel_settings(chat.place)
    assert stored == ChannelSettings(difficulty=DifficultyMode.LEVEL)
    shown = await chat.command("quiz", "settings", {}, user="bob")
    assert "the mean level of the people who answered here lately" in shown
    # The first question is still the bank's first; the next one is picked for the level.
    first = await chat.card("networking")
    await chat.click(first, "A", user="ada")
    await chat.command("quiz", "close", {}, user="admin")
    await chat.revealed(first)
    after = await chat.command("quiz", "next", {}, user="ada")
    assert not after.private


async def test_an_admin_sets_the_workspace_retention_and_everyone_sees_it(chat: Any) -> None:
    shown = await chat.command("quiz", "settings", {}, user="bob")
    assert "has fallen to 90%." in shown
    seen = await chat.command("quiz", "settings", {"retention": 85}, user="admin")
    assert seen.private and "Saved." in seen and "has fallen to 85%." in seen
    stored = await chat.engine.store.workspace_settings(chat.place.platform, chat.place.workspace)
    assert stored.retention == 0.85
    assert "has fallen to 85%." in await chat.command("quiz", "settings", {}, user="bob")


async def test_a_retention_out_of_range_or_from_a_member_changes_nothing(chat: Any) -> None:
    low = await chat.command("quiz", "settings", {"retention": 50}, user="admin")
    assert low.private and "`retention` must be between 70 and 97." in low
    member = await chat.command("quiz", "settings", {"retention": 80}, user="bob")
    assert member.private and "can change this channel's quiz settings" in member
    stored = await chat.engine.store.workspace_settings(chat.place.platform, chat.place.workspace)
    assert stored.retention is None


async def test_a_member_cannot_change_the_difficulty(chat: Any) -> None:
    seen = await chat.command("quiz", "settings", {"difficulty": "hard"}, user="bob")
    assert seen.private and "can change this channel's quiz settings" in seen
    assert await chat.engine.store.channel_settings(chat.place) == ChannelSettings()


# ---------------------------------------------------------------- report, dashboard, me


async def test_the_report_is_for_admins_and_private(chat: Any) -> None:
    refused = await chat.command("quiz", "report", {}, user="bob")
    assert refused.private and "can see the question report" in refused
    seen = await chat.command("quiz", "report", {}, user="admin")
    assert seen.private and "Question report" in seen
    assert "No question has 20 answers yet" in seen


async def test_reports_gather_pause_the_question_and_a_new_revision_resolves_them(
    chat: Any,
) -> None:
    seen = await chat.command("quiz", "flag", {"reason": "wrong"}, user="bob")
    assert seen.private and "No question has been asked in this channel yet" in seen
    card = await chat.card("storage")
    question = await chat.engine.question_of(await chat.engine.get_round(card.round_id))
    note = {"reason": "wrong", "note": "the key should be B"}
    seen = await chat.command("quiz", "flag", note, user="bob")
    assert seen.private and "Thanks: reported" in seen and "1 open report(s)" in seen
    again = await chat.command("quiz", "flag", {"reason": "typo"}, user="bob")
    assert again.private and "You have reported" in again
    await chat.command("quiz", "flag", {"reason": "unclear"}, user="cy")
    third = await chat.command("quiz", "flag", {"reason": "outdated"}, user="dee")
    assert third.private and "leaves the rotation" in third
    report = await chat.command("quiz", "report", {}, user="admin")
    assert "Reported by players" in report and "the key should be B" in report
    assert "out of the rotation until a new revision" in report
    await chat.command("quiz", "close", {}, user="admin")
    # Paused: the only question tagged storage is asked no more in this workspace.
    gone = await chat.command("quiz", "next", {"tag": "storage"})
    assert gone.private and "storage" in gone
    assert await chat.engine.open_round(chat.place) is None
    # An admin fixes it: the new revision resolves the reports and it is back.
    fixed = replace(question, text="Where should checkpoints go, now that we asked better?")
    store = chat.engine.store
    written = await store.save_revisions(
        chat.place.platform,
        chat.place.workspace,
        [(fixed.id, question_yaml(fixed))],
        author="admin",
        at=chat.clock(),
    )
    assert written == [(fixed.id, 1)]
    who = await store.resolved_flags(chat.place.platform, chat.place.workspace, fixed.id, 1)
    assert len(who) == 3
    again_card = await chat.card("storage")
    asked = await chat.engine.question_of(await chat.engine.get_round(again_card.round_id))
    assert (asked.revision, asked.text) == (1, fixed.text)
    report = await chat.command("quiz", "report", {}, user="admin")
    assert "Reported by players" not in report


async def test_dashboard_off_says_how_to_turn_it_on(chat: Any) -> None:
    chat.core.links = None
    seen = await chat.command("quiz", "dashboard", {}, user="admin")
    assert seen.private and "The dashboard is off" in seen
    assert "QUIZBOT_DASHBOARD_SECRET" in seen and "QUIZBOT_PUBLIC_URL" in seen


async def test_dashboard_links_are_private_signed_and_scoped(chat: Any) -> None:
    chat.core.links = LinkMaker("conformance-secret-0123456789-abcdef", "https://quiz.example.org")
    refused = await chat.command("quiz", "dashboard", {}, user="bob")
    assert refused.private and "/quiz dashboard me" in refused
    mine = await chat.command("quiz", "dashboard", {"scope": "me"}, user="bob")
    assert mine.private
    grant = verify_link(mine.text, chat.clock())
    assert (grant.scope, grant.user) == (Scope.ME, str(chat.uid("bob")))
    assert (grant.platform, grant.workspace) == (chat.place.platform, chat.place.workspace)
    admin = await chat.command("quiz", "dashboard", {}, user="admin")
    assert verify_link(admin.text, chat.clock()).scope is Scope.WORKSPACE


async def test_me_shows_points_streak_and_reviews_privately(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "B", user="bob")
    await chat.command("quiz", "close", {}, user="admin")
    seen = await chat.command("quiz", "me", {}, user="bob")
    assert seen.private and "Your quiz" in seen
    assert "0 points, 0 of 1 right" in seen
    assert "This week: #" in seen


# ---------------------------------------------------------------- daily questions


async def test_an_admin_sets_a_schedule_and_the_zone_is_read_as_a_zone(chat: Any) -> None:
    seen = await chat.command("quiz", "schedule", {"time": "09:00", "tz": "GMT"}, user="admin")
    assert seen.private and "Scheduled. Daily question in this channel at 09:00 GMT" in seen
    stored = await schedule_store_of(chat.engine).get_schedule(chat.place)
    assert stored is not None and (stored.zone, stored.tag) == ("GMT", None)


async def test_anyone_may_look_at_the_schedule(chat: Any) -> None:
    assert "There is no daily question" in await chat.command("quiz", "schedule", {}, user="bob")
    await chat.command("quiz", "schedule", {"time": "09:30", "tz": "Europe/Berlin"}, user="admin")
    shown = await chat.command("quiz", "schedule", {}, user="bob")
    assert shown.private and "Daily question in this channel at 09:30 Europe/Berlin" in shown


async def test_an_admin_stops_the_schedule(chat: Any) -> None:
    await chat.command("quiz", "schedule", {"time": "09:30"}, user="admin")
    stopped = await chat.command("quiz", "unschedule", {}, user="admin")
    assert "The daily question in this channel is stopped." in stopped
    assert await schedule_store_of(chat.engine).get_schedule(chat.place) is None


@pytest.mark.parametrize(("verb", "options"), [("schedule", {"time": "09:30"}), ("unschedule", {})])
async def test_a_member_cannot_set_or_stop_the_schedule(
    chat: Any, verb: str, options: dict[str, Any]
) -> None:
    seen = await chat.command("quiz", verb, options, user="bob")
    assert seen.private and "can change the daily question of a channel" in seen
    assert await schedule_store_of(chat.engine).get_schedule(chat.place) is None


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"time": "25:00"}, "is not a time of day"),
        ({"time": "09:00", "tz": "Mars/Olympus"}, "is not a time zone I know"),
        ({"time": "09:00", "close": "forever"}, "is not a duration"),
        ({"time": "09:00", "tag": "nosuchtag"}, "No question has the tag"),
    ],
)
async def test_a_bad_schedule_is_refused_and_changes_nothing(
    chat: Any, options: dict[str, Any], says: str
) -> None:
    seen = await chat.command("quiz", "schedule", options, user="admin")
    assert seen.private and says in seen
    assert await schedule_store_of(chat.engine).get_schedule(chat.place) is None


async def test_the_scheduler_posts_the_daily_question(chat: Any) -> None:
    await chat.command("quiz", "schedule", {"time": "09:05", "tz": "UTC"}, user="admin")
    chat.clock.advance(minutes=5)
    card = await chat.scheduled_card()
    rnd = await chat.engine.get_round(card.round_id)
    assert (rnd.scheduled, rnd.slot, rnd.closes_at) == (True, "2026-03-02", None)


async def test_only_an_admin_closes_the_daily_question_early(chat: Any) -> None:
    # The review's reproduction: any member's /quiz close ended the daily round, showing the
    # answer and breaking the streak of everyone who had not answered yet.
    await chat.command("quiz", "schedule", {"time": "09:05", "tz": "UTC"}, user="admin")
    chat.clock.advance(minutes=5)
    card = await chat.scheduled_card()
    await chat.click(card, "A", user="ada")
    refused = await chat.command("quiz", "close", {}, user="bob")
    assert refused.private
    assert "This is the daily question: only" in refused and "can close it early" in refused
    assert not (await chat.engine.get_round(card.round_id)).is_closed
    # bob can still answer; the round is as it was.
    told = await chat.click(card, "B", user="bob")
    assert "closed" not in told.text
    closed = await chat.command("quiz", "close", {}, user="admin")
    assert closed.private and "Closed" in closed
    await chat.revealed(card)
    assert (await chat.engine.get_round(card.round_id)).is_closed


# ---------------------------------------------------------------- review


async def test_review_with_nothing_answered(chat: Any) -> None:
    review = await chat.review(user="dee")
    assert review.seen.private and "Nothing to review yet." in review.seen
    assert review.values == []


async def test_review_re_asks_a_due_question_and_leaves_scores_alone(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "B", user="dee")
    soon = await chat.review(user="dee")
    assert "Nothing to review right now; your next review is due" in soon.seen
    chat.clock.advance(days=1)
    review = await chat.review(user="dee")
    assert review.seen.private and "Review: a question due again" in review.seen
    assert len(review.values) == 3
    before = await chat.engine.leaderboard(
        chat.place.platform, chat.place.workspace, Period.ALL, "x"
    )
    right = await chat.review_click(review, 0, user="dee")
    assert right.private and "Right!" in right and "It comes back" in right
    after = await chat.engine.leaderboard(
        chat.place.platform, chat.place.workspace, Period.ALL, "x"
    )
    assert after == before


# ---------------------------------------------------------------- /bandwidth


async def test_bandwidth_plan_prices_a_training_step(chat: Any) -> None:
    seen = await chat.command("bandwidth", "", {"plan": "llama3-70b gpus=128 tp=8 pp=2"})
    assert not seen.private
    assert "Llama 3 70B" in seen and "idle" in seen and "InfiniBand" in seen
    (chart,) = chat.charts()
    assert chart.startswith(PNG)


async def test_a_bad_plan_gets_the_planner_usage(chat: Any) -> None:
    seen = await chat.command("bandwidth", "", {"plan": "gpt9-1t gpus=8"})
    assert seen.private and "Usage: /bandwidth plan MODEL" in seen
    assert chat.charts() == []


async def test_bandwidth_answers_with_a_table_and_a_chart(chat: Any) -> None:
    seen = await chat.command("bandwidth", "", {"size": "140GB"})
    assert not seen.private
    assert "transfer of 140 GB" in seen and "InfiniBand" in seen and "Wi-Fi 6" in seen
    (chart,) = chat.charts()
    assert chart.startswith(PNG)


@pytest.mark.parametrize(
    ("size", "says"), [("lots of data", "Usage: /bandwidth"), ("1GB over=x9", "x9")]
)
async def test_bad_bandwidth_input_gets_the_usage_privately(
    face: Any, size: str, says: str
) -> None:
    options = {"size": size} if "over" not in size else {"size": "1GB", "over": "x9"}
    seen = await face.command("bandwidth", "", options)
    assert seen.private and says in seen
    if face.platform != "terminal":  # the terminal draws no chart
        assert face.charts() == []


async def test_bandwidth_charts_are_limited_per_person(chat: Any) -> None:
    # Three at once, then one every ten seconds: a fourth straight away is refused privately,
    # draws nothing, and leaves someone else's allowance alone.
    for _ in range(3):
        assert not (await chat.command("bandwidth", "", {"size": "140GB"})).private
    assert len(chat.charts()) == 3
    seen = await chat.command("bandwidth", "", {"size": "140GB"})
    assert seen.private and "try again in" in seen and "3 charts at once" in seen
    assert len(chat.charts()) == 3
    assert not (await chat.command("bandwidth", "", {"size": "1GB"}, user="bob")).private
    assert len(chat.charts()) == 4


async def test_bandwidth_is_refused_as_busy_when_the_chart_queue_is_full(chat: Any) -> None:
    charts = chat.core.charts
    charts.waiting += charts.max_waiting  # as many charts as the queue holds are waiting
    try:
        seen = await chat.command("bandwidth", "", {"size": "140GB"})
    finally:
        charts.waiting -= charts.max_waiting
    assert seen.private and "Charts are busy right now" in seen
    assert chat.charts() == []
    # Bad input is still told as bad input, and a refusal cost no allowance.
    for _ in range(3):
        assert not (await chat.command("bandwidth", "", {"size": "1GB"})).private


# ---------------------------------------------------------------- failures and restarts


async def test_a_card_that_cannot_be_posted_frees_the_channel(chat: Any) -> None:
    chat.fail_next_card_post()
    seen = await chat.command("quiz", "next", {"tag": "storage"})
    assert seen.private and "I can't post in this channel yet" in seen
    assert await open_round(chat) is None
    await chat.card("storage")


async def test_a_click_after_a_restart_still_counts(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.restart()
    seen = await chat.click(card, "A", user="ada")
    assert "Right!" in seen
    assert await chat.engine.answered_count(card.round_id) == 1


async def test_a_round_due_while_the_bot_was_down_closes_when_it_comes_back(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "A", user="ada")
    await chat.restart()
    chat.clock.advance(hours=1)
    shown = await chat.revealed(card)
    assert "1 person answered; 1 right (100%)." in shown


FIRST_RESPONSE = {"slack": "ack", "discord": "deferred", "teams": "typing"}


@pytest.mark.parametrize(
    ("verb", "options", "says"),
    [
        ("next", {"tag": "storage"}, "Where should a 1 TB checkpoint go"),
        ("close", {}, "Closed"),
        ("leaderboard", {}, "Leaderboard, this week"),
        ("stats", {}, "0 answered"),
        ("settings", {}, "a question stays open"),
        ("schedule", {}, "There is no daily question"),
        ("review", {}, "Nothing to review yet"),
    ],
)
async def test_every_command_answers_in_time_while_the_database_is_held(
    chat: Any, verb: str, options: dict[str, Any], says: str
) -> None:
    if verb == "close":
        await chat.card("storage")
    first, seen = await chat.first_response_while_held("quiz", verb, options, user="ada")
    # The platform had its first response while the database kept every query waiting.
    assert first == FIRST_RESPONSE[chat.platform]
    assert says in seen


# ---------------------------------------------------------------- learning tracks


async def posted_with(chat: Any, part: str) -> str:
    """Wait until a channel post contains ``part``; return that post."""
    found: list[str] = []

    async def there() -> bool:
        found[:] = [p for p in chat.posted() if part in p]
        return bool(found)

    await eventually(there)
    return found[-1]


async def daily_card_out(chat: Any, slot: str) -> None:
    """Wait until the daily card of ``slot`` is posted (so that nothing posts meanwhile)."""

    async def out() -> bool:
        rnd = await open_round(chat)
        return rnd is not None and rnd.slot == slot and rnd.message_ref is not None

    await eventually(out)


async def test_with_no_track_running_the_tracks_are_listed(chat: Any) -> None:
    seen = await chat.command("quiz", "track", {}, user="bob")
    assert seen.private
    assert "No learning track is running here" in seen
    assert "two-days" in seen and "Two days of clusters, 2 units" in seen
    listed = await chat.command("quiz", "track-list", {}, user="bob")
    assert listed.private and "two-days" in listed


async def test_a_member_cannot_start_a_track(chat: Any) -> None:
    options = {"name": "two-days", "time": "09:05", "tz": "UTC"}
    seen = await chat.command("quiz", "track-start", options, user="bob")
    assert seen.private and "Only admins can start or stop a learning track" in seen
    assert await chat.engine.tracks.store.track_run(chat.place) is None
    assert await schedule_store_of(chat.engine).get_schedule(chat.place) is None


async def test_an_unknown_track_is_refused_with_the_nearest_name(chat: Any) -> None:
    seen = await chat.command("quiz", "track-start", {"name": "two-dayz"}, user="admin")
    assert seen.private and "There is no track" in seen and "two-days" in seen
    assert await chat.engine.tracks.store.track_run(chat.place) is None


async def test_a_track_needs_a_time_where_there_is_no_schedule(chat: Any) -> None:
    seen = await chat.command("quiz", "track-start", {"name": "two-days"}, user="admin")
    assert seen.private and "this channel has no daily question yet" in seen
    assert await chat.engine.tracks.store.track_run(chat.place) is None


async def test_a_track_opens_a_unit_each_day_and_ends_with_a_summary(chat: Any) -> None:
    options = {"name": "two-days", "time": "09:05", "tz": "UTC"}
    started = await chat.command("quiz", "track-start", options, user="admin")
    assert started.private and "Started Two days of clusters here: 2 units" in started
    again = await chat.command("quiz", "track-start", options, user="admin")
    assert "is already running here" in again

    # Day 1: the unit's post, then its question as the daily card.
    chat.clock.advance(minutes=5)
    card = await chat.scheduled_card()
    day = await posted_with(chat, "unit 1 of 2")
    assert "Two days of clusters" in day and "Links" in day
    assert "The network between the nodes comes first." in day
    assert (await chat.engine.get_round(card.round_id)).question_id == "slack-test-interconnect"
    await chat.click(card, "A", user="ada")
    await chat.click(card, "B", user="bob")

    mine = await chat.track(user="ada")
    assert mine.seen.private
    assert "This channel is on unit 1 of 2: Links." in mine.seen
    assert "You have done 1 of the 1 units opened so far." in mine.seen
    assert "(1 person done)" in mine.seen
    assert mine.values == []  # nothing left to ask ada
    bobs = await chat.track(user="bob")
    assert "You have done 0 of the 1 units" in bobs.seen
    assert bobs.values == []  # bob's missed card is not due again yet
    assert "falls due" in bobs.seen

    # Day 2: the second unit; ada answers it privately from /quiz track.
    chat.clock.advance(days=1)
    await posted_with(chat, "unit 2 of 2")
    await daily_card_out(chat, "2026-03-03")
    asked = await chat.track(user="ada")
    assert "Storage" in asked.seen and asked.values
    assert all(v.startswith("track:slack-test-checkpoint:") for v in asked.values)
    told = await chat.review_click(asked, 0, user="ada")  # A: the right answer
    assert told.private and "Right!" in told
    done = await chat.track(user="ada")
    assert "You have done 2 of the 2 units opened so far." in done.seen
    me = await chat.command("quiz", "me", {}, user="ada")
    assert "Track Two days of clusters: 2 of 2 units done so far (2 in all)." in me

    # Day 3: the summary, and a daily question as before.
    chat.clock.advance(days=1)
    summary = await posted_with(chat, "is complete")
    await daily_card_out(chat, "2026-03-04")
    assert "Two days of clusters" in summary and "is complete: 2 units." in summary
    assert "Units done, one count per unit: 1, 1." in summary
    assert f"Finished every unit: {chat.mention('ada')}." in summary
    assert "2 people completed at least one unit." not in summary
    assert "1 person completed at least one unit." in summary
    ended = await chat.command("quiz", "track", {}, user="ada")
    assert "It ended after 2 of 2 units." in ended


async def test_an_admin_stops_a_track_and_the_schedule_stays(chat: Any) -> None:
    await chat.command("quiz", "schedule", {"time": "09:05", "tz": "UTC"}, user="admin")
    started = await chat.command("quiz", "track-start", {"name": "two-days"}, user="admin")
    assert "Started Two days of clusters here" in started
    refused = await chat.command("quiz", "track-stop", {}, user="bob")
    assert "Only admins" in refused
    stopped = await chat.command("quiz", "track-stop", {}, user="admin")
    assert stopped.private and "Stopped Two days of clusters after 0 of 2 units." in stopped
    assert await schedule_store_of(chat.engine).get_schedule(chat.place) is not None
    nothing = await chat.command("quiz", "track-stop", {}, user="admin")
    assert "No learning track is running here" in nothing


# ---------------------------------------------------------------- practice

CHECKPOINT, INTERCONNECT = "slack-test-checkpoint", "slack-test-interconnect"


async def test_practice_asks_due_then_new_privately_and_a_missed_due_card_comes_back(
    chat: Any,
) -> None:
    card = await chat.card("storage")
    await chat.click(card, "B", user="dee")
    await chat.command("quiz", "close", {}, user="admin")
    await chat.revealed(card)
    chat.clock.advance(days=1)
    before = await chat.engine.leaderboard(
        chat.place.platform, chat.place.workspace, Period.ALL, "x"
    )
    posted = chat.public_posts()

    first = await chat.practice({"count": 2}, user="dee")
    assert first.seen.private and "Practice 1: a question due again" in first.seen
    assert "Where should a 1 TB checkpoint go" in first.seen
    assert "2 left in this session" not in first.seen and "1 left in this session" in first.seen
    choices = [f"practice:{CHECKPOINT}:{k}" for k in "ABC"]
    assert first.values == choices

    wrong = await chat.press(first, f"practice:{CHECKPOINT}:B", user="dee")
    assert wrong.seen.private and "Not this time." in wrong.seen
    assert "Why not" in wrong.seen
    assert "One server's network link caps every reader." in wrong.seen
    assert "It comes back in this session until you get it right." in wrong.seen
    sure = [f"confidence:{CHECKPOINT}:sure", f"confidence:{CHECKPOINT}:guessed"]
    assert wrong.values == [*sure, "practice:next", "practice:stop"]

    new = await chat.press(wrong, "practice:next", user="dee")
    assert new.seen.private and "Practice 2: a new question" in new.seen
    assert f"practice:{INTERCONNECT}:A" in new.values
    right = await chat.press(new, f"practice:{INTERCONNECT}:A", user="dee")
    assert "Right!" in right.seen and "RDMA" in right.seen
    assert right.values[-2:] == ["practice:next", "practice:stop"]  # the missed card is owed

    again = await chat.press(right, "practice:next", user="dee")
    assert (
        "Practice 3: a question due again" in again.seen
        and "The last one of this session." in again.seen
    )
    done = await chat.press(again, f"practice:{CHECKPOINT}:A", user="dee")
    assert "Right!" in done.seen and "Practice done: 2 of 3 right." in done.seen
    assert done.values == [*sure, "quiz:practice"]

    assert chat.public_posts() == posted, "practice posted in the channel"
    after = await chat.engine.leaderboard(
        chat.place.platform, chat.place.workspace, Period.ALL, "x"
    )
    assert after == before, "practice changed the scores"


async def test_a_practice_answer_counts_once_and_stop_ends_the_session(chat: Any) -> None:
    first = await chat.practice({"topic": "bank", "count": 3}, user="eve")
    assert "Practice 1: a new question" in first.seen
    value = first.values[0]
    answered = await chat.press(first, value, user="eve")
    assert "Right!" in answered.seen or "Not this time." in answered.seen
    twice = await chat.press(first, value, user="eve")
    assert twice.seen.private and "answered already" in twice.seen
    stopped = await chat.press(answered, "practice:stop", user="eve")
    assert (
        stopped.seen.private
        and "Practice stopped:" in stopped.seen
        and "of 1 right" in stopped.seen
    )
    assert stopped.values == ["quiz:practice"]
    gone = await chat.press(answered, "practice:next", user="eve")
    assert "You have no practice session" in gone.seen
    restarted = await chat.press(stopped, "quiz:practice", user="eve")
    assert "Practice 1: a new question" in restarted.seen


async def test_practice_on_an_unknown_topic_is_refused_and_starts_nothing(chat: Any) -> None:
    seen = await chat.command("quiz", "practice", {"topic": "nosuchtopic"}, user="fay")
    assert seen.private and "No topic is called" in seen and "The topics: bank." in seen
    store, fay = chat.engine.store, str(chat.uid("fay"))
    assert await store.practice_session(chat.place.platform, chat.place.workspace, fay) is None


async def test_practice_with_nothing_left_says_so(chat: Any) -> None:
    for user_key in ("A", "A"):
        shown = await chat.practice({"count": 1}, user="cy")
        if not shown.values:
            break
        await chat.press(shown, shown.values[0].rsplit(":", 1)[0] + ":" + user_key, user="cy")
    empty = await chat.practice({}, user="cy")
    assert empty.seen.private and "Nothing to practise" in empty.seen


async def test_practice_says_the_same_on_every_face(face: Any) -> None:
    # A newcomer's first new question is the one nearest the target rate: the medium one.
    seen = await face.practise_once("bank", "B", user="bob")
    assert seen.private
    assert "Practice 1: a new question" in seen
    assert "A training job spread over 16 nodes" in seen
    assert "Not this time." in seen and "Why not" in seen
    assert "At 1 Gb/s a 140 GB all-reduce takes many minutes per step." in seen
    assert "InfiniBand moves data with RDMA" in seen
    assert "Practice done: 0 of 1 right." in seen


# ---------------------------------------------------------------- confidence


async def test_i_was_sure_on_a_wrong_answer_is_told_plainly_and_re_rates_the_card(
    chat: Any,
) -> None:
    first = await chat.practice({"count": 2}, user="ada")
    question = first.values[0].split(":")[1]
    wrong = await chat.press(first, f"practice:{question}:D", user="ada")
    assert "Not this time." in wrong.seen
    sure, guessed = f"confidence:{question}:sure", f"confidence:{question}:guessed"
    assert wrong.values[:2] == [sure, guessed]
    key = CardKey(chat.place.platform, chat.place.workspace, str(chat.uid("ada")), question)
    before = await chat.engine.store.card(key)
    told = await chat.press(wrong, sure, user="ada")
    assert told.seen.private and "You were sure, and it was wrong" in told.seen
    after = await chat.engine.store.card(key)
    assert before is not None and after is not None and after.version == before.version + 1
    again = await chat.press(wrong, guessed, user="ada")
    assert "said how sure you were of that answer already" in again.seen
    assert await chat.engine.store.card(key) == after


async def test_i_guessed_after_a_right_round_answer_brings_it_back_sooner(chat: Any) -> None:
    card = await chat.card("storage")
    right = await chat.click(card, "A", user="cy")
    key = CardKey(chat.place.platform, chat.place.workspace, str(chat.uid("cy")), CHECKPOINT)
    before = await chat.engine.store.card(key)
    assert before is not None
    shown = await chat.round_offers(user="cy")
    if chat.platform == "teams":
        # An invoke's answer is text alone: the optional buttons are left out of it.
        assert shown.values == [] and "Right!" in right
        return
    assert shown.values == [
        f"confidence:{CHECKPOINT}:sure",
        f"confidence:{CHECKPOINT}:guessed",
        f"report:{CHECKPOINT}",
    ]
    told = await chat.press(shown, f"confidence:{CHECKPOINT}:guessed", user="cy")
    assert told.seen.private and "comes back sooner" in told.seen
    after = await chat.engine.store.card(key)
    assert after is not None and after.due_at < before.due_at


# ---------------------------------------------------------------- /quiz me


async def test_me_shows_cards_due_mastery_and_a_practice_button_that_starts_one(
    chat: Any,
) -> None:
    card = await chat.card("storage")
    await chat.click(card, "B", user="dee")
    await chat.command("quiz", "close", {}, user="admin")
    await chat.revealed(card)
    chat.clock.advance(days=1, minutes=1)
    page = await chat.me_page(user="dee")
    assert page.seen.private and "Your quiz" in page.seen
    assert "1 due: practise them with" in page.seen
    # Mastery of the one topic begun: a recall chance a day after a miss, never 100%.
    assert "Mastery:" in page.seen and "bank" in page.seen and "%" in page.seen
    assert "quiz:practice" in page.values
    started = await chat.press(page, "quiz:practice", user="dee")
    assert started.seen.private and "Practice 1: a question due again" in started.seen
    assert f"practice:{CHECKPOINT}:A" in started.values


async def test_me_is_the_same_page_on_every_face(face: Any) -> None:
    seen = await face.command("quiz", "me", {}, user="eve")
    assert seen.private and "Your quiz" in seen and "0 points, 0 of 0 right" in seen
    assert "Mastery: no topic begun yet" in seen


async def test_me_before_any_answer_says_no_topic_begun(chat: Any) -> None:
    page = await chat.me_page(user="eve")
    assert "Mastery: no topic begun yet" in page.seen and "quiz:practice" in page.values


async def test_a_confidently_wrong_answer_is_told_so_plainly_on_every_face(face: Any) -> None:
    seen = await face.practise_sure("bank", "B", user="fay")
    assert seen.private and "Not this time." in seen
    assert "You were sure, and it was wrong: that is exactly the answer to remember." in seen
    place = face.place
    uid = "fay" if face.platform == "terminal" else str(face.uid("fay"))
    cards = await face.engine.store.cards(place.platform, place.workspace, uid)
    assert len(cards) == 1 and cards[0].version == 2  # answered, then re-rated


# ---------------------------------------------------------------- proposals


async def propose(chat: Any, qid: str, *, user: str = "bob", admin: bool = False) -> Any:
    """Write a question for the workspace as ``user`` would through the add form."""
    body = question_yaml(replace(make_question(qid), text=f"Which answer does {qid} want?"))
    return await chat.engine.submit(
        chat.place.platform,
        chat.place.workspace,
        body,
        author=str(chat.uid(user)),
        admin=admin,
        channel=chat.place.channel,
    )


def list_admin(chat: Any) -> None:
    """List the admin in QUIZBOT_ADMINS, as the people the bot tells of new proposals."""
    chat.core.admins = Admins(everywhere=frozenset({str(chat.uid("admin"))}))


async def notice(chat: Any, user: str, part: str) -> Any:
    """Wait for the bot to tell a person something privately, unprompted; return it."""

    async def arrived() -> bool:
        return any(part in n.seen for n in chat.notices(user))

    await eventually(arrived)
    return next(n for n in reversed(chat.notices(user)) if part in n.seen)


async def pending(chat: Any) -> list[Any]:
    return await chat.engine.proposals(chat.place.platform, chat.place.workspace)


async def proposal_of(chat: Any, qid: str) -> int:
    """Propose a question as a member; return the id of the proposal it waits as."""
    proposed = await propose(chat, qid)
    assert isinstance(proposed, Proposed), proposed
    return int(proposed.proposal_id)


async def proposals_shown(chat: Any) -> Any:
    """Return ``/quiz proposals`` as the admin sees it, with its buttons."""
    return await chat.shown("quiz", "proposals", {}, user="admin")


async def refused_to_a_member(chat: Any, shown: Any, value: str) -> None:
    """Press a proposal's button as a member: refused, nothing decided."""
    refused = await chat.press(shown, value, user="cy")
    assert "review proposed questions" in refused.seen.text


async def test_a_proposal_reaches_the_admins_and_an_approval_puts_it_live(chat: Any) -> None:
    list_admin(chat)
    pid = await proposal_of(chat, "our-fabric")
    approve = f"proposal:{pid}:approve"
    # The listed admin is told privately, with the question and its buttons where the
    # platform's private messages carry them (Discord's direct messages point to the command).
    told = await notice(chat, "admin", "proposed a question")
    assert "Which answer does our-fabric want?" in told.seen and "Answer:" in told.seen
    if chat.platform == "discord":
        assert told.values == [] and "/quiz proposals" in told.seen
    else:
        assert approve in told.values and f"proposal:{pid}:reject" in told.values
    shown = await proposals_shown(chat)
    assert shown.seen.private and f"Proposal {pid}" in shown.seen.text
    assert shown.values == [approve, f"proposal:{pid}:edit", f"proposal:{pid}:reject"]
    bank = await chat.engine.bank_for(chat.place.platform, chat.place.workspace)
    assert "our-fabric" not in bank
    done = await chat.press(shown, approve, user="admin")
    assert done.seen.private and "is live as revision 1" in done.seen.text
    bank = await chat.engine.bank_for(chat.place.platform, chat.place.workspace)
    assert bank.by_id("our-fabric").revision == 1
    told = await notice(chat, "bob", "was approved")
    assert "our-fabric" in told.seen
    # A second press changes nothing and says so.
    again = await chat.press(shown, approve, user="admin")
    assert "was approved already" in again.seen.text
    assert await pending(chat) == []
    assert "No proposed question waits" in await chat.command("quiz", "proposals", {}, user="admin")


async def test_a_rejection_with_a_reason_is_told_to_its_author(chat: Any) -> None:
    pid = await proposal_of(chat, "too-vague")
    options = {"action": "reject", "id": pid, "reason": "Too vague: say which fabric."}
    seen = await chat.command("quiz", "proposals", options, user="admin")
    assert seen.private and f"Rejected proposal {pid}" in seen
    told = await notice(chat, "bob", "was not accepted")
    assert "Too vague: say which fabric." in told.seen
    bank = await chat.engine.bank_for(chat.place.platform, chat.place.workspace)
    assert "too-vague" not in bank
    again = await chat.command("quiz", "proposals", {"action": "approve", "id": pid}, user="admin")
    assert "was rejected already" in again
    assert "too-vague" not in await chat.engine.bank_for(chat.place.platform, chat.place.workspace)


async def test_a_member_cannot_list_or_decide_proposals(chat: Any) -> None:
    pid = await proposal_of(chat, "members-own")
    listed = await chat.command("quiz", "proposals", {}, user="bob")
    assert listed.private and "review proposed questions" in listed
    shown = await proposals_shown(chat)
    for decision in ("approve", "reject", "edit"):
        await refused_to_a_member(chat, shown, f"proposal:{pid}:{decision}")
    typed = await chat.command("quiz", "proposals", {"action": "approve", "id": pid}, user="cy")
    assert typed.private and "review proposed questions" in typed
    [still] = await pending(chat)
    assert still.id == pid and still.decided_by is None
    report = await chat.command("quiz", "report", {}, user="admin")
    assert "1 proposed question(s) wait for review" in report
    # An id that is not this workspace's is as unknown as one that never was.
    unknown = await chat.command(
        "quiz", "proposals", {"action": "approve", "id": pid + 100}, user="admin"
    )
    assert f"There is no proposal {pid + 100}." in unknown


async def test_an_admin_makes_everyones_questions_wait_for_review(chat: Any) -> None:
    shown = await chat.command("quiz", "settings", {}, user="bob")
    assert "by anyone but an admin wait for an admin's review" in shown
    assert isinstance(await propose(chat, "admins-first", user="admin", admin=True), Published)
    member = await chat.command("quiz", "settings", {"review": "everyone"}, user="bob")
    assert member.private and "can change this channel's quiz settings" in member
    seen = await chat.command("quiz", "settings", {"review": "everyone"}, user="admin")
    assert seen.private and "Saved." in seen and "the admins' too, waits" in seen
    stored = await chat.engine.store.workspace_settings(chat.place.platform, chat.place.workspace)
    assert stored.review is ReviewScope.EVERYONE
    assert isinstance(await propose(chat, "admins-second", user="admin", admin=True), Proposed)
    bank = await chat.engine.bank_for(chat.place.platform, chat.place.workspace)
    assert "admins-first" in bank and "admins-second" not in bank
    await chat.command("quiz", "settings", {"review": "others"}, user="admin")
    assert isinstance(await propose(chat, "admins-third", user="admin", admin=True), Published)


async def test_an_admin_edits_a_proposal_in_the_form_and_the_edit_goes_live(chat: Any) -> None:
    list_admin(chat)
    pid = await proposal_of(chat, "rough-draft")
    shown = await proposals_shown(chat)
    # Anyone else pressing Edit gets no form, and nothing changes.
    await refused_to_a_member(chat, shown, f"proposal:{pid}:edit")
    # The admin rewords it and gives the source the lint rules ask for.
    changes = {
        "question": "Which answer does the edited draft want?",
        "source_title": "NCCL documentation, environment variables",
        "source_url": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
    }
    held, sent = await chat.press_form(shown, f"proposal:{pid}:edit", changes, user="admin")
    assert held["id"] == "rough-draft" and held["question"] == "Which answer does rough-draft want?"
    assert sent.errors == {} and sent.seen is not None
    assert "rough-draft is live as revision 1" in sent.seen.text.replace("`", "")
    bank = await chat.engine.bank_for(chat.place.platform, chat.place.workspace)
    assert bank.by_id("rough-draft").text == "Which answer does the edited draft want?"
    decided = await chat.engine.proposal(pid)
    assert decided.edited and decided.decided_by == str(chat.uid("admin"))
    told = await notice(chat, "bob", "approved with an admin's edits")
    assert "rough-draft" in told.seen


async def test_an_admin_by_the_platforms_own_rules_decides_with_the_buttons(chat: Any) -> None:
    # Nobody is listed in QUIZBOT_ADMINS: the workspace admin (Slack), the member with Manage
    # Server (Discord), the team's owner (Teams, whose buttons in the one-to-one chat carry the
    # team they were sent from) decides.
    pid = await proposal_of(chat, "owners-call")
    shown = await proposals_shown(chat)
    await refused_to_a_member(chat, shown, f"proposal:{pid}:approve")
    done = await chat.press(shown, f"proposal:{pid}:approve", user="admin")
    assert "is live as revision 1" in done.seen.text
    bank = await chat.engine.bank_for(chat.place.platform, chat.place.workspace)
    assert bank.by_id("owners-call").revision == 1


async def test_a_question_a_member_writes_in_the_form_is_approved_and_asked(chat: Any) -> None:
    from tests.conformance.test_forms import GOOD

    list_admin(chat)
    sent = await chat.add(GOOD, user="bob")
    assert sent.errors == {} and sent.seen is not None and "for review" in sent.seen
    [waiting] = await pending(chat)
    assert waiting.author == str(chat.uid("bob")) and waiting.channel is not None
    told = await notice(chat, "admin", "proposed a question")
    assert "nvidia-smi topo -m" in told.seen
    shown = await proposals_shown(chat)
    done = await chat.press(shown, f"proposal:{waiting.id}:approve", user="admin")
    assert "is live as revision 1" in done.seen.text
    # Told where the question was written; the next round of its tag asks it.
    await notice(chat, "bob", "was approved")
    card = await chat.card("handwritten")
    asked = await chat.engine.question_of(await chat.engine.get_round(card.round_id))
    assert (asked.id, asked.revision) == ("gpu-topology-matrix", 1)


async def test_reject_asks_for_the_reason_and_its_author_is_told_it(chat: Any) -> None:
    list_admin(chat)
    pid = await proposal_of(chat, "off-topic")
    shown = await proposals_shown(chat)
    why = {"reason": "Off topic: the bank is about training at scale."}
    held, sent = await chat.press_form(shown, f"proposal:{pid}:reject", why, user="admin")
    assert held == {"reason": ""} and sent.errors == {} and sent.seen is not None
    assert f"Rejected proposal {pid}" in sent.seen.text
    decided = await chat.engine.proposal(pid)
    assert decided.reason == "Off topic: the bank is about training at scale."
    told = await notice(chat, "bob", "was not accepted")
    assert "Off topic: the bank is about training at scale." in told.seen
    assert "off-topic" not in await chat.engine.bank_for(chat.place.platform, chat.place.workspace)


# ---------------------------------------------------------------- hiding a question

CHECKPOINT = "slack-test-checkpoint"  # the test bank's one question tagged storage


async def storage_is_asked(chat: Any, workspace: str | None = None) -> bool:
    bank = await chat.engine.bank_for(chat.place.platform, workspace or chat.place.workspace)
    return CHECKPOINT in {q.id for q in bank.filter("storage")}


async def test_an_admin_hides_a_bundled_question_and_shows_it_again(chat: Any) -> None:
    hidden = await chat.command("quiz", "hide", {"id": CHECKPOINT}, user="admin")
    assert hidden.private and "is hidden in this workspace" in hidden
    assert f"/quiz unhide {CHECKPOINT}" in hidden.text.replace("`", "")
    again = await chat.command("quiz", "hide", {"id": CHECKPOINT}, user="admin")
    assert again.private and "was hidden already" in again
    # The next round leaves it out: the only question tagged storage is gone from here alone.
    gone = await chat.command("quiz", "next", {"tag": "storage"})
    assert gone.private and "storage" in gone
    assert await chat.engine.open_round(chat.place) is None
    assert not await storage_is_asked(chat)
    assert await storage_is_asked(chat, workspace="another-workspace")
    # Shown again, the next round asks it.
    shown = await chat.command("quiz", "unhide", {"id": CHECKPOINT}, user="admin")
    assert shown.private and "is back in this workspace's rounds" in shown
    twice = await chat.command("quiz", "unhide", {"id": CHECKPOINT}, user="admin")
    assert "is not hidden: nothing was changed" in twice
    card = await chat.card("storage")
    asked = await chat.engine.question_of(await chat.engine.get_round(card.round_id))
    assert asked.id == CHECKPOINT


async def test_a_member_cannot_hide_or_unhide_and_a_bad_id_changes_nothing(chat: Any) -> None:
    refused = await chat.command("quiz", "hide", {"id": CHECKPOINT}, user="bob")
    assert refused.private and "hide questions or show them again" in refused
    assert await storage_is_asked(chat)
    unknown = await chat.command("quiz", "hide", {"id": "no-such-question"}, user="admin")
    assert unknown.private and "has no question" in unknown and "nothing was changed" in unknown
    marked = await chat.command("quiz", "hide", {"id": "<!channel>"}, user="admin")
    # Teams' ingress drops markup it does not know before the grammar reads the line.
    why = "Give `id` too" if chat.platform == "teams" else "is not a question id"
    assert marked.private and why in marked
    if chat.platform == "slack":
        assert "<!channel>" not in marked.text and "&lt;!channel&gt;" in marked.text
    await chat.command("quiz", "hide", {"id": CHECKPOINT}, user="admin")
    member = await chat.command("quiz", "unhide", {"id": CHECKPOINT}, user="cy")
    assert member.private and "hide questions or show them again" in member
    assert not await storage_is_asked(chat)
    layer = await chat.engine.store.bank_layer(chat.place.platform, chat.place.workspace)
    assert layer.hidden == frozenset({CHECKPOINT})
