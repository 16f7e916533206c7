"""What each command does, written once for every platform.

A flow gets the call as read by the grammar and a context (the engine, where, who, and the
interaction's turn to reply through). ``FLOWS`` maps each verb of the grammar to its flow: a new
command is a grammar entry, a flow here, and its sentences in ``bot.messages``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot import messages as M
from bot.bandwidth import PLAN_USAGE, BandwidthError, Estimate, Plan, is_plan
from bot.bank.form import values_of
from bot.bank.loader import check_text
from bot.bank.workspace import AlreadyDecided, UnknownProposal
from bot.chat import forms, words
from bot.chat._charts import ChartAllowance, Charts, ChartsBusy, request_of
from bot.chat._publish import Publisher
from bot.chat._turn import Turn
from bot.chat.content import Panel
from bot.chat.grammar import (
    BANDWIDTH,
    GRAMMARS,
    PROPOSAL_ID_MAX,
    QUIZ,
    BadInput,
    Call,
    Form,
    help_text,
)
from bot.chat.port import NotAMember, Port
from bot.config import Admins
from bot.engine import QuizEngine
from bot.engine.engine import Bank
from bot.engine.learning import TopicMastery
from bot.engine.model import (
    DifficultyMode,
    Flag,
    FlagReason,
    Period,
    Place,
    Proposal,
    ProposalStatus,
    ReviewScope,
    Round,
)
from bot.engine.practice import DEFAULT_COUNT, PracticeTurn
from bot.errors import UserError
from bot.links import LinkMaker, Scope
from bot.scheduler import ScheduleService, schedule_request
from bot.text import Code, Link, Moment, Pre, Text, Verbatim, When, lines, say


class Services(Protocol):
    """What the flows use of the chat core: the engine, the platform's port and the services."""

    @property
    def engine(self) -> QuizEngine:
        """Return the quiz engine."""
        ...

    @property
    def port(self) -> Port:
        """Return the platform's port."""
        ...

    @property
    def admins(self) -> Admins:
        """Return the people listed in QUIZBOT_ADMINS."""
        ...

    @property
    def admins_only(self) -> bool:
        """Return whether only the listed people are admins."""
        ...

    @property
    def links(self) -> LinkMaker | None:
        """Return the dashboard link signer, or None while it is not set up."""
        ...

    @property
    def charts(self) -> Charts:
        """Return the chart drawer."""
        ...

    @property
    def chart_allowance(self) -> ChartAllowance:
        """Return how many charts each person and channel may still ask for."""
        ...

    @property
    def publisher(self) -> Publisher:
        """Return what posts cards and reveals."""
        ...

    @property
    def schedules(self) -> ScheduleService:
        """Return the daily schedules."""
        ...

    @property
    def drafts(self) -> forms.Drafts:
        """Return what each person sent of a question form in pages so far."""
        ...

    async def is_admin(
        self, place: Place, user: str, ask_platform: Callable[[], Awaitable[bool]]
    ) -> bool:
        """Return whether a person is an admin here (the platform asked only if needed)."""
        ...


@dataclass
class Context:
    """What a flow works with: the chat core, the place, the person, and the turn to reply."""

    chat: Services
    place: Place
    user: str
    turn: Turn
    prepared: object = None  # what the flow's ``check`` worked out before the first response
    _admin: bool | None = None

    async def is_admin(self) -> bool:
        """Return whether the person is an admin: listed in QUIZBOT_ADMINS, or by the platform."""
        if self._admin is None:
            self._admin = await self.chat.is_admin(
                self.place, self.user, self.turn.exchange.is_admin
            )
        return self._admin

    async def require_admin(self, template: str) -> None:
        """Refuse anyone who is not an admin, with a sentence naming who is."""
        if not await self.is_admin():
            admins = M.ADMINS_LISTED if self.chat.admins_only else self.chat.port.admins
            raise UserError(say(template, admins=admins))

    async def say(self, content: Text, *, private: bool = True) -> None:
        """Reply to the person privately (or to the channel)."""
        await self.turn.reply(content, private=private)


Run = Callable[[Context, Call], Awaitable[None]]


@dataclass(frozen=True)
class Flow:
    """A command's work.

    ``instant`` answers without any I/O; ``form`` opens a form (made without I/O) as the first
    response; otherwise ``check`` (no I/O either) may refuse bad input before the first
    response, and ``run`` does the work.
    """

    run: Run | None = None
    instant: Callable[[Context, Call], Text] | None = None
    check: Callable[[Context, Call], object] | None = None
    form: Callable[[Context, Call], forms.Form] | None = None  # opened as the first response


# ---------------------------------------------------------------- /quiz


async def next_question(ctx: Context, call: Call) -> None:
    """Open a round here and post its card; free the channel again if the card never posts."""
    engine = ctx.chat.engine
    # The tag ``computed`` asks a question computed from a template (the engine reads it).
    card = await engine.start_round(ctx.place, tag=call.args.text("tag"))
    # A close that arrives before the reference is stored waits for it (Publisher.posting).
    async with ctx.chat.publisher.posting(card.round_id):
        try:
            ref = await ctx.turn.reply(card, private=False)
            if ref is None:
                raise RuntimeError(f"the card of round {card.round_id} has no message reference")
        except NotAMember:
            await engine.withdraw(card.round_id)
            raise UserError(say(M.CANNOT_POST, how=ctx.chat.port.add_me)) from None
        except BaseException:
            await engine.withdraw(card.round_id)
            raise
        await engine.attach_message(card.round_id, ref)


async def close_round(ctx: Context, call: Call) -> None:
    """Close this channel's round, say so, then show the results and the explanation.

    A scheduled (daily) round is closed early by admins only: closing it shows the answer and
    ends the streak of everyone who has not answered yet.
    """

    async def allowed(rnd: Round) -> None:
        if rnd.scheduled:
            await ctx.require_admin(M.CLOSE_DAILY_ADMINS_ONLY)

    reveal = await ctx.chat.engine.close_in_channel(ctx.place, allowed=allowed)
    await ctx.say(say(M.CLOSED))
    await ctx.chat.publisher.publish_reveal(reveal)


async def leaderboard(ctx: Context, call: Call) -> None:
    """Show the top scorers of a period and the caller's rank."""
    period = call.args.get("period")
    board = await ctx.chat.engine.leaderboard(
        ctx.place.platform,
        ctx.place.workspace,
        period if isinstance(period, Period) else Period.WEEK,
        ctx.user,
    )
    await ctx.turn.reply(words.leaderboard(board), private=True)


async def stats(ctx: Context, call: Call) -> None:
    """Show one person's totals and streaks."""
    who = call.args.text("user") or ctx.user
    await ctx.say(words.stats(await ctx.chat.engine.stats(ctx.place, who)))


async def settings(ctx: Context, call: Call) -> None:
    """Show this channel's options to anyone; change them for admins, only what was given."""
    engine = ctx.chat.engine
    changes, minutes = call.args.flag("changes"), call.args.number("minutes")
    retention = call.args.number("retention")
    computed = call.args.number("computed")
    mode = call.args.get("difficulty")
    difficulty = DifficultyMode(mode) if isinstance(mode, str) else None
    scope = call.args.text("review")
    review = ReviewScope(scope) if scope is not None else None
    platform, workspace = ctx.place.platform, ctx.place.workspace
    given = (changes, minutes, difficulty, retention, computed, review)
    if all(value is None for value in given):
        memory = await engine.memory_for(platform, workspace)
        reviews = await engine.review_scope(platform, workspace)
        shown = words.settings(await engine.channel_settings(ctx.place), memory.retention, reviews)
        await ctx.say(shown)
        return
    await ctx.require_admin(M.SETTINGS_ADMINS_ONLY)
    if retention is not None:
        await engine.set_retention(platform, workspace, retention / 100)
    if review is not None:
        await engine.set_review_scope(platform, workspace, review)
    saved = await engine.change_channel_settings(
        ctx.place,
        allow_change=changes,
        round_minutes=minutes,
        difficulty=difficulty,
        computed_percent=computed,
    )
    memory = await engine.memory_for(platform, workspace)
    reviews = await engine.review_scope(platform, workspace)
    await ctx.say(say(M.SAVED, settings=words.settings(saved, memory.retention, reviews)))


async def schedule(ctx: Context, call: Call) -> None:
    """Show the daily question to anyone, or set it (admins)."""
    service = ctx.chat.schedules
    if not call.args:
        await ctx.say(words.schedule(await service.show(ctx.place)))
        return
    time = call.args.text("time")
    if time is None:
        needs = say(M.SCHEDULE_NEEDS_TIME, example=Code("time:09:30"))
        raise BadInput(needs, grammar=QUIZ, verb=call.verb)
    request = schedule_request(
        time,
        zone=call.args.text("tz"),
        days=call.args.text("days"),
        tag=call.args.text("tag"),
        digest=call.args.text("digest"),
        close=call.args.text("close"),
    )
    await ctx.require_admin(M.SCHEDULE_ADMINS_ONLY)
    view = await service.set(ctx.place, request, user=ctx.user, admin=True)
    await ctx.say(say(M.SCHEDULED, schedule=words.schedule(view)))


async def unschedule(ctx: Context, call: Call) -> None:
    """Stop the daily question (admins)."""
    await ctx.require_admin(M.SCHEDULE_ADMINS_ONLY)
    removed = await ctx.chat.schedules.remove(ctx.place, admin=True)
    await ctx.say(say(M.SCHEDULE_STOPPED) if removed else words.schedule(None))


async def review(ctx: Context, call: Call) -> None:
    """Re-ask the caller's most overdue question, privately."""
    engine, place = ctx.chat.engine, ctx.place
    question = await engine.next_review(place.platform, place.workspace, ctx.user)
    queue = await engine.review_queue(place.platform, place.workspace, ctx.user)
    if question is None:
        await ctx.say(words.nothing_due(queue))
    else:
        await ctx.turn.reply(words.review_ask(question, queue), private=True)


async def report(ctx: Context, call: Call) -> None:
    """Show the admins, privately, which questions are flagged and which are hardest here."""
    await ctx.require_admin(M.REPORT_ADMINS_ONLY)
    engine, place = ctx.chat.engine, ctx.place
    items = await engine.question_report(place.platform, place.workspace)
    flags = await engine.open_flags(place.platform, place.workspace)
    paused = _paused(flags, await engine.bank_for(place.platform, place.workspace))
    waiting = len(await engine.proposals(place.platform, place.workspace))
    await ctx.turn.reply(words.report(items, flags, paused, waiting), private=True)


# How many proposals ``/quiz proposals`` shows, each with its buttons (the oldest first).
PROPOSALS_SHOWN = 5


async def proposals(ctx: Context, call: Call) -> None:
    """List the proposals waiting here with their buttons, or approve or reject one (admins)."""
    given = call.args.get("proposals")
    if isinstance(given, tuple):
        action, proposal_id, reason = given
    else:
        action, proposal_id = call.args.text("action"), call.args.number("id")
        reason = call.args.text("reason") or None
    if action is None and (proposal_id is not None or reason is not None):
        raise BadInput(say(M.PROPOSALS_USAGE), grammar=QUIZ, verb=call.verb)
    if action is not None and (proposal_id is None or (action == "approve" and reason)):
        raise BadInput(say(M.PROPOSALS_USAGE), grammar=QUIZ, verb=call.verb)
    if action is not None and proposal_id is not None:
        await decide(ctx, proposal_id, action, reason)
        return
    await ctx.require_admin(M.PROPOSALS_ADMINS_ONLY)
    waiting = await ctx.chat.engine.proposals(ctx.place.platform, ctx.place.workspace)
    await ctx.say(words.proposals_waiting(len(waiting), PROPOSALS_SHOWN))
    for item in waiting[:PROPOSALS_SHOWN]:
        await ctx.turn.reply(words.proposal(item), private=True)


async def decide(ctx: Context, proposal_id: int, decision: str, reason: str | None = None) -> None:
    """Approve or reject a proposal of this workspace (admins only; anyone else is refused and
    nothing changes). A proposal decided already is said so, unchanged."""
    await ctx.require_admin(M.PROPOSALS_ADMINS_ONLY)
    item = await proposal_here(ctx, proposal_id)
    engine = ctx.chat.engine
    if decision == "approve":
        await ctx.say(words.approved(await engine.approve(item.id, ctx.user)))
    else:
        await ctx.say(words.rejected(await engine.reject(item.id, ctx.user, reason)))


async def editable(ctx: Context, proposal_id: int) -> Proposal:
    """Return a pending proposal of this workspace for an admin to edit; refuse anyone else,
    and a proposal decided already, changing nothing."""
    await ctx.require_admin(M.PROPOSALS_ADMINS_ONLY)
    item = await proposal_here(ctx, proposal_id)
    if item.status is not ProposalStatus.PENDING:
        raise AlreadyDecided(item)
    return item


def form_values(item: Proposal) -> dict[str, str]:
    """Return a proposal's question as the question form's values (its id alone, should its
    text no longer load)."""
    questions, problems = check_text(item.body, f"proposal {item.id}")
    if problems or len(questions) != 1:
        return {"id": item.question_id}
    return values_of(questions[0])


async def proposal_here(ctx: Context, proposal_id: int) -> Proposal:
    """Return a proposal of this workspace; one of another workspace is as unknown as none."""
    found = None
    if proposal_id <= PROPOSAL_ID_MAX:
        found = await ctx.chat.engine.proposal(proposal_id)
    if found is None or (found.platform, found.workspace) != (
        ctx.place.platform,
        ctx.place.workspace,
    ):
        raise UnknownProposal(proposal_id)
    return found


async def hide(ctx: Context, call: Call) -> None:
    """Keep a question (the files' or the workspace's own) out of this workspace's rounds, on
    every replica from its next round (admins; anyone else is refused and nothing changes)."""
    await _hiding(ctx, call, hidden=True)


async def unhide(ctx: Context, call: Call) -> None:
    """Let a hidden question back into this workspace's rounds (admins)."""
    await _hiding(ctx, call, hidden=False)


async def _hiding(ctx: Context, call: Call, *, hidden: bool) -> None:
    qid = str(call.args["id"])  # required: the grammar refuses a call without it
    await ctx.require_admin(M.HIDE_ADMINS_ONLY)
    engine, place = ctx.chat.engine, ctx.place
    question = Code(qid)
    if hidden:
        changed = await engine.hide(place.platform, place.workspace, qid, ctx.user)
        command = Code(f"/quiz unhide {qid}")
        await ctx.say(
            say(M.HIDDEN, question=question, command=command)
            if changed
            else say(M.HIDDEN_ALREADY, question=question)
        )
        return
    changed = await engine.unhide(place.platform, place.workspace, qid, ctx.user)
    await ctx.say(
        say(M.UNHIDDEN, question=question)
        if changed
        else say(M.UNHIDDEN_ALREADY, question=question)
    )


def _paused(flags: Sequence[Flag], bank: Bank) -> set[str]:
    """Return the reported questions the workspace's bank no longer asks."""
    asked = {q.id for q in bank.filter(None)}
    return {f.question_id for f in flags if f.question_id not in asked}


async def flag(ctx: Context, call: Call) -> None:
    """Record a player's report of a problem with the channel's latest question, privately."""
    given = call.args.get("flag")
    if isinstance(given, tuple):
        reason, note = given
    else:
        reason, note = call.args.text("reason") or "", call.args.text("note")
    flagged = await ctx.chat.engine.flag(ctx.place, ctx.user, FlagReason(reason), note or None)
    await ctx.say(words.flagged(flagged, FlagReason(reason)))


def add_question(ctx: Context, call: Call) -> forms.Form:
    """Return an empty question form to open (its first page where a form holds few fields):
    a draft left from an earlier one is dropped."""
    ctx.chat.drafts.drop(ctx.place, ctx.user)
    return forms.add_form(ctx.place, ctx.turn.exchange.form_fields)


async def dashboard(ctx: Context, call: Call) -> None:
    """Reply privately with a signed dashboard link: the workspace's (admins) or one's own."""
    maker = ctx.chat.links
    if maker is None:
        await ctx.say(
            say(
                M.DASHBOARD_OFF,
                secret=Code("QUIZBOT_DASHBOARD_SECRET"),
                url=Code("QUIZBOT_PUBLIC_URL"),
            )
        )
        return
    scope = Scope.ME if call.args.text("scope") == "me" else Scope.WORKSPACE
    if scope is Scope.WORKSPACE and not await ctx.is_admin():
        me = Code("/quiz dashboard me")
        raise UserError(say(M.DASHBOARD_ADMINS_ONLY, admins=ctx.chat.port.admins, me=me))
    url = maker.url(
        ctx.place.platform, ctx.place.workspace, scope, ctx.user, ctx.chat.engine.clock()
    )
    await ctx.say(say(M.DASHBOARD_LINK, link=Link(M.DASHBOARD_LINK_TITLE, url)))


async def me(ctx: Context, call: Call) -> None:
    """Show the caller's own totals, streak, due reviews, tracks and week, privately."""
    page, _ = await my_page(ctx.chat, ctx.place, ctx.user, ctx.is_admin)
    await ctx.turn.reply(page, private=True)


async def my_page(
    chat: Services, place: Place, user: str, is_admin: Callable[[], Awaitable[bool]]
) -> tuple[Panel, Panel]:
    """Return a person's own page, as ``/quiz me`` shows it, and the week's leaderboard.

    A home screen (Slack's App Home) shows both; ``is_admin`` is the core's admin check, asked
    only where the set-up dashboard would show its button.
    """
    engine = chat.engine
    summary = await engine.player_summary(place.platform, place.workspace, user)
    tracks = await engine.tracks.mine(place.platform, place.workspace, user)
    topics = await my_mastery(engine, place, user)
    dashboard = await dashboard_for(chat, is_admin)
    page = words.me(summary, dashboard=dashboard, tracks=tracks, topics=topics)
    return page, words.leaderboard(summary.week)


async def my_mastery(engine: QuizEngine, place: Place, user: str) -> tuple[TopicMastery, ...]:
    """Return one person's mastery per topic (every topic at 0 for someone with no answer)."""
    found = await engine.mastery(place.platform, place.workspace, user)
    if found:
        return found[0].topics
    sizes = Counter(engine.topics(await engine.bank_for(place.platform, place.workspace)).values())
    return tuple(TopicMastery(t, n, 0, 0.0) for t, n in sizes.items())


async def track(ctx: Context, call: Call) -> None:
    """Show this channel's learning track and the caller's progress, privately, then ask the
    caller's next question of it; with no track here, the tracks there are."""
    book = ctx.chat.engine.tracks
    progress = await book.progress(ctx.place, ctx.user)
    if progress is None:
        lead = say(M.TRACK_NOT_RUNNING, start=Code("/quiz track start NAME"))
        run = await book.store.track_run(ctx.place)
        if run is not None and not run.finished and run.track not in book.tracks:
            lead = say(M.TRACK_GONE, name=Code(run.track), stop=Code("/quiz track stop"))
        await ctx.turn.reply(words.track_list(book.tracks, lead=lead), private=True)
        return
    await ctx.turn.reply(words.track(progress), private=True)
    if progress.next_question is not None:
        question = ctx.chat.engine.bank.by_id(progress.next_question)
        await ctx.turn.reply(words.track_ask(question, progress), private=True)


async def track_list(ctx: Context, call: Call) -> None:
    """Show the learning tracks there are to run, privately."""
    await ctx.turn.reply(words.track_list(ctx.chat.engine.tracks.tracks), private=True)


async def track_start(ctx: Context, call: Call) -> None:
    """Run a learning track in this channel on its daily schedule (admins); a time given sets
    the schedule as ``/quiz schedule`` does."""
    name = call.args.text("name") or ""
    book, service = ctx.chat.engine.tracks, ctx.chat.schedules
    book.get(name)  # an unknown name is refused before anything else
    await ctx.require_admin(M.TRACK_ADMINS_ONLY)
    time = call.args.text("time")
    if time is not None:
        request = schedule_request(time, zone=call.args.text("tz"), days=call.args.text("days"))
        view = await service.set(ctx.place, request, user=ctx.user, admin=True)
    else:
        if call.args.text("tz") is not None or call.args.text("days") is not None:
            needs = say(M.SCHEDULE_NEEDS_TIME, example=Code("time:09:30"))
            raise BadInput(needs, grammar=QUIZ, verb=call.verb)
        shown = await service.show(ctx.place)
        if shown is None:
            example = Code(f"/quiz track start {name} 09:30 Europe/Berlin weekdays")
            raise UserError(say(M.TRACK_NEEDS_SCHEDULE, example=example))
        view = shown
    chosen, _ = await book.start(ctx.place, name, ctx.user)
    when = Moment(view.next_post.at, When.RELATIVE)
    await ctx.say(
        say(M.TRACK_STARTED, title=Verbatim(chosen.title), units=len(chosen.units), when=when)
    )


async def track_stop(ctx: Context, call: Call) -> None:
    """Stop this channel's learning track (admins); the schedule stays."""
    await ctx.require_admin(M.TRACK_ADMINS_ONLY)
    book = ctx.chat.engine.tracks
    stopped = await book.stop(ctx.place)
    if stopped is None:
        await ctx.say(say(M.TRACK_NOT_RUNNING, start=Code(words.TRACK_START_USAGE)))
        return
    named = book.tracks.get(stopped.track)
    title = named.title if named is not None else stopped.track
    units = len(named.units) if named is not None else stopped.opened
    await ctx.say(say(M.TRACK_STOPPED, title=Verbatim(title), opened=stopped.opened, units=units))


async def practice(ctx: Context, call: Call) -> None:
    """Start a private practice session and ask its first question (never in the channel)."""
    place = ctx.place
    turn = await ctx.chat.engine.start_practice(
        place.platform,
        place.workspace,
        ctx.user,
        topic=call.args.text("topic"),
        count=call.args.number("count") or DEFAULT_COUNT,
    )
    await ask_practice(ctx.turn, turn)


async def ask_practice(reply: Turn, turn: PracticeTurn) -> None:
    """Show a session's next question privately, or its end."""
    if turn.item is None:
        await reply.reply(words.practice_end(turn), private=True)
    else:
        await reply.reply(words.practice_ask(turn), private=True)


async def dashboard_for(chat: Services, is_admin: Callable[[], Awaitable[bool]]) -> bool:
    """Return whether to offer the dashboard button: set up, and the person is an admin.

    The admin question is asked only where its answer shows.
    """
    return chat.links is not None and await is_admin()


def show_help(ctx: Context, call: Call) -> Text:
    """Return how to use every command, in the form the command came in."""
    return help_text(GRAMMARS, call.form)


# ---------------------------------------------------------------- /bandwidth


def estimate_of(ctx: Context, call: Call) -> Estimate | Plan:
    """Read and price a /bandwidth request: an estimate, or a training-step plan.

    Bad input is refused with the usage: the estimate's, or the planner's for a plan.
    """
    line, planned = call.args.text("request"), call.args.text("plan")
    if line is not None and line.lower().startswith("plan="):
        planned = line[len("plan=") :]  # the options form's spelling, typed
    asked = f"plan {planned}" if planned is not None else line
    if asked is not None and is_plan(asked):
        try:
            return ctx.chat.charts.plan(asked)
        except BandwidthError as exc:
            raise UserError(lines(exc.text, Pre(PLAN_USAGE))) from None
    if line is None and not call.args.text("size"):
        example = Code("plan:llama3-70b gpus=128")
        raise BadInput(say(M.BANDWIDTH_SIZE_OR_PLAN, example=example), grammar=BANDWIDTH)
    try:
        return ctx.chat.charts.estimate(request_of(call.args))
    except BandwidthError as exc:
        raise BadInput(exc.text, grammar=BANDWIDTH, verb=call.verb) from None


def admitted_estimate(ctx: Context, call: Call) -> Estimate | Plan:
    """Read the request; refuse it when the chart queue is full, else take it from the allowance.

    Bad input and a full queue are refused first, so they cost nobody a chart.
    """
    result = estimate_of(ctx, call)
    charts = ctx.chat.charts
    if charts.busy():
        raise UserError(say(M.BANDWIDTH_BUSY, waiting=charts.waiting))
    refused = ctx.chat.chart_allowance.check(ctx.place, ctx.user)
    if refused is not None:
        raise UserError(refused)
    return result


async def bandwidth(ctx: Context, call: Call) -> None:
    """Answer with the table and the chart; drawing is slow, so the answer is deferred first."""
    prepared = ctx.prepared
    result = prepared if isinstance(prepared, Estimate | Plan) else admitted_estimate(ctx, call)
    await ctx.turn.defer(private=False)
    try:
        view = await ctx.chat.charts.view(result)
    except ChartsBusy as busy:
        raise UserError(say(M.BANDWIDTH_BUSY, waiting=busy.waiting)) from None
    await ctx.turn.reply(view, private=False)


FLOWS: dict[tuple[str, str], Flow] = {
    ("quiz", "next"): Flow(next_question),
    ("quiz", "close"): Flow(close_round),
    ("quiz", "leaderboard"): Flow(leaderboard),
    ("quiz", "stats"): Flow(stats),
    ("quiz", "settings"): Flow(settings),
    ("quiz", "schedule"): Flow(schedule),
    ("quiz", "unschedule"): Flow(unschedule),
    ("quiz", "review"): Flow(review),
    ("quiz", "report"): Flow(report),
    ("quiz", "proposals"): Flow(proposals),
    ("quiz", "hide"): Flow(hide),
    ("quiz", "unhide"): Flow(unhide),
    ("quiz", "flag"): Flow(flag),
    ("quiz", "add"): Flow(form=add_question),
    ("quiz", "dashboard"): Flow(dashboard),
    ("quiz", "me"): Flow(me),
    ("quiz", "track"): Flow(track),
    ("quiz", "track-list"): Flow(track_list),
    ("quiz", "track-start"): Flow(track_start),
    ("quiz", "track-stop"): Flow(track_stop),
    ("quiz", "practice"): Flow(practice),
    ("quiz", "help"): Flow(instant=show_help),
    ("bandwidth", ""): Flow(bandwidth, check=admitted_estimate),
}

__all__ = ["FLOWS", "Context", "Flow", "Form"]
