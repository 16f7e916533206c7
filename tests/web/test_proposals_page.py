"""The proposals page: pending questions with Approve and Reject, each decided once, and every
forged, replayed or out-of-scope post refused with nothing changed."""

from __future__ import annotations

from dataclasses import replace

from bot import links
from bot.bank.workspace import ProposalStatus, Proposed, question_yaml
from bot.links import Purpose, Scope
from bot.web import COOKIE
from tests.conftest import make_question
from tests.web.conftest import ADMIN, BOB, T1, T2, Site, lint_clean
from tests.web.test_access import open_link
from tests.web.test_editing import forms_of, refused


async def propose(site: Site, qid: str = "member-q", text: str = "") -> int:
    q = lint_clean(make_question(qid))
    q = replace(q, text=text or f"What does {qid} ask?")
    got = await site.engine.submit(
        "slack", T1.workspace, question_yaml(q), author=BOB, admin=False, channel=T1.channel
    )
    assert isinstance(got, Proposed)
    return got.proposal_id


async def decide_form(site: Site, pid: int, action: str) -> dict[str, str]:
    """Return the fields of a proposal's Approve or Reject form as the page has them."""
    page = await site.client.get("/dashboard/proposals")
    assert page.status == 200
    text = await page.text()
    forms = forms_of(text[text.index(f'id="proposal-{pid}"') :])[:2]
    approve, reject = forms
    return {**(approve if action == "approve" else reject), "action": action}


def session_token(site: Site) -> str:
    """Return the form token of the client's current session, as its pages would carry it."""
    cookie = site.client.session.cookie_jar.filter_cookies(site.client.make_url("/dashboard"))
    secret = site.dashboard.secret
    session = links.verify(secret, Purpose.SESSION, cookie[COOKIE].value, site.clock())
    return links.form_token(secret, session)


async def post(site: Site, pid: object, data: dict[str, str]):
    return await site.client.post(f"/dashboard/proposals/{pid}", data=data, allow_redirects=False)


async def status_of(site: Site, pid: int) -> ProposalStatus:
    proposal = await site.engine.proposal(pid)
    assert proposal is not None
    return proposal.status


async def test_an_admin_approves_a_proposal_once(banked: Site) -> None:
    pid = await propose(banked)
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    page = await (await banked.client.get("/dashboard/proposals")).text()
    card = page[page.index(f'id="proposal-{pid}"') :]
    assert "By Bob Chen" in card and "#infra-study" in card and "a new question" in card
    assert "What does member-q ask?" in card
    form = await decide_form(banked, pid, "approve")
    done = await post(banked, pid, form)
    assert done.status == 303
    assert done.headers["Location"] == f"/dashboard/proposals?done=approved&n={pid}"
    after = await (await banked.client.get(done.headers["Location"])).text()
    assert f"Approved proposal {pid}: member-q is live as revision 1." in after
    assert "Nothing waits for a decision." in after and 'id="decided"' in after
    assert (await banked.engine.bank_for("slack", T1.workspace)).by_id("member-q").revision == 1
    assert "member-q" not in await banked.engine.bank_for("slack", T2.workspace)
    # The same post again (a second click, a replay): decided already, nothing changes.
    again = await post(banked, pid, form)
    assert again.status == 409
    assert "was approved already" in await again.text()
    rejected = await post(banked, pid, {**form, "action": "reject"})
    assert rejected.status == 409 and await status_of(banked, pid) is ProposalStatus.APPROVED
    history = await banked.dashboard.store.question_history("slack", T1.workspace, "member-q")  # type: ignore[attr-defined]
    assert [r.revision for r in history] == [1]
    # Its author is to be told, once.
    [told] = await banked.engine.decided_proposals("slack")
    assert (told.id, told.author, told.status) == (pid, BOB, ProposalStatus.APPROVED)
    assert await banked.engine.decided_proposals("slack") == []


async def test_an_admin_rejects_with_a_reason(banked: Site) -> None:
    pid = await propose(banked, "seed-q")
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    page = await (await banked.client.get("/dashboard/proposals")).text()
    assert "replaces the bundled question with this id here" in page
    form = await decide_form(banked, pid, "reject")
    long = await post(banked, pid, {**form, "reason": "x" * 501})
    assert long.status == 400
    text = await long.text()
    assert "at most; this one has 501" in text and "x" * 501 in text
    assert await status_of(banked, pid) is ProposalStatus.PENDING
    done = await post(banked, pid, {**form, "reason": "We ask this one already.\r\nThanks!"})
    assert done.headers["Location"] == f"/dashboard/proposals?done=rejected&n={pid}"
    proposal = await banked.engine.proposal(pid)
    assert proposal is not None and proposal.status is ProposalStatus.REJECTED
    assert proposal.reason == "We ask this one already.\nThanks!" and proposal.decided_by == ADMIN
    # Approving it afterwards changes nothing: the files' question stays.
    late = await post(banked, pid, {**form, "action": "approve"})
    assert late.status == 409 and "was rejected already" in await late.text()
    assert (await banked.engine.bank_for("slack", T1.workspace)).by_id("seed-q").revision is None


async def test_forged_and_out_of_scope_decisions_change_nothing(banked: Site) -> None:
    pid = await propose(banked)
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await decide_form(banked, pid, "approve")
    for token in (None, "", "forged", form["csrf"][:-3] + "AAA"):
        data = dict(form)
        if token is None:
            del data["csrf"]
        else:
            data["csrf"] = token
        await refused(await post(banked, pid, data), "not sent from a page of your session")
    for number in ("0", "01", "abc", str(pid + 100)):
        await refused(await post(banked, number, form), "nothing was changed")
    await refused(await post(banked, pid, {**form, "action": "publish"}), "nothing was changed")
    # Another workspace's admin, with a valid token of their own session.
    banked.client.session.cookie_jar.clear()
    assert (await open_link(banked, banked.link(T2, "U9"))).status == 303
    page = await (await banked.client.get("/dashboard/proposals")).text()
    assert "member-q" not in page
    # No proposal waits there: the token a form of that session would carry.
    await refused(
        await post(banked, pid, {**form, "csrf": session_token(banked)}), "has no proposal"
    )
    # A personal session of the workspace, even with its own session's token.
    banked.client.session.cookie_jar.clear()
    assert (await open_link(banked, banked.link(T1, BOB, Scope.ME))).status == 303
    mine = session_token(banked)
    await refused(await post(banked, pid, {**form, "csrf": mine}), "your own page only")
    assert (await banked.client.get("/dashboard/proposals")).status == 403
    assert await status_of(banked, pid) is ProposalStatus.PENDING


async def test_a_decision_replayed_after_revocation_changes_nothing(banked: Site) -> None:
    pid = await propose(banked)
    assert (await open_link(banked, banked.link(T1, ADMIN))).status == 303
    form = await decide_form(banked, pid, "approve")
    banked.clock.advance(seconds=1)
    await banked.dashboard.store.revoke_dashboard_sessions(  # type: ignore[attr-defined]
        "slack", T1.workspace, banked.clock()
    )
    await refused(await post(banked, pid, form), "This session was ended")
    assert await status_of(banked, pid) is ProposalStatus.PENDING
