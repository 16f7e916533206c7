"""The forms of every chat platform: /quiz add and "Report a problem", written once.

Each driver opens the form the way its platform's users do (a Slack modal from the command's
trigger, a Discord modal in pages, a Teams card of inputs), fills it in and sends it, and reads
back what reached the wire: the refusal beside each field, or the private answer.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.bank.form import QUESTION_FIELDS
from bot.bank.loader import MAX_CHOICE_CHARS
from bot.links import LinkMaker
from bot.web import Dashboard
from tests.conformance.test_scenarios import TOKEN, notice
from tests.web.test_access import open_link
from tests.web.test_editing import edit_form, post

SECRET = "conformance-secret-0123456789-abcdef"

GOOD = {
    "question": "Which tool prints the GPU topology matrix of a node, NVLink paths included?",
    "A": "nvidia-smi topo -m",
    "B": "lspci -t -v -nn",
    "C": "numactl --hardware",
    "D": "ibv_devinfo -v",
    "answer": "A",
    "short": "nvidia-smi topo -m prints how each pair of GPUs and NICs is connected.",
    "full": (
        "nvidia-smi topo -m prints a matrix of every GPU and NIC pair with the link between "
        "them: NV# for NVLink, PIX or PXB for PCIe switches, SYS across the CPU sockets."
    ),
    "id": "gpu-topology-matrix",
    "tags": "handwritten tools",
    "difficulty": "easy",
    "source_title": "NCCL environment variables",
    "source_url": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
}


async def test_add_opens_the_question_form_with_every_field(chat: Any) -> None:
    fields = await chat.form_fields(user="bob")
    assert fields == [f.name for f in QUESTION_FIELDS]


async def test_a_question_added_in_the_form_is_asked_by_the_next_round(chat: Any) -> None:
    sent = await chat.add(GOOD, user="admin")
    assert sent.errors == {}
    assert sent.seen is not None and sent.seen.private
    assert "gpu-topology-matrix" in sent.seen and "next round" in sent.seen
    stored = await chat.engine.store.bank_layer(chat.place.platform, chat.place.workspace)
    assert [s.question_id for s in stored.questions] == ["gpu-topology-matrix"]
    card = await chat.card("handwritten")
    asked = await chat.engine.question_of(await chat.engine.get_round(card.round_id))
    assert asked.id == "gpu-topology-matrix" and asked.revision == 1
    assert "GPU topology matrix" in card.shown


async def test_bad_fields_are_refused_beside_each_field_and_nothing_is_saved(chat: Any) -> None:
    long_choice = "x" * (MAX_CHOICE_CHARS + 1)
    bad = GOOD | {"B": long_choice, "short": ""}
    sent = await chat.add(bad, user="admin")
    assert set(sent.errors) == {"B", "short"}, sent.errors
    assert "76 characters; at most 75" in sent.errors["B"]
    assert "Required" in sent.errors["short"]
    assert sent.seen is None
    stored = await chat.engine.store.bank_layer(chat.place.platform, chat.place.workspace)
    assert stored.questions == ()


async def test_a_duplicate_id_is_refused_at_the_id(chat: Any) -> None:
    taken = GOOD | {"id": "slack-test-checkpoint"}
    sent = await chat.add(taken, user="admin")
    assert list(sent.errors) == ["id"] and "Duplicate id" in sent.errors["id"]
    stored = await chat.engine.store.bank_layer(chat.place.platform, chat.place.workspace)
    assert stored.questions == ()


async def test_markup_and_mentions_are_refused_in_any_text(chat: Any) -> None:
    marked = GOOD | {
        "question": "Who gets pinged by <!channel> in a question?",
        "C": "@everyone",
        "full": f"Ask {'<@U1>'} about it.",
    }
    sent = await chat.add(marked, user="admin")
    assert set(sent.errors) == {"question", "C", "full"}, sent.errors
    # Quoted back inert: Discord breaks the mention with a zero-width space, Teams escapes the
    # Markdown with backslashes.
    said = {k: e.replace("\u200b", "").replace("\\", "") for k, e in sent.errors.items()}
    assert "<!channel>" in said["question"] and "@everyone" in said["C"]
    assert "mentions and chat markup are not allowed" in sent.errors["full"]
    stored = await chat.engine.store.bank_layer(chat.place.platform, chat.place.workspace)
    assert stored.questions == ()


async def test_a_members_question_is_sent_for_review_and_not_asked(chat: Any) -> None:
    sent = await chat.add(GOOD, user="bob")
    assert sent.errors == {}
    assert sent.seen is not None and sent.seen.private
    assert "for review" in sent.seen and "gpu-topology-matrix" in sent.seen
    stored = await chat.engine.store.bank_layer(chat.place.platform, chat.place.workspace)
    assert stored.questions == ()
    pending = await chat.engine.banks.proposals(chat.place.platform, chat.place.workspace)
    assert [p.question_id for p in pending] == ["gpu-topology-matrix"]


# ---------------------------------------------------------------- Report a problem

CHECKPOINT = "slack-test-checkpoint"


async def revealed_card(chat: Any) -> Any:
    """Ask the storage question, close the round and wait for its results: the card whose
    results carry the Report a problem button."""
    card = await chat.card("storage")
    await chat.command("quiz", "close", {}, user="admin")
    await chat.revealed(card)
    return card


async def test_report_a_problem_records_a_flag_as_flag_does_and_pauses_after_three(
    chat: Any,
) -> None:
    card = await revealed_card(chat)
    sent = await chat.report(card, {"reason": "wrong", "note": "the key should be B"}, user="bob")
    assert sent.errors == {} and sent.seen is not None and sent.seen.private
    assert "Thanks: reported" in sent.seen and "1 open report(s)" in sent.seen
    again = await chat.report(card, {"reason": "typo"}, user="bob")
    assert again.seen is not None and "You have reported" in again.seen
    long = await chat.report(card, {"reason": "typo", "note": "x" * 301}, user="cy")
    assert list(long.errors) == ["note"] and "300 characters" in long.errors["note"]
    await chat.report(card, {"reason": "unclear"}, user="cy")
    third = await chat.report(card, {"reason": "outdated"}, user="dee")
    assert third.seen is not None and "leaves the rotation" in third.seen
    flags = await chat.engine.open_flags(chat.place.platform, chat.place.workspace)
    assert sorted((f.question_id, f.reason.value, f.note) for f in flags) == [
        (CHECKPOINT, "outdated", None),
        (CHECKPOINT, "unclear", None),
        (CHECKPOINT, "wrong", "the key should be B"),
    ]
    # Paused: the only question tagged storage is asked no more in this workspace.
    gone = await chat.command("quiz", "next", {"tag": "storage"})
    assert gone.private and "storage" in gone
    assert await chat.engine.open_round(chat.place) is None


async def test_the_feedback_to_an_answer_offers_report_a_problem(chat: Any) -> None:
    card = await chat.card("storage")
    await chat.click(card, "B", user="cy")
    shown = await chat.round_offers(user="cy")
    if chat.platform == "teams":
        # An invoke's answer is text alone; the results card carries the report.
        assert shown.values == []
        return
    assert shown.values[-1] == f"report:{CHECKPOINT}"


async def test_discords_fix_it_reopens_the_form_holding_what_was_written(chat: Any) -> None:
    if chat.platform != "discord":
        pytest.skip(f"{chat.platform}: its form stays open with the errors (no Fix it)")
    sent = await chat.add(GOOD | {"B": "x" * 76}, user="admin")
    assert list(sent.errors) == ["B"]
    refusals = [
        m
        for m in chat.api.messages.values()
        if any(
            b["custom_id"] == "add:1" for row in m.get("components", []) for b in row["components"]
        )
    ]
    payload = chat.api.click(int(refusals[-1]["id"]), "add:1", user=chat.uid("admin"))
    await chat._interact(payload)
    modal = chat.api.modal_of(payload)
    assert modal is not None
    shown = {
        row["components"][0]["custom_id"]: row["components"][0].get("value")
        for row in modal["components"]
        if row["type"] == 1
    }
    # The page of the first refused field, holding what was written (clipped to the limit).
    assert shown["question"] == GOOD["question"] and shown["A"] == GOOD["A"]
    assert shown["B"] == "x" * 75


async def test_an_edit_on_the_dashboard_resolves_the_reports_and_each_reporter_is_told(
    chat: Any,
) -> None:
    card = await revealed_card(chat)
    for user, reason in (("bob", "wrong"), ("cy", "unclear"), ("dee", "typo")):
        sent = await chat.report(card, {"reason": reason}, user=user)
        assert sent.seen is not None and "Thanks: reported" in sent.seen
    paused = await chat.command("quiz", "next", {"tag": "storage"})
    assert paused.private and await chat.engine.open_round(chat.place) is None
    # The admin asks for the dashboard in chat and edits the question on its page.
    chat.core.links = LinkMaker(SECRET, "https://quiz.example.org")
    shown = await chat.command("quiz", "dashboard", {}, user="admin")
    (token,) = TOKEN.findall(shown.text)
    dashboard = Dashboard(engine=chat.engine, store=chat._sql, secret=SECRET, clock=chat.clock)
    app = web.Application()
    dashboard.mount(app)
    async with TestClient(TestServer(app)) as client:
        site = SimpleNamespace(client=client)
        opened = await open_link(site, f"/dashboard/open?token={token}")  # type: ignore[arg-type]
        assert opened.status == 303
        form = await edit_form(site, CHECKPOINT)  # type: ignore[arg-type]
        form["question"] = "Where should a checkpoint be written, said more clearly?"
        # The test bank's question draws lint warnings (no reference): the admin has read them.
        refused = await post(site, form, CHECKPOINT)  # type: ignore[arg-type]
        assert refused.status == 400 and "the lint rules warn" in await refused.text()
        saved = await post(site, form | {"allow_warnings": "yes"}, CHECKPOINT)  # type: ignore[arg-type]
        assert saved.status == 303, await saved.text()
        assert saved.headers["Location"] == f"/dashboard/questions/{CHECKPOINT}?saved=1"
        page = await (await client.get(saved.headers["Location"])).text()
        assert "It resolved the open reports of 3 player(s)" in page
    # Each reporter is told privately in chat, once; nobody else is.
    for user in ("bob", "cy", "dee"):
        told = await notice(chat, user, "you reported has been fixed")
        assert CHECKPOINT in told.seen and "revision 1" in told.seen
    assert not any("has been fixed" in n.seen for n in chat.notices("ada"))
    assert await chat.engine.open_flags(chat.place.platform, chat.place.workspace) == []
    report = await chat.command("quiz", "report", {}, user="admin")
    assert "Reported by players" not in report
    again = await chat.card("storage")
    asked = await chat.engine.question_of(await chat.engine.get_round(again.round_id))
    assert (asked.id, asked.revision) == (CHECKPOINT, 1)
    assert asked.text == "Where should a checkpoint be written, said more clearly?"
    for user in ("bob", "cy", "dee"):
        assert sum("has been fixed" in n.seen for n in chat.notices(user)) == 1
