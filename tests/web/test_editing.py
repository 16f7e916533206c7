"""Editing a question on the dashboard: a save is a new revision checked as the command line
checks one, and every forged, replayed or out-of-scope post changes nothing and gets a 403."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest

from bot import links
from bot.bank.workspace import question_yaml
from bot.engine.model import FlagReason, Place
from bot.links import Purpose, Scope
from bot.scheduler.timers import tell_reporters
from bot.web import COOKIE
from tests.conftest import make_question
from tests.scheduler.conftest import RecordingPublisher
from tests.web.conftest import ADMIN, ALICE, BOB, T1, T2, Site
from tests.web.test_access import open_link

QID = "second-q"
REPORTS = Place(T1.platform, T1.workspace, "C07REPORTS01")


class FormReader(HTMLParser):
    """Read the fields of each form of a page as a browser would send them."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str]] = []
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append({})
        elif not self.forms:
            return
        elif tag == "input" and a.get("name") and a.get("type") != "checkbox":
            self.forms[-1][a["name"]] = a.get("value", "")
        elif tag == "textarea":
            self._textarea = a["name"]
            self.forms[-1][a["name"]] = ""
        elif tag == "select":
            self._select = a["name"]
        elif tag == "option" and self._select and "selected" in a:
            self.forms[-1][self._select] = a["value"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.forms[-1][self._textarea] += data


def forms_of(page: str) -> list[dict[str, str]]:
    reader = FormReader()
    reader.feed(page)
    return reader.forms


async def edit_form(site: Site, qid: str = QID) -> dict[str, str]:
    """Return the edit form of a question's page, as its fields would be sent."""
    page = await site.client.get(f"/dashboard/questions/{qid}")
    assert page.status == 200
    [form] = [f for f in forms_of(await page.text()) if "question" in f]
    return {**form, "action": "save"}


async def post(site: Site, data: dict[str, str], qid: str = QID, **headers: str):
    return await site.client.post(
        f"/dashboard/questions/{qid}", data=data, headers=headers, allow_redirects=False
    )


async def history(site: Site, ws: str = T1.workspace, qid: str = QID) -> list:
    return await site.dashboard.store.question_history("slack", ws, qid)  # type: ignore[attr-defined]


async def nothing_changed(site: Site) -> None:
    for ws in (T1.workspace, T2.workspace):
        assert await history(site, ws) == []
        layer = await site.dashboard.store.bank_layer("slack", ws)  # type: ignore[attr-defined]
        assert layer.questions == () and layer.hidden == frozenset()


async def refused(response, words: str) -> None:
    assert response.status == 403
    text = await response.text()
    assert "Not allowed" in text and words in text


async def test_an_admin_edits_a_files_question_and_its_reporters_are_told(banked: Site) -> None:
    card = await banked.engine.start_round(REPORTS, question_id=QID)
    await banked.engine.close(card.round.id)
    await banked.engine.flag(REPORTS, ALICE, FlagReason.WRONG, "B is right")
    await banked.engine.flag(REPORTS, BOB, FlagReason.TYPO, None)
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await edit_form(banked)
    # Prefilled with the files' question.
    assert form["question"] == f"Question {QID}?" and form["answer"] == "B"
    assert form["choice_C"] == f"choice C of {QID}" and form["revision"] == ""
    # Sent as it is, it stores nothing: the question stays the files'.
    untouched = await post(banked, form)
    assert untouched.headers["Location"] == f"/dashboard/questions/{QID}?done=unchanged"
    assert await history(banked) == []
    form["question"] = "Which of these is the second question's answer?"
    form["full"] = "First paragraph.\r\n\r\nSecond paragraph."
    saved = await post(banked, form)
    assert saved.status == 303
    assert saved.headers["Location"] == f"/dashboard/questions/{QID}?saved=1"
    page = await (await banked.client.get(saved.headers["Location"])).text()
    assert "Saved as revision 1. It resolved the open reports of 2 player(s)" in page
    assert "No open reports." in page and "Paused" not in page
    assert "revision 1" in page and "Second paragraph." in page
    # The workspace's bank has its own question now; the other workspace keeps the files' one.
    mine = (await banked.engine.bank_for("slack", T1.workspace)).by_id(QID)
    assert mine.revision == 1 and mine.text.startswith("Which of these")
    assert mine.full == "First paragraph.\n\nSecond paragraph."
    assert (await banked.engine.bank_for("slack", T2.workspace)).by_id(QID).revision is None
    [stored] = await history(banked)
    assert stored.author == ADMIN
    # The reporters are told privately, once, as for a revision imported on the command line.
    publisher = RecordingPublisher()
    assert await tell_reporters(banked.engine, publisher) == 2
    assert sorted(user for _, user, _ in publisher.of("dm")) == [ALICE, BOB]
    assert all(QID in text and "revision 1" in text for _, _, text in publisher.of("dm"))
    # The form now holds revision 1; saving it unchanged writes nothing.
    again = await edit_form(banked)
    assert again["revision"] == "1" and again["question"] == mine.text
    same = await post(banked, again)
    assert same.headers["Location"].endswith("?done=unchanged")
    again["tags"] = "ordering basics"
    assert (await post(banked, again)).headers["Location"].endswith("?saved=2")
    assert [r.revision for r in await history(banked)] == [1, 2]


async def test_bad_input_is_marked_next_to_its_fields_and_nothing_is_saved(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await edit_form(banked)
    form.update(
        question="  ",
        choice_C="",  # D is left: the keys have a gap
        answer="E",
        full="Ping <!channel> about it",
        tags="Bad_Tag",
        ref_title_0="",
        ref_url_0="javascript:alert(1)",
    )
    response = await post(banked, form)
    assert response.status == 400
    page = await response.text()
    assert "Nothing was saved" in page

    def problems(name: str) -> str:
        found = re.search(rf'<div class="problems" id="problems-{name}">(.*?)</div>', page, re.S)
        assert found, name
        return found.group(1)

    assert "question is empty" in problems("question")
    assert "choice C is missing" in problems("choice_D")
    assert "tag &#39;Bad_Tag&#39; must be lowercase" in problems("tags")
    assert "must start with http:// or https://" in problems("references")
    # What was sent is shown again, escaped, for fixing.
    refill = next(f for f in forms_of(page) if "question" in f)
    assert refill["full"] == "Ping <!channel> about it" and refill["tags"] == "Bad_Tag"
    await nothing_changed(banked)
    # With the loader's problems fixed, the markup check and the answer are next.
    form.update(question="Fixed?", choice_C="back", tags="fine", ref_url_0="")
    page = await (await post(banked, form)).text()
    assert "answer &#39;E&#39; is not one of the choice keys" in problems("answer")
    form["answer"] = "B"
    page = await (await post(banked, form)).text()
    assert "mentions and chat markup are not allowed" in problems("full")
    await nothing_changed(banked)


async def test_a_lint_warning_stops_the_save_until_it_is_accepted(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await edit_form(banked)
    form["choice_D"] = "All of the above"
    response = await post(banked, form)
    assert response.status == 400
    page = await response.text()
    assert "[all-none-above]" in page and 'name="allow_warnings"' in page
    await nothing_changed(banked)
    saved = await post(banked, {**form, "allow_warnings": "yes"})
    assert saved.status == 303 and saved.headers["Location"].endswith("?saved=1")


async def test_a_form_older_than_the_latest_revision_does_not_overwrite_it(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    mine, theirs = await edit_form(banked), await edit_form(banked)
    theirs["question"] = "Saved first?"
    assert (await post(banked, theirs)).headers["Location"].endswith("?saved=1")
    mine["question"] = "Saved second?"
    response = await post(banked, mine)
    assert response.status == 400
    page = await response.text()
    assert "revision 1 is the latest" in page
    assert [r.revision for r in await history(banked)] == [1]
    # Sent again from the page it came back on, it replaces revision 1.
    resent = next(f for f in forms_of(page) if "question" in f)
    assert resent["question"] == "Saved second?" and resent["revision"] == "1"
    assert (await post(banked, {**resent, "action": "save"})).status == 303
    assert [r.revision for r in await history(banked)] == [1, 2]


async def test_hide_and_unhide(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    page = await (await banked.client.get(f"/dashboard/questions/{QID}")).text()
    [hide] = [f for f in forms_of(page) if "question" not in f and "csrf" in f]
    done = await post(banked, {**hide, "action": "hide"})
    assert done.headers["Location"] == f"/dashboard/questions/{QID}?done=hidden"
    assert QID not in await banked.engine.bank_for("slack", T1.workspace)
    assert QID in await banked.engine.bank_for("slack", T2.workspace)
    page = await (await banked.client.get(done.headers["Location"])).text()
    assert "Hidden in this workspace." in page and 'id="unhide"' in page
    done = await post(banked, {**hide, "action": "unhide"})
    assert done.headers["Location"].endswith("?done=shown")
    assert QID in await banked.engine.bank_for("slack", T1.workspace)


# ---------------------------------------------------------------- refusals


async def test_a_post_without_the_form_token_changes_nothing(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await edit_form(banked)
    for token in (None, "", "garbage", "é", form["csrf"][:-2] + "AA", "A" * 500):
        data = {**form, "question": "Forged?"}
        if token is None:
            del data["csrf"]
        else:
            data["csrf"] = token
        await refused(await post(banked, data), "not sent from a page of your session")
        await refused(await post(banked, {**data, "action": "hide"}), "nothing was changed")
    await nothing_changed(banked)


async def test_a_token_of_another_session_changes_nothing(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    first = await edit_form(banked)
    # The same admin opens a second link: a new session, with a token of its own.
    banked.client.session.cookie_jar.clear()
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    second = await edit_form(banked)
    assert second["csrf"] != first["csrf"]
    await refused(await post(banked, {**second, "csrf": first["csrf"]}), "your session")
    # Another workspace's admin session's token does not pass in this one either.
    banked.client.session.cookie_jar.clear()
    assert (await open_link(banked, banked.link(T2, "U9"))).status == 303
    other = await edit_form(banked)
    banked.client.session.cookie_jar.clear()
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    await refused(await post(banked, {**first, "csrf": other["csrf"]}), "your session")
    await nothing_changed(banked)


async def test_a_personal_session_changes_nothing(banked: Site) -> None:
    assert (await open_link(banked, banked.link(T1, BOB, Scope.ME))).status == 303
    # Even with the form token its own session would have.
    cookie = banked.client.session.cookie_jar.filter_cookies(banked.client.make_url("/dashboard"))
    secret = banked.dashboard.secret
    grant = links.verify(secret, Purpose.SESSION, cookie[COOKIE].value, banked.clock())
    token = links.form_token(secret, grant)
    data = {"csrf": token, "action": "save", "question": "Mine now?", "answer": "A"}
    await refused(await post(banked, data), "your own page only")
    await refused(await post(banked, {**data, "action": "hide"}), "your own page only")
    await nothing_changed(banked)


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}],
)
async def test_a_post_from_another_site_changes_nothing(banked: Site, headers) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await edit_form(banked)
    await refused(await post(banked, {**form, "question": "Cross-site?"}, **headers), "own pages")
    await nothing_changed(banked)


async def test_another_workspaces_question_cannot_be_posted(banked: Site) -> None:
    own = make_question("t1-only")
    await banked.dashboard.store.save_revisions(  # type: ignore[attr-defined]
        "slack", T1.workspace, [(own.id, question_yaml(own))], author=ADMIN, at=banked.clock()
    )
    assert (await open_link(banked, banked.link(T2, "U9"))).status == 303
    form = await edit_form(banked)  # a valid token of T2's session
    assert (await banked.client.get("/dashboard/questions/t1-only")).status == 404
    for action in ("save", "hide"):
        response = await post(banked, {**form, "action": action}, qid="t1-only")
        await refused(response, "has no question t1-only")
    assert await history(banked, T2.workspace, "t1-only") == []
    assert [r.revision for r in await history(banked, T1.workspace, "t1-only")] == [1]
    layer = await banked.dashboard.store.bank_layer("slack", T2.workspace)  # type: ignore[attr-defined]
    assert layer.hidden == frozenset() and layer.questions == ()
    # Nor a computed, unknown or malformed id, nor an action the page does not offer.
    for qid in ("tpl%231", "no-such-q", "SEED-Q"):
        await refused(await post(banked, form, qid=qid), "nothing was changed")
    await refused(await post(banked, {**form, "action": "drop"}), "nothing was changed")


async def test_a_post_replayed_after_the_sessions_were_revoked_changes_nothing(
    banked: Site,
) -> None:
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await edit_form(banked)
    form["question"] = "Replayed?"
    banked.clock.advance(seconds=1)
    await banked.dashboard.store.revoke_dashboard_sessions(  # type: ignore[attr-defined]
        "slack", T1.workspace, banked.clock()
    )
    await refused(await post(banked, form), "This session was ended")
    await refused(await post(banked, {**form, "action": "hide"}), "This session was ended")
    await nothing_changed(banked)


async def test_no_form_without_workspace_banks(site: Site) -> None:
    assert (await open_link(site, site.link(T1, ADMIN))).status == 303
    page = await (await site.client.get(f"/dashboard/questions/{QID}")).text()
    assert 'id="edit"' not in page and "csrf" not in page


async def test_a_session_without_a_nonce_is_asked_to_open_a_new_link(banked: Site) -> None:
    # A cookie signed before sessions carried a nonce: still a session, but no form token.
    old = links.sign(
        banked.dashboard.secret,
        Purpose.SESSION,
        links.Grant(
            "slack", T1.workspace, Scope.WORKSPACE, ADMIN, banked.clock() + timedelta(hours=1)
        ),
    )
    banked.client.session.cookie_jar.update_cookies({COOKIE: old})
    assert (await banked.client.get(f"/dashboard/questions/{QID}")).status == 200
    empty = links.form_token(
        banked.dashboard.secret,
        links.verify(banked.dashboard.secret, Purpose.SESSION, old, banked.clock()),
    )
    data = {"csrf": empty, "action": "hide"}
    await refused(await post(banked, data), "Ask the bot for a new link")
    await nothing_changed(banked)


def test_a_form_token_is_bound_to_its_session_and_survives_a_key_rotation() -> None:
    old, new = "o" * 40, "n" * 40
    until = links.datetime(2026, 3, 4, 12, tzinfo=links.UTC)
    session = links.Grant("slack", T1.workspace, Scope.WORKSPACE, ADMIN, until, "nonce-1")
    token = links.form_token(old, session)
    assert links.form_token_ok(f"{new},{old}", session, token)
    assert not links.form_token_ok(new, session, token)
    for other in (
        links.Grant("slack", T1.workspace, Scope.WORKSPACE, ADMIN, until, "nonce-2"),
        links.Grant("slack", T2.workspace, Scope.WORKSPACE, ADMIN, until, "nonce-1"),
        links.Grant("slack", T1.workspace, Scope.WORKSPACE, BOB, until, "nonce-1"),
        links.Grant("slack", T1.workspace, Scope.ME, ADMIN, until, "nonce-1"),
    ):
        assert not links.form_token_ok(old, other, token)
