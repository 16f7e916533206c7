"""The dashboard's pages on an aiohttp application: access by signed link, then a signed cookie.

Every page reads through the session's own (platform, workspace), so no URL can name another
workspace's data; personal pages answer only the player the session was issued to. The one
change a page can make is an admin's, on a question's page: its edit form and its Hide button
POST back to the page, from this site only, with the session's form token.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib import resources
from typing import Any, Protocol
from urllib.parse import quote, urlsplit
from zoneinfo import ZoneInfo

import jinja2
from aiohttp import web

from bot import links
from bot.bank.loader import ID_PATTERN, check_text
from bot.bank.workspace import (
    REASON_MAX,
    AlreadyDecided,
    Proposal,
    ProposalStatus,
    WorkspaceBanks,
    WorkspaceView,
    check_parsed,
    check_submission,
    question_yaml,
)
from bot.engine import activity, analytics, learning
from bot.engine.activity import DayActivity, HistoryRow, StreakRow
from bot.engine.engine import Bank, QuizEngine
from bot.engine.learning import MemoryCard, is_due
from bot.engine.model import CHOICE_KEYS, Difficulty, Period, Place, Question, ScoreRow
from bot.engine.names import Known, NameKind, Names
from bot.engine.ports import Clock, utc_now
from bot.errors import UserError
from bot.links import BadToken, Grant, Purpose, Scope
from bot.scheduler.port import Schedule
from bot.web import _edit, _svg

log = logging.getLogger(__name__)

PREFIX = "/dashboard"
OPEN_PATH = links.OPEN_PATH
COOKIE = "quizbot_dashboard"
ACTIVITY_DAYS = 30
CHANNEL_ROUNDS_SHOWN = 5
# The latest decisions the proposals page lists under the pending ones.
DECIDED_SHOWN = 10

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

SORT_KEYS: dict[str, Callable[[analytics.QuestionReport], Any]] = {
    "id": lambda r: r.question_id,
    "asked": lambda r: r.rounds,
    "answers": lambda r: r.answers,
    "right": lambda r: -1.0 if r.share_correct is None else r.share_correct,
    "median": lambda r: -1.0 if r.median_seconds is None else r.median_seconds,
    "disc": lambda r: -2.0 if r.discrimination is None else r.discrimination,
    "flags": lambda r: len(r.flags),
}
# Sorted by the workspace's open reports, which are not part of a question's analytics.
REPORTS = "reports"
DEFAULT_SORT = "answers"


class DashboardStore(Protocol):
    """The reads the dashboard needs beyond the engine's."""

    async def daily_activity(
        self, platform: str, workspace: str, since: datetime
    ) -> list[DayActivity]: ...

    async def streak_rows(
        self, platform: str, workspace: str, user: str | None = None
    ) -> list[StreakRow]: ...

    async def user_history(
        self, platform: str, workspace: str, user: str, limit: int = 50
    ) -> list[HistoryRow]: ...

    async def workspace_channels(self, platform: str, workspace: str) -> list[str]: ...

    async def claim_link(self, nonce: str, expires_at: datetime, now: datetime) -> bool: ...

    async def dashboard_revoked_at(self, platform: str, workspace: str) -> datetime | None: ...

    async def score_rows(
        self, platform: str, workspace: str, since: datetime | None, user: str | None = None
    ) -> list[ScoreRow]: ...

    async def get_schedule(self, place: Place) -> Schedule | None: ...

    async def channel_rounds(self, place: Place, since: datetime, until: datetime) -> list[Any]: ...

    async def cards(self, platform: str, workspace: str, user: str) -> list[MemoryCard]: ...

    async def display_names(
        self, platform: str, workspace: str
    ) -> dict[tuple[NameKind, str], Known]: ...

    async def resolved_flags(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> list[str]: ...


Handler = Callable[[web.Request, Grant], Awaitable[web.StreamResponse]]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.web", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v: "–" if v is None else f"{v:.0%}"
    env.filters["when"] = lambda d: d.strftime("%Y-%m-%d %H:%M UTC") if d else "–"
    env.filters["topic"] = _topic_label
    return env


@dataclass
class Dashboard:
    """The team dashboard over one engine and store: read-only but for the admins' changes to
    the workspace's questions (a question's edit form and Hide button, proposals' decisions)."""

    engine: QuizEngine
    store: DashboardStore
    secret: str
    public_url: str | None = None
    clock: Clock = utc_now
    _env: jinja2.Environment = field(default_factory=_environment, init=False, repr=False)
    _css: bytes = field(default=b"", init=False, repr=False)

    def __post_init__(self) -> None:
        self._css = resources.files("bot.web").joinpath("static/style.css").read_bytes()

    # ------------------------------------------------------------ links and sessions

    def link(self, place: Place, user: str, scope: Scope) -> str:
        """Return a fresh signed link (15 minutes, once) for a user of a workspace."""
        maker = links.LinkMaker(self.secret, self.public_url)
        return maker.url(place.platform, place.workspace, scope, user, self.clock())

    @property
    def _secure(self) -> bool:
        return bool(self.public_url and self.public_url.startswith("https://"))

    def mount(self, app: web.Application) -> None:
        """Add the dashboard's routes to an aiohttp application."""
        app.middlewares.append(_headers_middleware)
        r = app.router
        # GET (and HEAD) only show a button; the POST it sends spends the link. A link preview
        # crawler or a URL scanner fetches the link with GET or HEAD and so leaves it unused.
        r.add_get(OPEN_PATH, self.confirm_link)
        r.add_post(OPEN_PATH, self.open_link)
        r.add_get(f"{PREFIX}/expired", self.expired)
        r.add_get(f"{PREFIX}/static/style.css", self.stylesheet)
        r.add_get(PREFIX, self._guard(self.overview))
        r.add_get(f"{PREFIX}/", self._guard(self.overview))
        r.add_get(f"{PREFIX}/leaderboards", self._guard(self.leaderboards))
        r.add_get(f"{PREFIX}/questions", self._guard(self.questions))
        r.add_get(f"{PREFIX}/questions/{{qid}}", self._guard(self.question))
        r.add_post(f"{PREFIX}/questions/{{qid}}", self._guard(self.change_question, form=True))
        r.add_get(f"{PREFIX}/proposals", self._guard(self.proposals))
        r.add_post(f"{PREFIX}/proposals/{{pid}}", self._guard(self.decide, form=True))
        r.add_get(f"{PREFIX}/channels", self._guard(self.channels))
        r.add_get(f"{PREFIX}/mastery", self._guard(self.mastery))
        r.add_get(f"{PREFIX}/me", self._guard(self.me, personal=True))
        r.add_get(f"{PREFIX}/players/{{user}}", self._guard(self.player, personal=True))

    async def confirm_link(self, request: web.Request) -> web.StreamResponse:
        """Show a button that opens the link; fetching this page spends nothing."""
        token = request.query.get("token", "")
        try:
            grant = links.verify(self.secret, Purpose.LINK, token, self.clock())
        except BadToken as exc:
            if exc.expired:
                raise web.HTTPSeeOther(f"{PREFIX}/expired") from None
            return self._refuse("This link is not valid.")
        return self._page("open.html", token=token, expires=grant.expires)

    async def open_link(self, request: web.Request) -> web.StreamResponse:
        """Exchange a link for a session cookie (the button's POST), then go to its page."""
        if not self._same_origin(request):
            # Another site's form posting its own link would sign this browser into the
            # other site's session (login CSRF).
            return self._refuse("This link can only be opened from its own page.")
        form = await request.post()
        token = form.get("token", "")
        now = self.clock()
        try:
            if not isinstance(token, str):
                raise BadToken("malformed token")
            grant = links.verify(self.secret, Purpose.LINK, token, now)
        except BadToken as exc:
            if exc.expired:
                raise web.HTTPSeeOther(f"{PREFIX}/expired") from None
            return self._refuse("This link is not valid.")
        if await self._revoked(grant, grant.expires - links.LINK_TTL):
            return self._refuse("This link was ended: ask the bot for a new one.")
        if not await self.store.claim_link(grant.nonce, grant.expires, now):
            return self._refuse("This link was already used: ask the bot for a new one.")
        value, _session = links.session_for(self.secret, grant, now)
        target = PREFIX if grant.sees_workspace() else f"{PREFIX}/me"
        # The POST came from this site's own page, so the navigation that follows the
        # redirect is same-site and carries the SameSite=Strict cookie.
        response = web.Response(status=303, headers={"Location": target})
        response.set_cookie(
            COOKIE,
            value,
            max_age=int(links.SESSION_TTL.total_seconds()),
            path=PREFIX,
            httponly=True,
            samesite="Strict",
            secure=self._secure,
        )
        return response

    def _same_origin(self, request: web.Request) -> bool:
        """Return False for a request a browser says came from another site."""
        fetch_site = request.headers.get("Sec-Fetch-Site")
        if fetch_site is not None:
            return fetch_site == "same-origin"
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser's cross-site form: browsers send Origin on POST
        allowed = {f"{request.scheme}://{request.host}", f"https://{request.host}"}
        if self.public_url:
            parts = urlsplit(self.public_url)
            allowed.add(f"{parts.scheme}://{parts.netloc}")
        return origin in allowed

    async def expired(self, _request: web.Request) -> web.StreamResponse:
        """Say the link has expired and how to get a new one."""
        return self._page("expired.html", status=403)

    async def stylesheet(self, _request: web.Request) -> web.StreamResponse:
        """Serve the one stylesheet (the pages load nothing else)."""
        response = web.Response(body=self._css, content_type="text/css")
        response.headers["Cache-Control"] = "public, max-age=3600"
        return response

    def _guard(
        self, handler: Handler, *, personal: bool = False, form: bool = False
    ) -> Callable[..., Any]:
        """Wrap a page in the session checks; ``form``: a POST, which must also come from this
        site and carry the session's form token."""

        async def wrapped(request: web.Request) -> web.StreamResponse:
            try:
                grant = links.verify(
                    self.secret, Purpose.SESSION, request.cookies.get(COOKIE, ""), self.clock()
                )
            except BadToken as exc:
                if exc.expired:
                    raise web.HTTPSeeOther(f"{PREFIX}/expired") from None
                return self._refuse("Open the dashboard from the link the bot sent you.")
            if await self._revoked(grant, grant.expires - links.SESSION_TTL):
                return self._refuse("This session was ended: ask the bot for a new link.")
            if not personal and not grant.sees_workspace():
                return self._refuse("This link opens your own page only.")
            if form:
                refused = await self._check_form(request, grant)
                if refused is not None:
                    return refused
            return await handler(request, grant)

        return wrapped

    async def _check_form(self, request: web.Request, grant: Grant) -> web.Response | None:
        """Refuse a POST another site's page sent, or one without this session's form token."""
        if not self._same_origin(request):
            return self._refuse(
                "Changes are taken only from the dashboard's own pages: nothing was changed."
            )
        if not grant.nonce:
            return self._refuse(
                "This session was opened before the dashboard's forms had a token: nothing was "
                "changed. Ask the bot for a new link."
            )
        posted = await request.post()
        token = posted.get("csrf", "")
        if not isinstance(token, str) or not links.form_token_ok(self.secret, grant, token):
            return self._refuse(
                "This form was not sent from a page of your session: nothing was changed. "
                "Open the question's page again and send it from there."
            )
        return None

    async def _revoked(self, grant: Grant, issued: datetime) -> bool:
        """Return whether the workspace's sessions were revoked after this one was issued."""
        revoked = await self.store.dashboard_revoked_at(grant.platform, grant.workspace)
        return revoked is not None and issued < revoked

    def _refuse(self, reason: str) -> web.Response:
        return self._page("refused.html", status=403, reason=reason)

    def _page(self, template: str, *, status: int = 200, **values: Any) -> web.Response:
        html = self._env.get_template(template).render(**values)
        return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")

    async def _named_page(
        self, template: str, *, grant: Grant, status: int = 200, **values: Any
    ) -> web.Response:
        """Render a page of a workspace with its people's, channels' and own names."""
        known = await self.store.display_names(grant.platform, grant.workspace)
        names = Names(grant.workspace, known)
        return self._page(template, status=status, grant=grant, names=names, **values)

    # ------------------------------------------------------------------ pages

    async def _streaks(self, grant: Grant, user: str | None = None) -> dict[str, Any]:
        rows = await self.store.streak_rows(grant.platform, grant.workspace, user)
        return activity.player_streaks(rows)

    async def overview(self, _request: web.Request, grant: Grant) -> web.StreamResponse:
        """Answers and players per day, share right, the longest current streaks."""
        now = self.clock()
        first = (now - timedelta(days=ACTIVITY_DAYS - 1)).date()
        since = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(
            days=ACTIVITY_DAYS - 1
        )
        days = activity.daily_series(
            await self.store.daily_activity(grant.platform, grant.workspace, since),
            first,
            now.date(),
        )
        rows = await self.store.score_rows(grant.platform, grant.workspace, since)
        answers = sum(d.answers for d in days)
        correct = sum(d.correct for d in days)
        streaks = await self._streaks(grant)
        return await self._named_page(
            "overview.html",
            grant=grant,
            chart=_svg.activity_chart(days, f"Answers per day, last {ACTIVITY_DAYS} days"),
            answers=answers,
            players=len(rows),
            share=correct / answers if answers else None,
            leaders=activity.streak_leaders(list(streaks.values())),
            days=ACTIVITY_DAYS,
        )

    async def leaderboards(self, _request: web.Request, grant: Grant) -> web.StreamResponse:
        """The week's, the month's and the all-time top ten, with streaks."""
        streaks = await self._streaks(grant)
        boards = [
            await self.engine.leaderboard(grant.platform, grant.workspace, period, caller="")
            for period in (Period.WEEK, Period.MONTH, Period.ALL)
        ]
        return await self._named_page(
            "leaderboards.html", grant=grant, boards=boards, streaks=streaks
        )

    async def mastery(self, _request: web.Request, grant: Grant) -> web.StreamResponse:
        """Topics by people: how much of each topic each person would recall now, as a heatmap."""
        people = await self.engine.mastery(grant.platform, grant.workspace)
        return await self._named_page(
            "mastery.html",
            grant=grant,
            people=people,
            team=learning.team_mastery(people),
            topics=list(
                dict.fromkeys(
                    self.engine.topics(
                        await self.engine.bank_for(grant.platform, grant.workspace)
                    ).values()
                )
            ),
        )

    async def _view(self, grant: Grant) -> WorkspaceView | None:
        """Return every question of the workspace, hidden and paused ones too (None: no
        workspace banks, so none is ever hidden or paused)."""
        banks = self.engine.banks
        if not isinstance(banks, WorkspaceBanks):
            return None
        return await banks.view(grant.platform, grant.workspace)

    async def questions(self, request: web.Request, grant: Grant) -> web.StreamResponse:
        """Every question's analytics in this workspace, sortable by any column, with the open
        reports on each and whether they took it out of rounds."""
        items = await self.engine.question_report(grant.platform, grant.workspace)
        flags = await self.engine.open_flags(grant.platform, grant.workspace)
        view = await self._view(grant)
        states: dict[str, str] = {}
        if view is not None:
            states.update({qid: "hidden" for qid in view.hidden})
            states.update({qid: "paused" for qid in view.paused - view.hidden})
            # The workspace's bank leaves hidden and paused questions out: its admins see them.
            shown = {r.question_id for r in items}
            left_out = [q for q in view.bank.filter(None) if q.id in states and q.id not in shown]
            if left_out:
                aggregates = await self.engine.store.question_aggregates(
                    grant.platform, grant.workspace
                )
                items += analytics.reports(left_out, aggregates)
        reports = Counter(f.question_id for f in flags)
        keys = {**SORT_KEYS, REPORTS: lambda r: reports.get(r.question_id, 0)}
        # Most answered first: flags need 20 answers, so most questions have none for long.
        sort = request.query.get("sort", DEFAULT_SORT)
        if sort not in keys:
            sort = DEFAULT_SORT
        descending = request.query.get("order", "desc") != "asc"
        items.sort(key=lambda r: r.question_id)
        items.sort(key=keys[sort], reverse=descending)
        return await self._named_page(
            "questions.html",
            grant=grant,
            items=items,
            sort=sort,
            descending=descending,
            columns=list(keys),
            reports=reports,
            states=states,
        )

    async def _question_of(
        self, grant: Grant, qid: str, view: WorkspaceView | None
    ) -> Question | None:
        """Return a question of the workspace as its admins see it, hidden or paused too."""
        try:
            return await self.engine.question(grant.platform, grant.workspace, qid)
        except KeyError:
            pass
        if view is not None and qid in view.bank:
            return view.bank.by_id(qid)
        return None

    async def question(self, request: web.Request, grant: Grant) -> web.StreamResponse:
        """One question: its text, how the answers split, its explanation, why it is flagged,
        the players' open reports on it, and its edit form."""
        qid = request.match_info["qid"]
        notice = await self._notice(request, grant, qid)
        return await self._question_page(grant, qid, notice=notice)

    async def _notice(self, request: web.Request, grant: Grant, qid: str) -> str | None:
        """Say what the change the page was sent back to after did (read again, not trusted)."""
        done = request.query.get("done")
        if done == "hidden":
            return "Hidden in this workspace."
        if done == "shown":
            return "Back in this workspace's rounds."
        if done == "unchanged":
            return "Nothing changed: the form held the question as it is."
        saved = request.query.get("saved", "")
        if not (saved.isascii() and saved.isdigit() and len(saved) < 10):
            return None
        reporters = await self.store.resolved_flags(
            grant.platform, grant.workspace, qid, int(saved)
        )
        told = (
            f" It resolved the open reports of {len(reporters)} player(s), who are told privately."
            if reporters
            else ""
        )
        return f"Saved as revision {int(saved)}.{told}"

    async def _question_page(
        self,
        grant: Grant,
        qid: str,
        *,
        form: _edit.Form | None = None,
        status: int = 200,
        notice: str | None = None,
    ) -> web.Response:
        view = await self._view(grant)
        question = await self._question_of(grant, qid, view)
        if question is None:
            return await self._named_page("missing.html", status=404, grant=grant, what="question")
        [item] = analytics.reports(
            [question],
            await self.engine.store.question_aggregates(grant.platform, grant.workspace),
        )
        shares = dict(item.choice_shares)
        picks = {k: round(v * item.answers) for k, v in shares.items()}
        bars = [
            _svg.Bar(
                label=c.key,
                value=shares.get(c.key, 0.0),
                text=f"{shares.get(c.key, 0.0):.0%} ({picks.get(c.key, 0)})",
                css="bar right" if c.key == question.answer else "bar",
            )
            for c in question.choices
        ]
        flags = [
            f
            for f in await self.engine.open_flags(grant.platform, grant.workspace)
            if f.question_id == qid
        ]
        editable = view is not None and _editable(view, qid)
        latest = view.bank.by_id(qid) if view is not None and editable else None
        if latest is not None and form is None:
            form = _edit.form_of(latest)
        return await self._named_page(
            "question.html",
            status=status,
            grant=grant,
            q=question,
            item=item,
            chart=_svg.bar_list(bars, "Share of answers per choice"),
            picks=picks,
            reports=flags,
            hidden=view is not None and qid in view.hidden,
            paused=view is not None and qid in view.paused,
            form=form if latest is not None else None,
            latest=latest,
            csrf=links.form_token(self.secret, grant),
            choice_keys=CHOICE_KEYS,
            difficulties=[d.value for d in Difficulty],
            notice=notice,
        )

    async def change_question(self, request: web.Request, grant: Grant) -> web.StreamResponse:
        """Save the edit form as a new revision, or hide or show the question again (admins;
        the session and its form token are checked before this runs)."""
        qid = request.match_info["qid"]
        banks = self.engine.banks
        if not isinstance(banks, WorkspaceBanks):
            return self._refuse("This bot keeps no workspace banks: questions are not edited here.")
        view = await banks.view(grant.platform, grant.workspace)
        if not _editable(view, qid):
            return self._refuse(f"This workspace has no question {qid}: nothing was changed.")
        posted = await request.post()
        action = posted.get("action")
        page = f"{PREFIX}/questions/{quote(qid)}"
        if action in ("hide", "unhide"):
            await banks.store.set_hidden(
                grant.platform,
                grant.workspace,
                [qid],
                action == "hide",
                by=grant.user,
                at=self.clock(),
            )
            done = "hidden" if action == "hide" else "shown"
            raise web.HTTPSeeOther(f"{page}?done={done}")
        if action != "save":
            return self._refuse("This form asked for nothing the page offers: nothing was changed.")
        current = view.bank.by_id(qid)
        form = _edit.posted_form(posted)
        seen = posted.get("revision", "")
        if seen != ("" if current.revision is None else str(current.revision)):
            # Someone saved the question since this form was filled: theirs is not overwritten
            # unseen. The form now names the latest revision, so sending it again replaces it.
            form.add(
                form.errors,
                _edit.GENERAL,
                f"The question changed since this form was opened: revision {current.revision} "
                "is the latest. Your text is kept below; send it again to replace that revision.",
            )
        text = _edit.form_yaml(form, qid, current)
        checked = check_submission(
            text, f"{qid} (the form)", await banks.bank_for(grant.platform, grant.workspace)
        )
        _edit.note_problems(
            form,
            text,
            [(p.line, p.message) for p in checked.problems],
            [(w.line, f"{w.message} [{w.rule}]") for w in checked.warnings],
        )
        if form.errors or checked.refused(allow_warnings=posted.get("allow_warnings") == "yes"):
            return await self._question_page(grant, qid, form=form, status=400)
        [question] = checked.questions
        body = question_yaml(question)
        if body == question_yaml(current):
            # Nothing to store; a question of the files stays the files' (their updates reach
            # the workspace) rather than becoming a copy of its own.
            raise web.HTTPSeeOther(f"{page}?done=unchanged")
        # An admin's edit, live at once, as `quizbot questions import` stores one.
        published = await banks.publish(
            grant.platform, grant.workspace, qid, body, author=grant.user, at=self.clock()
        )
        raise web.HTTPSeeOther(f"{page}?saved={published.revision}")

    async def proposals(self, request: web.Request, grant: Grant) -> web.StreamResponse:
        """The questions proposed for the workspace that wait for an admin, each with Approve
        and Reject, and the latest decisions."""
        notice = None
        done, number = request.query.get("done"), request.query.get("n", "")
        if done in ("approved", "rejected") and _number(number) is not None:
            # Said from the store, not from the URL: a link cannot make the page claim a decision.
            decided = await self._proposal_of(grant, number)
            if decided is not None and decided.status.value == done:
                notice = _decision(decided)
        return await self._proposals_page(grant, notice=notice)

    async def _proposals_page(
        self,
        grant: Grant,
        *,
        status: int = 200,
        notice: str | None = None,
        problems: dict[int, list[str]] | None = None,
        reasons: dict[int, str] | None = None,
    ) -> web.Response:
        banks = self.engine.banks
        cards: list[dict[str, Any]] = []
        decided: list[Proposal] = []
        if isinstance(banks, WorkspaceBanks):
            view = await banks.view(grant.platform, grant.workspace)
            current = await banks.bank_for(grant.platform, grant.workspace)
            every = await self.engine.proposals(grant.platform, grant.workspace, None)
            for proposal in every:
                if proposal.status is ProposalStatus.PENDING:
                    cards.append(_card(proposal, view, current))
            decided = sorted(
                (p for p in every if p.status is not ProposalStatus.PENDING),
                key=lambda p: (p.decided_at or p.created_at, p.id),
                reverse=True,
            )[:DECIDED_SHOWN]
        return await self._named_page(
            "proposals.html",
            status=status,
            grant=grant,
            kept=isinstance(banks, WorkspaceBanks),
            cards=cards,
            decided=decided,
            notice=notice,
            problems=problems or {},
            reasons=reasons or {},
            reason_max=REASON_MAX,
            csrf=links.form_token(self.secret, grant),
        )

    async def _proposal_of(self, grant: Grant, number: str) -> Proposal | None:
        """Return a proposal of the session's workspace by its number, else None."""
        pid = _number(number)
        if pid is None:
            return None
        proposal = await self.engine.proposal(pid)
        if proposal is None or (proposal.platform, proposal.workspace) != (
            grant.platform,
            grant.workspace,
        ):
            return None
        return proposal

    async def decide(self, request: web.Request, grant: Grant) -> web.StreamResponse:
        """Approve or reject a proposal of the workspace, once (admins; the session and its
        form token are checked before this runs)."""
        number = request.match_info["pid"]
        proposal = await self._proposal_of(grant, number)
        if proposal is None:
            return self._refuse(f"This workspace has no proposal {number}: nothing was changed.")
        posted = await request.post()
        action = posted.get("action")
        reason = posted.get("reason", "")
        reason = reason.replace("\r\n", "\n").strip() if isinstance(reason, str) else ""
        if action == "approve":
            banks = self.engine.banks
            assert isinstance(banks, WorkspaceBanks)  # a proposal is kept only by them
            view = await banks.view(grant.platform, grant.workspace)
            card = _card(proposal, view, await banks.bank_for(grant.platform, grant.workspace))
            if card["problems"]:
                # Checked when proposed; a rule made stricter since would leave it out of rounds.
                wrong = {proposal.id: ["Not approved: " + "; ".join(card["problems"])]}
                return await self._proposals_page(grant, status=400, problems=wrong)
        elif action == "reject":
            if len(reason) > REASON_MAX:
                long = {
                    proposal.id: [
                        f"Not rejected: a reason is {REASON_MAX} characters at most; this one "
                        f"has {len(reason)}."
                    ]
                }
                return await self._proposals_page(
                    grant, status=400, problems=long, reasons={proposal.id: reason}
                )
        else:
            return self._refuse("This form asked for nothing the page offers: nothing was changed.")
        try:
            if action == "approve":
                await self.engine.approve(proposal.id, grant.user)
            else:
                await self.engine.reject(proposal.id, grant.user, reason or None)
        except AlreadyDecided:
            known = await self.store.display_names(grant.platform, grant.workspace)
            now = await self._proposal_of(grant, number)
            assert now is not None
            names = Names(grant.workspace, known)
            return await self._proposals_page(
                grant,
                status=409,
                notice=f"Nothing changed: proposal {now.id} ({now.question_id}) was "
                f"{now.status.value} already, by {names.person(now.decided_by or '')}.",
            )
        except UserError as exc:
            return await self._proposals_page(
                grant, status=400, problems={proposal.id: [exc.text.plain()]}
            )
        done = "approved" if action == "approve" else "rejected"
        raise web.HTTPSeeOther(f"{PREFIX}/proposals?done={done}&n={proposal.id}")

    async def channels(self, _request: web.Request, grant: Grant) -> web.StreamResponse:
        """Each channel: its schedule and next post in its own zone, settings, last rounds."""
        now = self.clock()
        from bot.scheduler import next_post_time

        cards = []
        for channel in await self.store.workspace_channels(grant.platform, grant.workspace):
            place = Place(grant.platform, grant.workspace, channel)
            schedule = await self.store.get_schedule(place)
            nxt = None
            if schedule is not None:
                nxt = next_post_time(now, schedule).astimezone(ZoneInfo(schedule.zone))
            rounds = await self.store.channel_rounds(place, now - timedelta(days=365), now)
            cards.append(
                {
                    "channel": channel,
                    "schedule": schedule,
                    "next": nxt,
                    "settings": await self.engine.channel_settings(place),
                    "rounds": sorted(rounds, key=lambda r: r.opened_at, reverse=True)[
                        :CHANNEL_ROUNDS_SHOWN
                    ],
                }
            )
        return await self._named_page("channels.html", grant=grant, cards=cards)

    async def me(self, _request: web.Request, grant: Grant) -> web.StreamResponse:
        """The session's own player page."""
        return await self._player_page(grant, grant.user)

    async def player(self, request: web.Request, grant: Grant) -> web.StreamResponse:
        """A player's page: only for that player's own session."""
        user = request.match_info["user"]
        if user != grant.user:
            return self._refuse("This page belongs to another player.")
        return await self._player_page(grant, user)

    async def _player_page(self, grant: Grant, user: str) -> web.StreamResponse:
        now = self.clock()
        rows = await self.store.score_rows(grant.platform, grant.workspace, None, user=user)
        total = rows[0] if rows else ScoreRow(user, 0, 0, 0, 0)
        channel_streaks = await self.store.streak_rows(grant.platform, grant.workspace, user)
        streak = activity.player_streaks(channel_streaks).get(
            user, activity.PlayerStreak(user, 0, 0)
        )
        bank = await self.engine.bank_for(grant.platform, grant.workspace)
        items = [
            c
            for c in await self.store.cards(grant.platform, grant.workspace, user)
            if c.seen and _known(bank, c.key.question_id)
        ]
        due = [c for c in items if is_due(c, now)]
        history = await self.store.user_history(grant.platform, grant.workspace, user)
        mine = await self.engine.mastery(grant.platform, grant.workspace, user)
        return await self._named_page(
            "me.html",
            grant=grant,
            user=user,
            total=total,
            streak=streak,
            channel_streaks=channel_streaks,
            due=due,
            waiting=len(items) - len(due),
            history=history,
            people=mine,
            topics=list(dict.fromkeys(self.engine.topics(bank).values())),
        )


def _topic_label(topic: str) -> str:
    """Return a topic folder's name as words: ``03-collectives`` is "collectives"."""
    head, _, rest = topic.partition("-")
    return (rest if head.isdigit() and rest else topic).replace("-", " ")


def _editable(view: WorkspaceView, qid: str) -> bool:
    """Return whether a workspace's admins may change a question: one of its bank's (the files'
    or its own, hidden and paused too), never a computed one (each is drawn from code)."""
    return ID_PATTERN.fullmatch(qid) is not None and qid in view.bank


def _number(text: str) -> int | None:
    """Return a proposal's number as a URL spells it, else None."""
    if text.isascii() and text.isdigit() and len(text) < 12 and not text.startswith("0"):
        return int(text)
    return None


def _card(proposal: Proposal, view: WorkspaceView, current: Any) -> dict[str, Any]:
    """Return what the proposals page shows of a pending proposal: its question as the
    workspace's bank would check it now, and whether it replaces one the workspace has."""
    questions, problems = check_text(proposal.body, f"proposal {proposal.id}")
    question = questions[0] if len(questions) == 1 and not problems else None
    warnings: list[str] = []
    found = [p.message for p in problems]
    if question is not None:
        checked = check_parsed(questions, problems, current)
        found = [p.message for p in checked.problems]
        warnings = [f"{w.message} [{w.rule}]" for w in checked.warnings]
    elif not found:
        found = ["it does not hold one question"]
    return {
        "proposal": proposal,
        "q": question,
        "problems": found,
        "warnings": warnings,
        "replaces": proposal.question_id in view.bank,
        "own": proposal.question_id in view.own,
    }


def _decision(proposal: Proposal) -> str:
    """Say what an admin's decision on a proposal did."""
    if proposal.status is ProposalStatus.APPROVED:
        return (
            f"Approved proposal {proposal.id}: {proposal.question_id} is live as revision "
            f"{proposal.revision}."
        )
    return f"Rejected proposal {proposal.id} ({proposal.question_id}); its author is told."


def _known(bank: Bank, qid: str) -> bool:
    try:
        bank.by_id(qid)
    except KeyError:
        return False
    return True


@web.middleware
async def _headers_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Send the security headers with every dashboard response (errors and redirects too)."""
    if not request.path.startswith(PREFIX):
        return await handler(request)
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(SECURITY_HEADERS)
        raise
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
