"""The chat core: what each event does, for every platform, and the one error boundary.

An adapter translates a platform's payload into an event (``bot.chat.events``) and hands it here
with an exchange to answer through; the core reads commands with the grammar, runs the flow,
grades answers, and sends what there is to say. Nothing here knows a platform.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot import messages as M
from bot.bank.bank import QuestionBank
from bot.bank.form import check_form
from bot.chat import forms, words
from bot.chat._charts import ChartAllowance, Charts
from bot.chat._publish import Publisher
from bot.chat._turn import Turn
from bot.chat.buttons import (
    AddPage,
    Choice,
    ConfidenceChoice,
    Decide,
    PracticeChoice,
    PracticeStep,
    Report,
    ReviewChoice,
    RunVerb,
    TrackChoice,
    read_button,
    refusal_of,
)
from bot.chat.content import Feedback, MessageUser, Offer, Panel
from bot.chat.events import Click, Command, Press, Reaction, ReviewClick, Submit
from bot.chat.flows import (
    FLOWS,
    Context,
    ask_practice,
    decide,
    editable,
    form_values,
    my_page,
)
from bot.chat.grammar import GRAMMARS, BadInput, Call, Form, read_options, read_text, usage
from bot.chat.names import Lookup, NameBook
from bot.chat.port import Exchange, Port
from bot.config import Admins
from bot.engine import QuizEngine
from bot.engine.model import AnswerStatus, FlagReason, Place
from bot.errors import NotFound, UserError
from bot.links import LinkMaker
from bot.observability.drain import Drain
from bot.observability.metrics import count_answer, handler_seconds
from bot.scheduler import ScheduleService, schedule_store_of
from bot.text import Code, Text, lines, say, text

log = logging.getLogger(__name__)

COUNTED = (AnswerStatus.ACCEPTED, AnswerStatus.CHANGED)
# The key of ``Chat.edits``' one value: the number of the proposal a form edits.
EDITING = "proposal"
# Hears whether a reaction's answer is settled (True) or failed and may be tried again (False).
Settled = Callable[[bool], None]


class Chat:
    """Every chat flow, written once, on an engine and a platform's port."""

    def __init__(
        self,
        engine: QuizEngine,
        port: Port,
        *,
        admins: Admins | frozenset[str] = frozenset(),
        admins_only: bool = False,
        charts: Charts | None = None,
        refresh_every: float = 3.0,
        answer_slots: int | None = None,
        links: LinkMaker | None = None,
        name_lookup: Lookup | None = None,
    ) -> None:
        self.engine = engine
        self.port = port
        self.admins = admins if isinstance(admins, Admins) else Admins(frozenset(admins))
        # Signs dashboard links; None while QUIZBOT_DASHBOARD_SECRET is unset.
        self.links = links
        # Only the listed people are admins: the platform is never asked (on Slack, users.info
        # and its users:read scope go unused).
        self.admins_only = admins_only
        self.charts = charts or Charts.load()
        # How often each person and workspace may ask for a /bandwidth chart.
        self.chart_allowance = ChartAllowance()
        self.publisher = Publisher(engine, port, charts=self.charts, refresh_every=refresh_every)
        self.schedules = ScheduleService(engine, schedule_store_of(engine))
        # Counts the work still running, so a shutdown can let it finish.
        self.drain = Drain()
        # What each person sent of a question form in pages, until its last page.
        self.drafts = forms.Drafts()
        # Whose open question form edits a proposal (its number): sending it approves that
        # proposal with the edited question instead of adding a new one.
        self.edits = forms.Drafts()
        # What people, channels and the workspace are called, for the dashboard and exports.
        self.names = NameBook(
            engine.store, engine.clock, port.platform, name_lookup, drain=self.drain
        )
        # More answers at once than the store can use would only queue inside it (in a pool,
        # where a long burst meets the pool's timeout); here they wait their turn instead.
        self._answering = asyncio.Semaphore(answer_slots or engine.store.answers_at_once)
        grammars = {g.name: g for g in GRAMMARS}
        self.grammars = grammars
        missing = [
            (g.name, v.name) for g in GRAMMARS for v in g.verbs if (g.name, v.name) not in FLOWS
        ]
        if missing:
            raise RuntimeError(f"verbs without a flow: {missing}")

    @property
    def platform(self) -> str:
        """Return the platform this core serves."""
        return self.port.platform

    # ---------------------------------------------------------------- commands

    async def command(self, event: Command, exchange: Exchange, *, kind: str = "command") -> None:
        """Answer a slash command."""
        async with self._handling(kind):
            turn = Turn(exchange)
            ctx = Context(self, event.place, event.user, turn)
            try:
                call = self._read(event)
                flow = FLOWS[(call.grammar.name, call.verb.name)]
                if flow.instant is not None:
                    await turn.reply(flow.instant(ctx, call), private=True)
                    return
                if flow.form is not None:
                    self.edits.drop(event.place, event.user)  # a fresh form edits nothing
                    await exchange.open_form(flow.form(ctx, call))
                    return
                if flow.check is not None:
                    ctx.prepared = flow.check(ctx, call)
                await turn.start(private=not call.verb.public)
                assert flow.run is not None
                await flow.run(ctx, call)
            except Exception as exc:
                await self._fail(exc, turn, self._where(event.place, event.user), form=_form(event))
            finally:
                await turn.close()

    async def is_admin(
        self, place: Place, user: str, ask_platform: Callable[[], Awaitable[bool]]
    ) -> bool:
        """Return whether a person is an admin here (listed, else as ``ask_platform`` says)."""
        if self.admins.lists(place.platform, place.workspace, user):
            return True
        return not self.admins_only and await ask_platform()

    def _read(self, event: Command) -> Call:
        grammar = self.grammars[event.name]
        if event.text is not None:
            return read_text(grammar, event.text)
        return read_options(grammar, event.verb, event.options)

    async def refuse(
        self, exchange: Exchange, place: Place | None, user: str, message: Text, *, kind: str
    ) -> None:
        """Tell someone their request cannot be read (what the platform's own checks caught)."""
        async with self._handling(kind):
            turn = Turn(exchange)
            await self._fail(UserError(message), turn, self._where(place, user))

    # ---------------------------------------------------------------- buttons and pages

    async def press(self, event: Press, exchange: Exchange, *, kind: str = "button") -> None:
        """Route a press of one of the bot's buttons; refuse an id the bot did not make."""
        button = read_button(event.button_id)
        match button:
            case Choice(round_id, key):
                await self.click(Click(event.place, event.user, round_id, key), exchange, kind=kind)
            case ReviewChoice(question_id, key):
                review = ReviewClick(event.place, event.user, question_id, key)
                await self.review_click(review, exchange, kind=kind)
            case TrackChoice(question_id, key):
                track = ReviewClick(event.place, event.user, question_id, key)
                await self.track_click(track, exchange, kind=kind)
            case PracticeChoice(question_id, key):
                await self.practice_press(event, exchange, kind, answer=(question_id, key))
            case PracticeStep(step):
                await self.practice_press(event, exchange, kind, step=step)
            case ConfidenceChoice(question_id, confidence):
                await self.confidence_press(event, exchange, question_id, confidence, kind=kind)
            case RunVerb():
                run = Command(event.place, event.user, "quiz", verb=button.verb, options={})
                await self.command(run, exchange, kind=kind)
            case AddPage(page):
                await self._open_draft(event.place, event.user, exchange, page, kind=kind)
            case Report(question_id):
                form = forms.report_form(event.place, question_id)
                await self.open_form(event.place, event.user, exchange, form, kind=kind)
            case Decide(proposal_id, decision):
                await self.decide_press(event, exchange, proposal_id, decision, kind=kind)
            case None:
                refusal = say(refusal_of(event.button_id))
                await self.refuse(exchange, event.place, event.user, refusal, kind=kind)

    # ---------------------------------------------------------------- forms

    async def open_form(
        self, place: Place, user: str, exchange: Exchange, form: forms.Form, *, kind: str
    ) -> None:
        """Open a form as the interaction's first response (nothing may be sent before it)."""
        async with self._handling(kind):
            turn = Turn(exchange)
            try:
                await exchange.open_form(form)
            except Exception as exc:
                await self._fail(exc, turn, self._where(place, user))

    async def open_add_form(
        self,
        place: Place,
        user: str,
        exchange: Exchange,
        values: Mapping[str, str] | None = None,
        *,
        kind: str = "button",
    ) -> None:
        """Open the question form of ``/quiz add`` for a person, prefilled with ``values``.

        ``values`` are the form's fields by name (``bot.bank.form.QUESTION_FIELDS``:
        ``question``, ``A``..``E``, ``answer``, ``short``, ``full``, ``id``, ``tags``,
        ``difficulty``); ``bot.bank.form.values_of(question)`` gives them for a question, so an
        "Edit" of a question (a proposal, say) opens the form holding it. What is sent back is
        checked and saved as ``/quiz add``'s form is. Call it in place of any other first
        response to the interaction (``exchange``): a form must be the first.
        """
        per_page = exchange.form_fields
        if values and forms.add_pages(per_page)[1:]:
            self.drafts.keep(place, user, values)
        form = forms.add_form(place, per_page, values=values)
        await self.open_form(place, user, exchange, form, kind=kind)

    async def _open_draft(
        self, place: Place, user: str, exchange: Exchange, page: int, *, kind: str
    ) -> None:
        """Open a page of a person's question form again, holding what they wrote."""
        draft = self.drafts.get(place, user)
        if draft is None and page > 1:
            gone = say(M.ADD_DRAFT_GONE, command=Code("/quiz add"))
            await self.refuse(exchange, place, user, gone, kind=kind)
            return
        form = forms.add_form(place, exchange.form_fields, page=page, values=draft)
        await self.open_form(place, user, exchange, form, kind=kind)

    async def submit(self, event: Submit, exchange: Exchange, *, kind: str = "form") -> None:
        """Check a form sent back and act on it: save the question, record the report."""
        button = read_button(event.form_id)
        async with self._handling(kind):
            turn = Turn(exchange)
            try:
                match button:
                    case AddPage(page):
                        await self._submit_add(event, turn, page)
                    case Report(question_id):
                        await self._submit_report(event, turn, question_id)
                    case Decide(proposal_id, "reject"):
                        await turn.start(private=True)
                        ctx = Context(self, event.place, event.user, turn)
                        reason = " ".join(event.values.get("reason", "").split()) or None
                        await decide(ctx, proposal_id, "reject", reason)
                    case _:
                        raise UserError(say(M.NOT_A_BUTTON))
            except Exception as exc:
                await self._fail(exc, turn, self._where(event.place, event.user))
            finally:
                await turn.close()

    async def _submit_add(self, event: Submit, turn: Turn, page: int) -> None:
        place, user, exchange = event.place, event.user, turn.exchange
        per_page = exchange.form_fields
        pages = forms.add_pages(per_page)
        paged = len(pages) > 1
        values = dict(event.values)
        if paged:
            draft = self.drafts.get(place, user)
            if draft is None and page > 1:
                raise UserError(say(M.ADD_DRAFT_GONE, command=Code("/quiz add")))
            sent = {f.name for f in pages[min(page, len(pages)) - 1]}
            values = (draft or {}) | {k: v for k, v in values.items() if k in sent}
            if page < len(pages):
                self.drafts.keep(place, user, values)
                go = Offer(AddPage(page + 1), M.ADD_CONTINUE, primary=True)
                kept = say(M.ADD_PAGE_KEPT, page=page, pages=len(pages), go=M.ADD_CONTINUE)
                await turn.reply(Feedback(kept, offers=(go,)), private=True)
                return
        engine = self.engine
        current = await engine.bank_for(place.platform, place.workspace)
        if not isinstance(current, QuestionBank):
            raise UserError(say(M.PROPOSALS_NOT_KEPT))
        editing = self.edits.get(place, user)
        # An edit of a proposal may keep an id the bank has (a proposed edit of a question).
        checked = check_form(values, current, new_only=editing is None)
        if not checked.ok:
            first = next(iter(checked.errors))
            if paged:
                self.drafts.keep(place, user, values)
            form = forms.add_form(
                place,
                per_page,
                page=forms.page_of(first, per_page),
                values=values,
                errors=checked.errors,
            )
            log.info(
                "question form refused: %s", dict(checked.errors), extra=self._where(place, user)
            )
            await exchange.refuse_form(form)
            return
        await turn.start(private=True)
        admin = await self.is_admin(place, user, exchange.is_admin)
        assert checked.question is not None
        if editing is not None:
            if not admin:
                raise UserError(say(M.PROPOSALS_ADMINS_ONLY, admins=self.port.admins))
            published = await engine.approve(int(editing[EDITING]), user, body=checked.body)
            self.edits.drop(place, user)
            self.drafts.drop(place, user)
            await turn.reply(words.approved(published), private=True)
            return
        result = await engine.banks.submit(
            place.platform,
            place.workspace,
            checked.body,
            author=user,
            admin=admin,
            at=engine.clock(),
            channel=place.channel,
        )
        self.drafts.drop(place, user)
        await turn.reply(words.submitted(result), private=True)

    async def _submit_report(self, event: Submit, turn: Turn, question_id: str) -> None:
        place, user, exchange = event.place, event.user, turn.exchange
        errors = forms.report_errors(event.values)
        if errors:
            form = forms.report_form(place, question_id, values=event.values)
            await exchange.refuse_form(replace(form, errors=errors))
            return
        await turn.start(private=True)
        reason = FlagReason(event.values.get("reason", "").strip().lower())
        note = " ".join(event.values.get("note", "").split()) or None
        flagged = await self.engine.flag(place, user, reason, note, question_id=question_id)
        await turn.reply(words.flagged(flagged, reason), private=True)

    async def home(
        self, place: Place, user: str, platform_admin: Callable[[], Awaitable[bool]]
    ) -> tuple[Panel, Panel]:
        """Return a person's home screen: their page as ``/quiz me`` shows it, and the week.

        ``platform_admin`` asks the platform whether the person administers the workspace; it
        is asked only as ``/quiz`` asks it (never with ``admins_only``).
        """
        return await my_page(self, place, user, lambda: self.is_admin(place, user, platform_admin))

    # ---------------------------------------------------------------- answers

    async def click(self, event: Click, exchange: Exchange, *, kind: str = "button") -> None:
        """Grade a click: the answer is committed before anyone is told (or any ack is given)."""
        async with self._handling(kind):
            turn = Turn(exchange)
            try:
                await turn.start(private=True)
                async with self._answering:
                    outcome = await self.engine.answer(
                        self.platform, event.place.workspace, event.round_id, event.user, event.key
                    )
                count_answer(self.platform, outcome.status.value)
                await turn.reply(words.feedback(outcome), private=True)
                if outcome.status in COUNTED:
                    self.publisher.note_answer(event.round_id)
            except Exception as exc:
                await self._fail(exc, turn, self._where(event.place, event.user))
            finally:
                await turn.close()

    async def reaction(
        self, event: Reaction, *, kind: str = "reaction", settled: Settled | None = None
    ) -> None:
        """Count an emoji reaction on an open card as an answer; tell the reactor privately.

        ``settled`` hears, once, whether the reaction's fate is sealed: True once its answer is
        committed (or there is nothing to record), False if grading failed, so that a platform
        which redelivers unacknowledged events may try again. The reactor is told afterwards.
        """
        once = _Once(settled)
        async with self._handling(kind):
            where = self._where(event.place, event.user)
            try:
                await self._reaction(event, once)
            except Exception as exc:
                once(False)
                error_id = secrets.token_hex(4)
                log.error(
                    "error %s grading a reaction",
                    error_id,
                    exc_info=exc,
                    extra={**where, "error_id": error_id},
                )
                await self._tell(event, words.apology(error_id), where)
            finally:
                once(True)

    async def _reaction(self, event: Reaction, settled: Settled) -> None:
        rnd = await self.engine.open_round(event.place)
        if rnd is None or rnd.message_ref != event.message_ref:
            return
        try:
            async with self._answering:
                outcome = await self.engine.answer(
                    self.platform, event.place.workspace, rnd.id, event.user, event.key
                )
        except NotFound:
            return
        except UserError as exc:
            settled(True)
            await self._tell(event, exc.text, self._where(event.place, event.user))
            return
        settled(True)
        count_answer(self.platform, outcome.status.value)
        if outcome.status is AnswerStatus.ALREADY and outcome.choice.key == event.key:
            return  # a redelivered event, or the same answer again: already told
        await self._tell(event, words.feedback(outcome).text, self._where(event.place, event.user))
        if outcome.status in COUNTED:
            self.publisher.note_answer(rnd.id)

    async def _tell(self, event: Reaction, message: Text, where: dict[str, str]) -> None:
        try:
            await self.port.send(MessageUser(event.place, event.user, message, event.message_ref))
        except Exception:
            log.exception("could not tell the user about their reaction", extra=where)

    async def review_click(
        self, event: ReviewClick, exchange: Exchange, *, kind: str = "button"
    ) -> None:
        """Grade a private review answer (scores never change) and tell the user."""
        async with self._handling(kind):
            turn = Turn(exchange)
            try:
                await turn.start(private=True)
                outcome = await self.engine.answer_review(
                    self.platform, event.place.workspace, event.user, event.question_id, event.key
                )
                await turn.reply(words.review_feedback(outcome), private=True)
            except Exception as exc:
                await self._fail(exc, turn, self._where(event.place, event.user))
            finally:
                await turn.close()

    async def track_click(
        self, event: ReviewClick, exchange: Exchange, *, kind: str = "button"
    ) -> None:
        """Grade a learning track question asked privately: it reviews the person's card as
        practice does (scores never change), and counts towards the track's unit."""
        async with self._handling(kind):
            turn = Turn(exchange)
            try:
                await turn.start(private=True)
                outcome = await self.engine.answer_practice(
                    self.platform, event.place.workspace, event.user, event.question_id, event.key
                )
                await turn.reply(words.review_feedback(outcome), private=True)
            except Exception as exc:
                await self._fail(exc, turn, self._where(event.place, event.user))

    async def practice_press(
        self,
        event: Press,
        exchange: Exchange,
        kind: str,
        *,
        answer: tuple[str, str] | None = None,
        step: str | None = None,
    ) -> None:
        """Answer a practice question, or step its session (Next, Stop): always privately."""
        async with self._handling(kind):
            turn = Turn(exchange)
            engine, place = self.engine, event.place
            try:
                await turn.start(private=True)
                if answer is not None:
                    result = await engine.answer_in_practice(
                        place.platform, place.workspace, event.user, *answer
                    )
                    await turn.reply(words.practice_feedback(result), private=True)
                elif step == "stop":
                    stopped = await engine.stop_practice(
                        place.platform, place.workspace, event.user
                    )
                    await turn.reply(words.practice_stopped(stopped), private=True)
                else:
                    following = await engine.practice_next(
                        place.platform, place.workspace, event.user
                    )
                    await ask_practice(turn, following)
            except Exception as exc:
                await self._fail(exc, turn, self._where(place, event.user))
            finally:
                await turn.close()

    async def confidence_press(
        self, event: Press, exchange: Exchange, question_id: str, confidence: str, *, kind: str
    ) -> None:
        """Re-rate one's latest answer to a question with "I was sure" or "I guessed"."""
        async with self._handling(kind):
            turn = Turn(exchange)
            place = event.place
            try:
                await turn.start(private=True)
                result = await self.engine.rate_confidence(
                    place.platform, place.workspace, event.user, question_id, confidence
                )
                await turn.reply(words.rated(result), private=True)
            except Exception as exc:
                await self._fail(exc, turn, self._where(place, event.user))
            finally:
                await turn.close()

    async def decide_press(
        self, event: Press, exchange: Exchange, proposal_id: int, decision: str, *, kind: str
    ) -> None:
        """An admin's Approve, Edit or Reject on a proposed question; anyone else is refused."""
        async with self._handling(kind):
            turn = Turn(exchange)
            ctx = Context(self, event.place, event.user, turn)
            try:
                if decision == "edit":
                    # The form must be the first response: nothing is sent before it.
                    item = await editable(ctx, proposal_id)
                    self.edits.keep(event.place, event.user, {EDITING: str(item.id)})
                    values = form_values(item)
                    await self.open_add_form(event.place, event.user, exchange, values, kind=kind)
                    return
                if decision == "reject":
                    # The reason is asked for in a form, sent back as this button's id.
                    item = await editable(ctx, proposal_id)
                    form = forms.reject_form(event.place, item.id)
                    await exchange.open_form(form)
                    return
                await turn.start(private=True)
                await decide(ctx, proposal_id, decision)
            except Exception as exc:
                await self._fail(exc, turn, self._where(event.place, event.user))
            finally:
                await turn.close()

    async def tell_proposals(self) -> int:
        """Tell the listed admins of each new proposal, with its buttons, and each decided
        proposal's author of the decision: privately, where it was proposed, once across
        replicas (a person the platform cannot reach is not asked again). Return how many
        were told."""
        told = 0
        for item in await self.engine.new_proposals(self.platform):
            if item.channel is None:
                continue  # nowhere to reach its admins: /quiz proposals lists it
            place = Place(item.platform, item.workspace, item.channel)
            shown = words.new_proposal(item)
            for admin in self.admins.of(item.platform, item.workspace):
                if admin == item.author:
                    continue
                told += await self._message(
                    MessageUser(place, admin, shown.text, None, shown.offers)
                )
        for item in await self.engine.decided_proposals(self.platform):
            assert item.channel is not None  # only proposals made in a channel are claimed
            place = Place(item.platform, item.workspace, item.channel)
            told += await self._message(MessageUser(place, item.author, words.decided(item)))
        return told

    async def _message(self, action: MessageUser) -> int:
        try:
            await self.port.send(action)
        except Exception:
            log.exception(
                "could not tell %s privately",
                action.user,
                extra=self._where(action.place, action.user),
            )
            return 0
        return 1

    # ---------------------------------------------------------------- the bot removed

    async def left_workspace(self, workspace: str, *, kind: str = "event") -> None:
        """The bot was removed from a workspace (uninstalled, kicked): its daily questions stop.

        Its open rounds are closed without a reveal, which could no longer be posted there.
        Raises if the schedules or rounds could not be changed, so that a platform which
        redelivers the event tries again.
        """
        async with self._handling(kind):
            stopped = await self.schedules.forget_workspace(self.platform, workspace)
            closed = await self.engine.close_workspace(self.platform, workspace)
            log.info(
                "removed from workspace %s: %d daily schedules stopped, %d open rounds closed",
                workspace,
                stopped,
                closed,
                extra={"platform": self.platform, "workspace": workspace},
            )

    async def left_channels(self, places: Sequence[Place], *, kind: str = "event") -> None:
        """The bot was removed from some channels of a workspace (a Teams team of a tenant).

        As ``left_workspace`` does for a whole workspace: their daily questions stop and their
        open rounds close without a reveal. Raises if a change could not be made.
        """
        async with self._handling(kind):
            stopped = closed = 0
            for place in places:
                stopped += await self.schedules.store.delete_schedule(place)
                rnd = await self.engine.open_round(place)
                if rnd is not None and await self.engine.close(rnd.id) is not None:
                    await self.engine.reveal_done(rnd.id)  # nowhere left to post it
                    closed += 1
            log.info(
                "removed from %d channels: %d daily schedules stopped, %d open rounds closed",
                len(places),
                stopped,
                closed,
                extra={"platform": self.platform},
            )

    # ---------------------------------------------------------------- the error boundary

    def _handling(self, kind: str) -> _Handling:
        """Count the block as a handler in flight, and time it, as ``async with``."""
        return _Handling(self.drain, handler_seconds(self.platform, kind))

    def _where(self, place: Place | None, user: str) -> dict[str, str]:
        where = {"platform": self.platform, "user": user}
        if place is not None:
            where |= {"workspace": place.workspace, "channel": place.channel}
        return where

    async def _fail(
        self, error: Exception, turn: Turn, where: dict[str, str], *, form: Form | None = None
    ) -> None:
        """Tell the user what went wrong: their mistake as it is, ours as an apology with an id."""
        if isinstance(error, BadInput):
            told = lines(error.text, usage(error.grammar, form or Form.TEXT, error.verb))
            log.info("refused: %s", error.message, extra=where)
        elif isinstance(error, UserError):
            told = error.text
            log.info("refused: %s", error.message, extra=where)
        else:
            error_id = secrets.token_hex(4)
            log.error(
                "error %s handling a request",
                error_id,
                exc_info=error,
                extra={**where, "error_id": error_id},
            )
            told = words.apology(error_id)
        try:
            await turn.reply(text(told), private=True)
        except Exception:
            log.exception("could not tell the user about an error", extra=where)


class _Once:
    """Tell a ``Settled`` listener once; later calls are ignored."""

    def __init__(self, listener: Settled | None) -> None:
        self._listener = listener

    def __call__(self, ok: bool) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener(ok)


class _Handling:
    """A handler in flight, timed: a plain class, as a generator-based one costs more a click."""

    __slots__ = ("_drain", "_seconds", "_start")

    def __init__(self, drain: Drain, seconds: Any) -> None:
        self._drain = drain
        self._seconds = seconds
        self._start = 0.0

    async def __aenter__(self) -> None:
        self._drain.enter()
        self._start = time.perf_counter()

    async def __aexit__(self, *_: object) -> None:
        try:
            self._seconds.observe(time.perf_counter() - self._start)
        finally:
            self._drain.leave()


def _form(event: Command) -> Form:
    return Form.TEXT if event.text is not None else Form.OPTIONS
