"""The quiz engine: rounds, answers, grading, reveals, scores and leaderboards.

It knows no platform and sends nothing: each operation takes plain values and returns a frozen
result that an adapter renders. The state changes replicas could race on (opening a round,
answering, closing, claiming a daily slot) are each one store transaction guarded by a database
constraint, so several replicas can share a store without talking to each other.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from bot import messages as M
from bot.engine import activity, analytics, instances, learning, practice
from bot.engine.learning import CardKey, MemoryCard, Review, Source, Study
from bot.engine.model import (
    Answerer,
    AnswerOutcome,
    AnswerRecord,
    AnswerStatus,
    ChannelSettings,
    ChoiceTally,
    DifficultyMode,
    Flag,
    Flagged,
    FlagReason,
    Leaderboard,
    LeaderboardEntry,
    Period,
    Place,
    PlayerSummary,
    Proposal,
    ProposalStatus,
    Proposed,
    Published,
    Question,
    QuestionCard,
    QuestionStats,
    ResolvedReport,
    Reveal,
    ReviewScope,
    Round,
    ScoreRow,
    UserStats,
)
from bot.engine.ports import Clock, PracticeMoved, RoundAlreadyOpen, Store, utc_now
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.engine.rules import points_for
from bot.engine.shared import Shared
from bot.engine.tracks import Track, TrackBook
from bot.errors import NotFound, UserError
from bot.text import Code, Text, echo, say

FASTEST_SHOWN = 3
LEADERBOARD_SIZE = 10
ROUND_CACHE_SIZE = 4096
# Computed questions read from the store (as each workspace asked them), kept by the engine.
INSTANCE_CACHE_SIZE = 4096
TOPIC_CACHE_SIZE = 64
# A right answer in a scheduled round reads the latest 8 rounds for the streak, then twice as
# many each time the run fills them, and all of them only past the last: the rows read are at
# most about four times the run, whatever the history. (With 8 then 64, a run of 8 read every
# round up to 64 of them, and the soak's cost per answer grew with the history:
# benchmarks/history_soak.py.)
STREAK_WINDOWS = (8, 16, 32, 64, 128, 256)


class Bank(Protocol):
    """The part of a question bank the engine uses."""

    def filter(self, tag: str | None) -> tuple[Question, ...]:
        """Return the questions with this tag (all with None)."""
        ...

    def by_id(self, question_id: str) -> Question:
        """Return the question with this id, a computed one drawn again (KeyError if unknown)."""
        ...

    @property
    def templates(self) -> tuple[str, ...]:
        """Return the ids of the computed-question templates (none for a bank without)."""
        ...

    def instance(self, template_id: str, seed: int) -> Question:
        """Return a template's question for a seed, id ``template#seed`` (KeyError if none)."""
        ...


class Banks(Protocol):
    """Where each workspace's bank comes from (bot.bank.workspace.WorkspaceBanks)."""

    async def bank_for(self, platform: str, workspace: str) -> Bank:
        """Return the workspace's bank as it is now."""
        ...

    async def revision(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> Question | None:
        """Return one revision of a workspace's own question, or None."""
        ...

    async def flag(
        self,
        place: Place,
        user: str,
        reason: FlagReason,
        note: str | None,
        at: datetime,
        question_id: str | None = None,
    ) -> Flagged:
        """Record a player's report on a question (the one named, else the channel's latest)."""
        ...

    async def open_flags(self, platform: str, workspace: str) -> list[Flag]:
        """Return the workspace's open reports."""
        ...

    async def resolved_reports(self, platform: str, at: datetime) -> list[ResolvedReport]:
        """Claim the resolved reports whose reporters are still to be told."""
        ...

    async def submit(
        self,
        platform: str,
        workspace: str,
        body: str,
        *,
        author: str,
        admin: bool,
        at: datetime,
        channel: str | None = None,
    ) -> Published | Proposed:
        """Take a question written for a workspace: live at once, or a proposal for review."""
        ...

    async def proposals(
        self, platform: str, workspace: str, status: ProposalStatus | None = ProposalStatus.PENDING
    ) -> list[Proposal]:
        """Return the workspace's proposals in this status (all with None), oldest first."""
        ...

    async def proposal(self, proposal_id: int) -> Proposal | None:
        """Return one proposal, or None."""
        ...

    async def approve(
        self, proposal_id: int, by: str, at: datetime, *, body: str | None = None
    ) -> Published:
        """Approve a pending proposal, once across replicas."""
        ...

    async def reject(
        self, proposal_id: int, by: str, at: datetime, reason: str | None = None
    ) -> Proposal:
        """Reject a pending proposal, once across replicas."""
        ...

    async def new_proposals(self, platform: str, at: datetime) -> list[Proposal]:
        """Claim the pending proposals whose workspace's admins are still to be told."""
        ...

    async def hide(
        self, platform: str, workspace: str, question_id: str, hidden: bool, by: str, at: datetime
    ) -> bool:
        """Hide a question in a workspace (or show it again); return whether that changed."""
        ...

    async def decided_proposals(self, platform: str, at: datetime) -> list[Proposal]:
        """Claim the decided proposals whose authors are still to be told."""
        ...


class OneBank:
    """Every workspace sees the same bank (no workspace banks)."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank

    async def bank_for(self, platform: str, workspace: str) -> Bank:
        """Return the one bank."""
        return self.bank

    async def revision(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> Question | None:
        """Return None: there are no revisions."""
        return None

    async def flag(
        self,
        place: Place,
        user: str,
        reason: FlagReason,
        note: str | None,
        at: datetime,
        question_id: str | None = None,
    ) -> Flagged:
        """Refuse: with no workspace banks, reports are not kept."""
        raise UserError(say(M.FLAG_NOT_KEPT))

    async def open_flags(self, platform: str, workspace: str) -> list[Flag]:
        """Return no reports."""
        return []

    async def resolved_reports(self, platform: str, at: datetime) -> list[ResolvedReport]:
        """Return no reports."""
        return []

    async def submit(
        self,
        platform: str,
        workspace: str,
        body: str,
        *,
        author: str,
        admin: bool,
        at: datetime,
        channel: str | None = None,
    ) -> Published | Proposed:
        """Refuse: with no workspace banks, questions are not kept."""
        raise UserError(say(M.PROPOSALS_NOT_KEPT))

    async def proposals(
        self, platform: str, workspace: str, status: ProposalStatus | None = ProposalStatus.PENDING
    ) -> list[Proposal]:
        """Return no proposals."""
        return []

    async def proposal(self, proposal_id: int) -> Proposal | None:
        """Return None: there are no proposals."""
        return None

    async def approve(
        self, proposal_id: int, by: str, at: datetime, *, body: str | None = None
    ) -> Published:
        """Refuse: with no workspace banks, there are no proposals."""
        raise UserError(say(M.PROPOSALS_NOT_KEPT))

    async def reject(
        self, proposal_id: int, by: str, at: datetime, reason: str | None = None
    ) -> Proposal:
        """Refuse: with no workspace banks, there are no proposals."""
        raise UserError(say(M.PROPOSALS_NOT_KEPT))

    async def new_proposals(self, platform: str, at: datetime) -> list[Proposal]:
        """Return no proposals."""
        return []

    async def hide(
        self, platform: str, workspace: str, question_id: str, hidden: bool, by: str, at: datetime
    ) -> bool:
        """Refuse: with no workspace banks, every workspace asks the whole bank."""
        raise UserError(say(M.HIDE_NOT_KEPT))

    async def decided_proposals(self, platform: str, at: datetime) -> list[Proposal]:
        """Return no proposals."""
        return []


def pick_question(
    candidates: Sequence[Question], asked: dict[str, int], rng: random.Random
) -> Question:
    """Pick among the least-asked candidates, so nothing repeats until all have been asked.

    A channel's very first question is the bank's first (the seed question, for the bundled
    bank); after that the order is random.
    """
    if not any(asked.get(q.id, 0) for q in candidates):
        return candidates[0]
    fewest = min(asked.get(q.id, 0) for q in candidates)
    pool = [q for q in candidates if asked.get(q.id, 0) == fewest]
    return rng.choice(pool)


def breaks_run(closed: bool, correct: bool | None) -> bool:
    """Return whether a scheduled round's result ends a run of right answers (see streaks)."""
    return not correct and (closed or correct is False)


def streaks(results: Sequence[tuple[bool, bool | None]]) -> tuple[int, int]:
    """Return (current, best) runs of correct answers over scheduled rounds, oldest first.

    A closed round not answered correctly breaks the run; an open round not yet answered does not.
    """
    current = best = 0
    for closed, correct in results:
        if correct:
            current += 1
            best = max(best, current)
        elif breaks_run(closed, correct):
            current = 0
    return current, best


def period_start(period: Period, now: datetime) -> datetime | None:
    """Return when a leaderboard period began: Monday 00:00 UTC, the 1st of the month, or None."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period is Period.WEEK:
        return midnight - timedelta(days=midnight.weekday())
    if period is Period.MONTH:
        return midnight.replace(day=1)
    return None


def rank_rows(rows: Sequence[ScoreRow]) -> list[LeaderboardEntry]:
    """Rank users by points, ties broken by earlier (smaller) total answer time, then id."""
    ordered = sorted(rows, key=lambda r: (-r.points, r.total_ms, r.user))
    return [
        LeaderboardEntry(
            rank=i, user=r.user, points=r.points, correct=r.correct, answered=r.answered
        )
        for i, r in enumerate(ordered, start=1)
    ]


#: Seeds a computed question is drawn with: a million questions a template.
COMPUTED_SEEDS = 1_000_000
#: Seeds tried before a template is given up for this round (a draw can fail to spread).
COMPUTED_TRIES = 5
#: The word after ``/quiz next`` that asks a computed question rather than a tag.
COMPUTED = "computed"


#: Computed instances a question report rebuilds at most: the most answered (a rebuild costs
#: milliseconds; docs/benchmarks.md, "Computed-question templates").
COMPUTED_REPORTED = 100


def template_of(question_id: str) -> str | None:
    """Return the template a computed question's id names (``template#seed``), else None.

    The seed is spelled as the bank spells it: nine digits at most, no leading zero.
    """
    head, sep, tail = question_id.partition("#")
    if not (sep and head and tail.isascii() and tail.isdigit() and len(tail) <= 9):
        return None
    return head if str(int(tail)) == tail else None


#: A channel picking for its players' level averages the people who answered it in this many
#: days, at most this many of them (the latest).
LEVEL_DAYS = 30
LEVEL_PLAYERS = 25

#: How long a workspace's answer rates serve practice before they are read again.
RATES_MAX_AGE = timedelta(minutes=1)


class QuizEngine:
    """Run quiz rounds on a store, with an injected clock and random source."""

    def __init__(
        self,
        store: Store,
        bank: Bank,
        *,
        clock: Clock = utc_now,
        rng: random.Random | None = None,
        default_minutes: int = 10,
        retention: float = learning.DEFAULT_RETENTION,
        tracks: Mapping[str, Track] | None = None,
        banks: Banks | None = None,
    ) -> None:
        """``bank`` is the files' bank; ``banks`` gives each workspace its own (default: it)."""
        self.store = store
        self.banks: Banks = banks if banks is not None else OneBank(bank)
        self.memory = learning.Memory(retention)
        self._topics: OrderedDict[int, tuple[Bank, dict[str, str], dict[str, Question]]] = (
            OrderedDict()
        )
        self._memories: dict[tuple[str, str], tuple[datetime, learning.Memory]] = {}
        self._memory_reads: Shared[tuple[str, str], learning.Memory] = Shared()
        self._rates_cache: dict[
            tuple[str, str], tuple[datetime, Mapping[str, tuple[int, int]]]
        ] = {}
        self.bank = bank
        self.clock = clock
        self.rng = rng or random.Random()
        self.default_minutes = default_minutes
        self._rounds: OrderedDict[int, Round] = OrderedDict()
        self._instances: OrderedDict[tuple[str, str, str], Question] = OrderedDict()
        self._loading: Shared[int, Round | None] = Shared()
        # The learning tracks and their runs in channels.
        self.tracks = TrackBook(tracks or {}, store, self._now)

    def _now(self) -> datetime:
        now = self.clock()
        if now.tzinfo is None:
            raise ValueError("the engine's clock must return timezone-aware datetimes")
        return now

    async def start_round(
        self,
        place: Place,
        *,
        tag: str | None = None,
        duration: timedelta | None = None,
        scheduled: bool = False,
        slot: str | None = None,
        note: str | None = None,
        computed: bool = False,
        question_id: str | None = None,
    ) -> QuestionCard:
        """Pick the next question for the channel, open a round and return its card.

        ``computed`` (or the tag ``computed``) asks a question drawn from a template; with no
        tag, the channel's ``computed_percent`` of rounds ask one too (docs/questions.md,
        "Computed questions in a channel").
        ``question_id`` asks that question (a learning track's day). The workspace's bank is
        read as it is now: a change made on any replica is in the next round.
        """
        if tag is not None and tag.casefold() == COMPUTED:
            computed, tag = True, None
        if computed and not self.bank.templates:
            raise UserError(say(M.NO_TEMPLATES))
        bank = await self.bank_for(place.platform, place.workspace)
        if question_id is not None:
            try:
                candidates: Sequence[Question] = (
                    await self.question(place.platform, place.workspace, question_id, bank),
                )
            except KeyError:
                raise UserError(say(M.NOT_IN_BANK)) from None
        else:
            candidates = bank.filter(None if computed else tag)
        if not candidates and not computed:
            raise UserError(say(M.NO_SUCH_TAG, tag=echo(tag)) if tag else say(M.EMPTY_BANK))
        existing = await self.store.open_round(place)
        if existing is not None:
            raise UserError(say(M.ALREADY_OPEN))
        settings = await self.channel_settings(place)
        mixed = (
            tag is None
            and question_id is None
            and self.bank.templates
            and settings.computed_percent > 0
            and self.rng.random() * 100 < settings.computed_percent
        )
        picked = candidates[0] if question_id is not None else None
        if picked is None and (computed or mixed):
            # Mixed in, a computed question keeps to the channel's difficulty mode; asked for,
            # any template will do.
            picked = await self._pick_computed(place, None if computed else settings.difficulty)
            if picked is None and computed:
                raise UserError(say(M.NO_TEMPLATES))
        question = picked or await self._pick(place, candidates, settings.difficulty, tag)
        if self._is_computed(question.id):
            # Fixed now: every later look-up of the id in this workspace reads what was asked.
            question = await self._keep(place.platform, place.workspace, question)
        if duration is None:
            duration = timedelta(minutes=settings.round_minutes or self.default_minutes)
        now = self._now()
        try:
            rnd = await self.store.create_round(
                place,
                question.id,
                opened_at=now,
                closes_at=now + duration if duration > timedelta(0) else None,
                scheduled=scheduled,
                slot=slot,
                revision=question.revision,
            )
        except RoundAlreadyOpen:
            raise UserError(say(M.ALREADY_OPEN)) from None
        return QuestionCard(round=rnd, question=question, answered=0, note=note)

    async def bank_for(self, platform: str, workspace: str) -> Bank:
        """Return a workspace's bank: the files' bank with its own questions laid over it."""
        return await self.banks.bank_for(platform, workspace)

    async def flag(
        self,
        place: Place,
        user: str,
        reason: FlagReason,
        note: str | None,
        question_id: str | None = None,
    ) -> Flagged:
        """Record a player's report of a problem with a question: the one named, else the
        channel's latest."""
        return await self.banks.flag(place, user, reason, note, self._now(), question_id)

    async def open_flags(self, platform: str, workspace: str) -> list[Flag]:
        """Return the workspace's open reports of problems with questions."""
        return await self.banks.open_flags(platform, workspace)

    async def resolved_reports(self, platform: str) -> list[ResolvedReport]:
        """Claim the reports new revisions resolved whose reporters are still to be told."""
        return await self.banks.resolved_reports(platform, self._now())

    # ------------------------------------------------- proposals (docs/questions.md#proposals)

    async def submit(
        self,
        platform: str,
        workspace: str,
        body: str,
        *,
        author: str,
        admin: bool,
        channel: str | None = None,
    ) -> Published | Proposed:
        """Take a checked question (its YAML text) for a workspace: live, or a proposal."""
        return await self.banks.submit(
            platform, workspace, body, author=author, admin=admin, at=self._now(), channel=channel
        )

    async def proposals(
        self, platform: str, workspace: str, status: ProposalStatus | None = ProposalStatus.PENDING
    ) -> list[Proposal]:
        """Return the workspace's proposals in this status (all with None), oldest first."""
        return await self.banks.proposals(platform, workspace, status)

    async def proposal(self, proposal_id: int) -> Proposal | None:
        """Return one proposal, or None."""
        return await self.banks.proposal(proposal_id)

    async def approve(self, proposal_id: int, by: str, *, body: str | None = None) -> Published:
        """Approve a pending proposal (``body``: an admin's edit), once across replicas."""
        return await self.banks.approve(proposal_id, by, self._now(), body=body)

    async def reject(self, proposal_id: int, by: str, reason: str | None = None) -> Proposal:
        """Reject a pending proposal, once across replicas."""
        return await self.banks.reject(proposal_id, by, self._now(), reason)

    async def hide(self, platform: str, workspace: str, question_id: str, by: str) -> bool:
        """Keep a question out of a workspace's rounds; return whether it was shown before."""
        return await self.banks.hide(platform, workspace, question_id, True, by, self._now())

    async def unhide(self, platform: str, workspace: str, question_id: str, by: str) -> bool:
        """Let a hidden question back into a workspace's rounds; return whether it was hidden."""
        return await self.banks.hide(platform, workspace, question_id, False, by, self._now())

    async def new_proposals(self, platform: str) -> list[Proposal]:
        """Claim the pending proposals whose workspace's admins are still to be told."""
        return await self.banks.new_proposals(platform, self._now())

    async def decided_proposals(self, platform: str) -> list[Proposal]:
        """Claim the decided proposals whose authors are still to be told."""
        return await self.banks.decided_proposals(platform, self._now())

    # ------------------------------------------------- computed questions, fixed when asked

    def _is_computed(self, question_id: str) -> bool:
        """Return whether an id names an instance of one of the bank's templates."""
        template = template_of(question_id)
        return template is not None and template in self.bank.templates

    def _remember(self, platform: str, workspace: str, question: Question) -> Question:
        key = (platform, workspace, question.id)
        self._instances[key] = question
        self._instances.move_to_end(key)
        if len(self._instances) > INSTANCE_CACHE_SIZE:
            self._instances.popitem(last=False)
        return question

    def _loaded(self, question_id: str, body: str) -> Question | None:
        """Return a stored instance, or None if its text is unreadable or names another id."""
        try:
            question = instances.load(body)
        except instances.InstanceFormatError:
            return None
        return question if question.id == question_id else None

    async def _keep(self, platform: str, workspace: str, question: Question) -> Question:
        """Store a computed question as drawn, once per workspace; return what is stored.

        Another replica may have stored the id first (with other code): its text is the
        question, here too.
        """
        body = await self.store.keep_instance(
            platform, workspace, question.id, instances.dump(question), at=self._now()
        )
        kept = self._loaded(question.id, body) or question
        return self._remember(platform, workspace, kept)

    async def question(
        self,
        platform: str,
        workspace: str,
        question_id: str,
        bank: Bank | None = None,
        *,
        keep: bool = False,
    ) -> Question:
        """Return a workspace's question by id (KeyError if it has none).

        A computed question is the one the workspace was asked, as stored then; one never
        stored (asked before instances were stored) is drawn again from its seed, and stored
        with ``keep`` (a round's). ``bank`` is the workspace's, if the caller has it.
        """
        if not self._is_computed(question_id):
            if bank is None:
                bank = await self.bank_for(platform, workspace)
            return bank.by_id(question_id)
        found = await self.computed_questions(platform, workspace, (question_id,))
        if question_id in found:
            return found[question_id]
        drawn = self.bank.by_id(question_id)  # KeyError: a seed that does not draw
        return await self._keep(platform, workspace, drawn) if keep else drawn

    async def computed_questions(
        self, platform: str, workspace: str, question_ids: Collection[str]
    ) -> dict[str, Question]:
        """Return the stored computed questions among these ids of a workspace, by id.

        The engine's copies first (a stored question never changes), one read for the rest.
        """
        found: dict[str, Question] = {}
        missing = []
        for question_id in question_ids:
            cached = self._instances.get((platform, workspace, question_id))
            if cached is not None:
                self._instances.move_to_end((platform, workspace, question_id))
                found[question_id] = cached
            elif self._is_computed(question_id):
                missing.append(question_id)
        if missing:
            stored = await self.store.computed_instances(platform, workspace, missing)
            for question_id, body in stored.items():
                question = self._loaded(question_id, body)
                if question is not None:
                    found[question_id] = self._remember(platform, workspace, question)
        return found

    async def _pick(
        self,
        place: Place,
        candidates: Sequence[Question],
        mode: DifficultyMode,
        tag: str | None,
    ) -> Question:
        """Pick the channel's next question as its difficulty mode says."""
        allowed = analytics.filter_mode(candidates, mode)
        if not allowed:
            if tag:
                raise UserError(say(M.NO_LABEL_WITH_TAG, label=mode.value, tag=echo(tag)))
            raise UserError(say(M.NO_LABEL, label=mode.value))
        asked = await self.store.question_counts(place)
        if mode is DifficultyMode.ADAPTIVE and any(asked.get(q.id, 0) for q in allowed):
            rates = await self.store.answer_rates(place.platform, place.workspace)
            return analytics.pick_adaptive(allowed, asked, rates, self.rng)
        if mode is DifficultyMode.LEVEL and any(asked.get(q.id, 0) for q in allowed):
            measured, level = await asyncio.gather(
                self._rates(place.platform, place.workspace), self.channel_level(place)
            )
            return analytics.pick_for_level(allowed, asked, measured, level, self.rng)
        return pick_question(allowed, asked, self.rng)

    async def _pick_computed(self, place: Place, mode: DifficultyMode | None) -> Question | None:
        """Draw a computed question from the template this channel was asked least.

        Templates are tried least asked first (ties in random order), one instance each from a
        fresh seed, until one suits ``mode`` (a channel's difficulty mode; None: any). None
        when none does.
        """
        asked = await self.store.question_counts(place)
        per_template = Counter[str]()
        for question_id, count in asked.items():
            template = template_of(question_id)
            if template is not None:
                per_template[template] += count
        tiebreak = {t: self.rng.random() for t in self.bank.templates}
        for template in sorted(tiebreak, key=lambda t: (per_template[t], tiebreak[t])):
            question = self._draw(template)
            if question is None:
                continue
            if mode is None or analytics.filter_mode([question], mode):
                return question
        return None

    def _draw(self, template: str) -> Question | None:
        """Return an instance of a template from a fresh seed; None if no seed tried spreads."""
        for _ in range(COMPUTED_TRIES):
            try:
                return self.bank.instance(template, self.rng.randrange(COMPUTED_SEEDS))
            except KeyError:
                continue
        return None

    async def question_report(
        self, platform: str | None = None, workspace: str | None = None
    ) -> list[analytics.QuestionReport]:
        """Return every bank question's answer analytics in a scope (None: everywhere).

        Computed questions that were answered follow the bank's, one report per instance,
        each rebuilt from its id: the ``COMPUTED_REPORTED`` most answered, in id order. In one
        workspace the questions are its bank's, each own question's figures its latest
        revision's; across workspaces, the files' bank's.
        """
        aggregates = await self.store.question_aggregates(platform, workspace)
        bank = (
            await self.bank_for(platform, workspace)
            if platform is not None and workspace is not None
            else self.bank
        )
        questions = bank.filter(None)
        known = {q.asked_as for q in questions}
        answered = sorted(
            (
                a
                for a in aggregates
                if a.question_id not in known and template_of(a.question_id) in self.bank.templates
            ),
            key=lambda a: (-a.answers, a.question_id),
        )[:COMPUTED_REPORTED]
        stored = (
            await self.computed_questions(platform, workspace, [a.question_id for a in answered])
            if platform is not None and workspace is not None
            else {}
        )
        computed = []
        for agg in sorted(answered, key=lambda a: a.question_id):
            try:
                computed.append(stored.get(agg.question_id) or self.bank.by_id(agg.question_id))
            except KeyError:
                continue  # a seed that no longer draws: nothing to rewrite
        return analytics.reports((*questions, *computed), aggregates)

    # ---------------------------------------------------------- practice (never touches scores)

    async def level(self, platform: str, workspace: str, user: str) -> float:
        """Return a person's level: a Rasch ability from their latest answers (docs/learning.md)."""
        rates = await self._rates(platform, workspace)
        results = await self.store.user_results(platform, workspace, user, learning.LEVEL_ANSWERS)
        known = self._by_id(await self.bank_for(platform, workspace))
        return learning.level(
            (right, learning.question_difficulty(analytics.expected_rate(known[q], rates)))
            for q, right in results
            if q in known
        )

    async def channel_level(self, place: Place) -> float:
        """Return the mean level of the channel's recent players: the people who answered its
        rounds in the last ``LEVEL_DAYS`` days, the latest ``LEVEL_PLAYERS`` of them (0, a
        newcomer's level, when nobody did)."""
        since = self._now() - timedelta(days=LEVEL_DAYS)
        players = await self.store.recent_players(place, since, LEVEL_PLAYERS)
        if not players:
            return 0.0
        levels = await asyncio.gather(
            *(self.level(place.platform, place.workspace, p) for p in players)
        )
        return sum(levels) / len(levels)

    async def _rates(self, platform: str, workspace: str) -> Mapping[str, tuple[int, int]]:
        """Return the workspace's answer rates, read at most once a minute."""
        key = (platform, workspace)
        now = self._now()
        cached = self._rates_cache.get(key)
        if cached is not None and now - cached[0] < RATES_MAX_AGE:
            return cached[1]
        rates = await self.store.answer_rates(platform, workspace)
        self._rates_cache[key] = (now, rates)
        return rates

    async def next_practice(
        self,
        platform: str,
        workspace: str,
        user: str,
        *,
        topic: str | None = None,
        tag: str | None = None,
        avoid: Collection[str] = (),
    ) -> learning.PracticeItem | None:
        """Return the next practice question: the most overdue due card, else a question the
        person never answered whose chance of a right answer is nearest the practice target.

        ``topic`` keeps to one topic of the bank, ``tag`` to the questions with a tag; ``avoid``
        leaves out questions already asked in the session. None when nothing is left.
        """
        bank = await self.bank_for(platform, workspace)
        topics = self.topics(bank)
        tagged = None if tag is None else {q.id for q in bank.filter(tag)}
        wanted = [
            q
            for q, t in topics.items()
            if (topic is None or t == topic) and (tagged is None or q in tagged) and q not in avoid
        ]
        if not wanted:
            return None
        now = self._now()
        narrowed = topic is not None or tagged is not None
        due = await self.store.due_cards(
            platform, workspace, user, now, question_ids=wanted if narrowed else None, limit=20
        )
        allowed = set(wanted)
        for card in due:
            if card.key.question_id in allowed:
                return learning.PracticeItem(
                    bank.by_id(card.key.question_id), learning.PracticeKind.DUE, None
                )
        # Nothing due: what the person has seen and their level, read at the same time.
        seen, me = await asyncio.gather(
            self.store.seen_questions(platform, workspace, user),
            self.level(platform, workspace, user),
        )
        known = self._by_id(bank)
        fresh = [known[q] for q in wanted if q not in seen]
        if not fresh:
            return None
        rates = await self._rates(platform, workspace)
        chance = {
            q.id: learning.success_chance(
                me, learning.question_difficulty(analytics.expected_rate(q, rates))
            )
            for q in fresh
        }
        best = min(abs(c - learning.PRACTICE_TARGET) for c in chance.values())
        nearest = [q for q in fresh if abs(chance[q.id] - learning.PRACTICE_TARGET) <= best + 1e-9]
        pick = self.rng.choice(nearest)
        return learning.PracticeItem(pick, learning.PracticeKind.NEW, chance[pick.id])

    async def answer_practice(
        self,
        platform: str,
        workspace: str,
        user: str,
        question_id: str,
        key: str,
        *,
        elapsed_ms: int | None = None,
    ) -> ReviewOutcome:
        """Grade a practice answer and review the card with it (scores never change)."""
        return await self._answer_outside_round(
            CardKey(platform, workspace, user, question_id),
            key,
            Source.PRACTICE,
            elapsed_ms=elapsed_ms,
        )

    async def _answer_outside_round(
        self,
        card_key: CardKey,
        key: str,
        source: Source,
        *,
        elapsed_ms: int | None = None,
        due_only: bool = False,
        session: practice.PracticeSession | None = None,
    ) -> ReviewOutcome:
        """Grade an answer given outside a round and review its card (scores never change)."""
        if template_of(card_key.question_id) is not None:
            # A computed question is practised only as a session's own current question, and a
            # review answers a card the person holds: a crafted id rebuilds nothing.
            if source is Source.PRACTICE and session is None:
                raise NotFound(say(M.NOT_IN_BANK))
            if due_only and await self.store.card(card_key) is None:
                raise NotFound(say(M.NOT_IN_REVIEW))
        bank = await self.bank_for(card_key.platform, card_key.workspace)
        try:
            question = await self.question(
                card_key.platform, card_key.workspace, card_key.question_id, bank
            )
        except KeyError:
            raise NotFound(say(M.NOT_IN_BANK)) from None
        choice = key.strip().upper()
        if choice not in question.keys:
            raise UserError(not_a_choice(key, question))
        if due_only and await self.store.card(card_key) is None:
            raise NotFound(say(M.NOT_IN_REVIEW))
        correct = choice == question.answer
        review = Review(
            at=self._now(),
            correct=correct,
            rating=learning.rating_for(correct, None, elapsed_ms),
            source=source,
            elapsed_ms=elapsed_ms,
        )
        card, counted = await self.store.study(
            await self._study(card_key, review), choice=choice, due_only=due_only, session=session
        )
        return ReviewOutcome(
            question_id=card_key.question_id,
            choice=question.choice(choice),
            answer=question.answer_choice,
            correct=correct,
            short=question.short,
            due_at=card.due_at,
            why_not=None if correct else question.why_not.get(choice),
            counted=counted,
        )

    # ---------------------------------------------------------- practice sessions

    async def start_practice(
        self,
        platform: str,
        workspace: str,
        user: str,
        *,
        topic: str | None = None,
        tag: str | None = None,
        count: int = practice.DEFAULT_COUNT,
    ) -> practice.PracticeTurn:
        """Start a person's practice session (ending any other) and return its first question.

        ``topic`` is a folder of the bank, as the person wrote it (``collectives`` finds
        ``03-collectives``); an unknown one is refused with the topics there are.
        """
        if not 1 <= count <= practice.MAX_COUNT:
            raise UserError(say(M.PRACTICE_COUNT_RANGE, high=practice.MAX_COUNT))
        bank = await self.bank_for(platform, workspace)
        found = None
        if topic is not None:
            names = list(dict.fromkeys(self.topics(bank).values()))
            found = practice.find_topic(topic, names)
            if found is None:
                listed = ", ".join(names)
                raise UserError(say(M.PRACTICE_NO_TOPIC, topic=echo(topic), topics=listed))
        if tag is not None and tag.casefold() == COMPUTED:
            if not self.bank.templates:
                raise UserError(say(M.NO_TEMPLATES))
            tag = COMPUTED
        elif tag is not None and not bank.filter(tag):
            raise UserError(say(M.NO_SUCH_TAG, tag=echo(tag)))
        stored = await self.store.practice_session(platform, workspace, user)
        fresh = practice.PracticeSession(
            platform=platform,
            workspace=workspace,
            user=user,
            target=count,
            started_at=self._now(),
            topic=found,
            tag=tag,
            version=0 if stored is None else stored.version,
        )
        return await self._ask_next(fresh)

    async def practice_next(
        self, platform: str, workspace: str, user: str
    ) -> practice.PracticeTurn:
        """Return the session's question waiting for an answer, else pick and show the next.

        A session with nothing left returns a turn without a question (its summary); a person
        with no session is told how to start one.
        """
        session = await self._session(platform, workspace, user)
        bank = await self.bank_for(platform, workspace)
        if session.current is not None and not _known(bank, session.current):
            session = replace(session, current=None, current_kind=None, asked_at=None)
        if session.current is not None and session.current_kind is not None:
            shown = await self.question(platform, workspace, session.current, bank)
            item = learning.PracticeItem(shown, session.current_kind, None)
            return practice.PracticeTurn(session, item, session.answered + 1)
        return await self._ask_next(session)

    async def stop_practice(
        self, platform: str, workspace: str, user: str
    ) -> practice.PracticeSession | None:
        """End a person's session and return it as it stood (None when there was none)."""
        return await self.store.drop_practice(platform, workspace, user)

    async def answer_in_practice(
        self, platform: str, workspace: str, user: str, question_id: str, key: str
    ) -> practice.PracticeResult:
        """Grade the answer to the session's current question; review its card and step the
        session in one transaction (scores never change).

        An answer to any other question (a second click, an earlier session's button) is
        refused and changes nothing.
        """
        session = await self._session(platform, workspace, user)
        if session.current != question_id or session.current_kind is None:
            raise UserError(say(M.PRACTICE_NOT_CURRENT))
        kind = session.current_kind
        now = self._now()
        elapsed = None
        if session.asked_at is not None:
            elapsed = max(int((now - session.asked_at).total_seconds() * 1000), 0)
        try:
            question = await self.question(platform, workspace, question_id)
        except KeyError:
            raise NotFound(say(M.NOT_IN_BANK)) from None
        choice = key.strip().upper()
        if choice not in question.keys:
            raise UserError(not_a_choice(key, question))
        correct = choice == question.answer
        after = practice.after_answer(session, question_id, correct, kind)
        try:
            outcome = await self._answer_outside_round(
                CardKey(platform, workspace, user, question_id),
                choice,
                Source.PRACTICE,
                elapsed_ms=elapsed,
                session=after,
            )
        except PracticeMoved:
            # A second click got there first, or the session was stopped: nothing was written.
            raise UserError(say(M.PRACTICE_NOT_CURRENT)) from None
        owed_again = kind is learning.PracticeKind.DUE and not correct
        stepped = replace(after, version=session.version + 1)
        return practice.PracticeResult(outcome, stepped, kind, owed_again, question)

    async def rate_confidence(
        self, platform: str, workspace: str, user: str, question_id: str, confidence: str
    ) -> learning.Rated:
        """Re-rate a person's latest answer to a question with the confidence they give after it.

        The rating follows ``learning.rating_for`` from the answer's correctness and time and the
        confidence. Refused (nothing changes) without an answer, once a confidence was given, or
        more than ``CONFIDENCE_WINDOW`` after the answer.
        """
        try:
            said = learning.Confidence(confidence)
        except ValueError:
            raise UserError(say(M.NOT_A_BUTTON)) from None
        key = CardKey(platform, workspace, user, question_id)
        last = await self.store.last_answer(key)
        if last is None:
            raise UserError(say(M.CONFIDENCE_NOTHING))
        if last.rated:
            raise UserError(say(M.CONFIDENCE_ALREADY))
        if self._now() - last.at > learning.CONFIDENCE_WINDOW:
            minutes = int(learning.CONFIDENCE_WINDOW.total_seconds() // 60)
            raise UserError(say(M.CONFIDENCE_LATE, minutes=minutes))
        rating = learning.rating_for(last.correct, said, last.elapsed_ms)
        memory = await self.memory_for(platform, workspace)
        card = await self.store.rate_last(key, said, memory, rating)
        if card is None:
            raise UserError(say(M.CONFIDENCE_NOTHING))
        return learning.Rated(said, last.correct, rating, card.due_at)

    async def _session(self, platform: str, workspace: str, user: str) -> practice.PracticeSession:
        session = await self.store.practice_session(platform, workspace, user)
        if session is None:
            raise UserError(say(M.PRACTICE_NONE, command=Code("/quiz practice")))
        return session

    async def _next_computed(
        self, session: practice.PracticeSession
    ) -> learning.PracticeItem | None:
        """Return the next computed practice question: a due computed card, else a new
        instance drawn from a template, never one asked in the session."""
        bank = await self.bank_for(session.platform, session.workspace)
        due = await self.store.due_cards(
            session.platform, session.workspace, session.user, self._now(), limit=100
        )
        for card in due:
            question_id = card.key.question_id
            computed = template_of(question_id) is not None
            if computed and question_id not in session.asked and _known(bank, question_id):
                due_question = await self.question(
                    session.platform, session.workspace, question_id, bank
                )
                return learning.PracticeItem(due_question, learning.PracticeKind.DUE, None)
        templates = list(self.bank.templates)
        self.rng.shuffle(templates)
        for template in templates:
            drawn = self._draw(template)
            if drawn is not None and drawn.id not in session.asked:
                # Stored as drawn, so the answer and any later review read this question.
                kept = await self._keep(session.platform, session.workspace, drawn)
                return learning.PracticeItem(kept, learning.PracticeKind.NEW, None)
        return None

    async def _ask_next(self, session: practice.PracticeSession) -> practice.PracticeTurn:
        """Pick the session's next question, store it as waiting, and return the turn."""
        bank = await self.bank_for(session.platform, session.workspace)
        # A question gone from the bank since it was missed is no longer owed.
        session = replace(session, owed=tuple(q for q in session.owed if _known(bank, q)))
        item: learning.PracticeItem | None = None
        if not session.done:
            owed = practice.owed_next(session)
            if owed is not None:
                owed_question = await self.question(session.platform, session.workspace, owed, bank)
                item = learning.PracticeItem(owed_question, learning.PracticeKind.DUE, None)
            elif session.answered < session.target and session.tag == COMPUTED:
                item = await self._next_computed(session)
            elif session.answered < session.target:
                item = await self.next_practice(
                    session.platform,
                    session.workspace,
                    session.user,
                    topic=session.topic,
                    tag=session.tag,
                    avoid=session.asked,
                )
            if item is None and session.owed:
                first = await self.question(
                    session.platform, session.workspace, session.owed[0], bank
                )
                item = learning.PracticeItem(first, learning.PracticeKind.DUE, None)
        shown = session if item is None else practice.asking(session, item, self._now())
        if not await self.store.put_practice(shown, session.version):
            # Another press stepped the session first: show what it left.
            again = await self._session(session.platform, session.workspace, session.user)
            if again.current is None or again.current_kind is None:
                return practice.PracticeTurn(again, None, again.answered + 1)
            if not _known(bank, again.current):
                return practice.PracticeTurn(again, None, again.answered + 1)
            current = await self.question(again.platform, again.workspace, again.current, bank)
            item = learning.PracticeItem(current, again.current_kind, None)
            return practice.PracticeTurn(again, item, again.answered + 1)
        stored = replace(shown, version=session.version + 1)
        return practice.PracticeTurn(stored, item, stored.answered + 1)

    def topics(self, bank: Bank | None = None) -> dict[str, str]:
        """Return every question's topic (the folder of its file), in the bank's order.

        The files' bank by default; a workspace's own questions are in the topic ``workspace``.
        """
        return self._indexed(bank or self.bank)[1]

    def _by_id(self, bank: Bank) -> dict[str, Question]:
        return self._indexed(bank)[2]

    def _indexed(self, bank: Bank) -> tuple[Bank, dict[str, str], dict[str, Question]]:
        # A workspace's bank is a new object after each change: the few latest are kept.
        found = self._topics.get(id(bank))
        if found is not None and found[0] is bank:
            self._topics.move_to_end(id(bank))
            return found
        questions = bank.filter(None)
        entry = (
            bank,
            {q.id: learning.topic_of(q.source) for q in questions},
            {q.id: q for q in questions},
        )
        self._topics[id(bank)] = entry
        if len(self._topics) > TOPIC_CACHE_SIZE:
            self._topics.popitem(last=False)
        return entry

    async def mastery(
        self, platform: str, workspace: str, user: str | None = None
    ) -> list[learning.PersonMastery]:
        """Return each person's mastery per topic (one person with ``user``), from the store.

        People with no answer in the workspace are left out; a topic's questions never answered
        count 0 (docs/learning.md).
        """
        topics = self.topics(await self.bank_for(platform, workspace))
        sizes = Counter(topics.values())
        order = list(dict.fromkeys(topics.values()))
        rows = await self.store.mastery_sums(
            platform,
            workspace,
            topics,
            self._now(),
            await self.memory_for(platform, workspace),
            user,
        )
        sums: dict[str, dict[str, tuple[float, int]]] = {}
        for who, topic, total, seen in rows:
            sums.setdefault(who, {})[topic] = (total, seen)
        return [
            learning.PersonMastery(
                user=who,
                topics=tuple(
                    learning.TopicMastery(
                        topic=t,
                        questions=sizes[t],
                        seen=mine.get(t, (0.0, 0))[1],
                        mastery=mine.get(t, (0.0, 0))[0] / sizes[t],
                    )
                    for t in order
                ),
            )
            for who, mine in sorted(sums.items())
        ]

    async def _cached_round(self, round_id: int) -> Round | None:
        """Return a round from the cache or the store.

        A round's place, question and times never change; only ``closed_at`` does, and the
        store re-checks it inside the answer's transaction, so a stale entry is harmless.
        """
        rnd = self._rounds.get(round_id)
        if rnd is not None:
            return rnd
        # The first clicks on a new card come all at once: one read serves every one of them.
        return await self._loading.get(round_id, lambda: self._load_round(round_id))

    async def _load_round(self, round_id: int) -> Round | None:
        rnd = await self.store.get_round(round_id)
        if rnd is not None:
            self._rounds[round_id] = rnd
            if len(self._rounds) > ROUND_CACHE_SIZE:
                self._rounds.popitem(last=False)
        return rnd

    async def attach_message(self, round_id: int, message_ref: str) -> None:
        """Remember the platform message that shows the round."""
        await self.store.set_message_ref(round_id, message_ref)

    async def get_round(self, round_id: int) -> Round:
        """Return the round (NotFound if there is none)."""
        rnd = await self.store.get_round(round_id)
        if rnd is None:
            raise NotFound(say(M.ROUND_GONE))
        return rnd

    async def open_round(self, place: Place) -> Round | None:
        """Return the open round in a channel, if any."""
        return await self.store.open_round(place)

    async def question_of(self, rnd: Round) -> Question:
        """Return the question a round asks, the revision it asked (NotFound if it is gone)."""
        if rnd.revision is not None:
            place = rnd.place
            asked = await self.banks.revision(
                place.platform, place.workspace, rnd.question_id, rnd.revision
            )
            if asked is None:
                raise NotFound(say(M.NOT_IN_BANK))
            return asked
        place = rnd.place
        try:
            return await self.question(
                place.platform, place.workspace, rnd.question_id, self.bank, keep=True
            )
        except KeyError:
            raise NotFound(say(M.NOT_IN_BANK)) from None

    async def answer(
        self, platform: str, workspace: str, round_id: int, user: str, choice_key: str
    ) -> AnswerOutcome:
        """Grade and store one user's answer; the first answer counts unless changes are allowed."""
        rnd = await self._cached_round(round_id)
        if rnd is None or (rnd.place.platform, rnd.place.workspace) != (platform, workspace):
            raise NotFound(say(M.QUESTION_NOT_HERE))
        question = await self.question_of(rnd)
        key = choice_key.strip().upper()
        if key not in question.keys:
            raise UserError(not_a_choice(choice_key, question))
        correct = key == question.answer
        now = self._now()
        if rnd.is_closed or (rnd.closes_at is not None and now >= rnd.closes_at):
            return _outcome(AnswerStatus.CLOSED, question, round_id, user, key)
        record = AnswerRecord(
            round_id=round_id,
            user=user,
            choice=key,
            correct=correct,
            points=points_for(question, correct),
            answered_at=now,
            elapsed_ms=max(0, int((now - rnd.opened_at).total_seconds() * 1000)),
        )
        # The answer reviews the person's card for the question in the same transaction.
        study = await self._study(
            CardKey(platform, workspace, user, question.id),
            Review(
                at=now,
                correct=correct,
                rating=learning.rating_for(correct, None, record.elapsed_ms),
                elapsed_ms=record.elapsed_ms,
            ),
        )
        status, other = await self.store.record_answer(record, study=study)
        if status is AnswerStatus.CLOSED:
            return _outcome(status, question, round_id, user, key)
        if status is AnswerStatus.ALREADY and other is not None:
            # Report the answer that counts, not the one just clicked.
            return _outcome(status, question, round_id, user, other.choice, previous=other.choice)
        # A wrong answer ends any run, so only a right one needs the history.
        streak = await self._current_streak(rnd.place, user) if rnd.scheduled and correct else 0
        return _outcome(
            status,
            question,
            round_id,
            user,
            key,
            streak=streak,
            previous=other.choice if other is not None else None,
        )

    async def answered_count(self, round_id: int) -> int:
        """Return how many users have answered the round."""
        return await self.store.count_answers(round_id)

    async def withdraw(self, round_id: int) -> None:
        """Take back a round whose card never reached the channel.

        It is deleted, so it counts neither as asked nor against anyone's streak; should an
        answer have slipped in after all, it is closed like any other round instead.
        """
        self._rounds.pop(round_id, None)
        if not await self.store.delete_unseen_round(round_id):
            await self.close(round_id)
            # Its card never reached the channel: there are no results to show there.
            await self.reveal_done(round_id)

    async def close(self, round_id: int) -> Reveal | None:
        """Close the round and return its reveal; None if it was already closed."""
        closed = await self.store.close_round(round_id, self._now())
        if closed is None:
            await self.get_round(round_id)  # NotFound for an unknown round
            return None
        self._rounds.pop(round_id, None)
        return await self.reveal(closed)

    async def hold_reveal(self, round_id: int) -> bool:
        """Renew this process's lease on a reveal it is posting; False if another took it over.

        A reveal whose sends outlast the lease (a long wait out a platform's rate limit)
        renews it, so no other replica claims it meanwhile; one that lost it posts no more.
        """
        return await self.store.hold_reveal(round_id, self._now())

    async def reveal_done(self, round_id: int) -> bool:
        """Record that the round's results are posted; False if another process took them over."""
        return await self.store.mark_revealed(round_id, self._now())

    async def pending_reveals(self, platform: str) -> list[Reveal]:
        """Claim the closed rounds whose results were not posted in time; return their reveals.

        A process that closed a round and died, or whose sends failed, left its reveal behind;
        each is claimed by one process only, which posts it and calls ``reveal_done``.
        """
        reveals = []
        for round_id in await self.store.claim_reveals(platform, self._now()):
            reveals.append(await self.reveal(await self.get_round(round_id)))
        return reveals

    async def reveal(self, rnd: Round) -> Reveal:
        """Compute the results of a round: distribution, share correct, fastest correct."""
        question = await self.question_of(rnd)
        answers = await self.store.round_answers(rnd.id)
        counts = Counter(a.choice for a in answers)
        total = len(answers)
        tallies = tuple(
            ChoiceTally(
                choice=c,
                count=counts.get(c.key, 0),
                fraction=counts.get(c.key, 0) / total if total else 0.0,
                correct=c.key == question.answer,
            )
            for c in question.choices
        )
        right = sorted((a for a in answers if a.correct), key=lambda a: (a.elapsed_ms, a.user))
        fastest = tuple(Answerer(a.user, a.elapsed_ms / 1000) for a in right[:FASTEST_SHOWN])
        return Reveal(
            round=rnd,
            question=question,
            answered=total,
            correct=len(right),
            tallies=tallies,
            fastest=fastest,
        )

    async def close_in_channel(
        self, place: Place, *, allowed: Callable[[Round], Awaitable[None]] | None = None
    ) -> Reveal:
        """Close the open round in this channel now (UserError if there is none).

        ``allowed`` sees the round first and may refuse (raise) before anything changes.
        """
        rnd = await self.store.open_round(place)
        if rnd is None:
            raise UserError(say(M.NOTHING_OPEN))
        if allowed is not None:
            await allowed(rnd)
        reveal = await self.close(rnd.id)
        if reveal is None:
            raise UserError(say(M.JUST_CLOSED))
        return reveal

    async def close_workspace(self, platform: str, workspace: str) -> int:
        """Close every open round of a workspace the bot was removed from; return how many.

        No reveal is computed: there is nowhere left to post one. The answers stay, and count
        as those of any closed round.
        """
        closed = 0
        now = self._now()
        for rnd in await self.store.open_rounds(platform, workspace):
            if await self.store.close_round(rnd.id, now):
                closed += 1
                await self.store.mark_revealed(rnd.id, now)  # nowhere to post it
            self._rounds.pop(rnd.id, None)
        return closed

    async def close_due(self, platform: str) -> list[Reveal]:
        """Close every round of the platform whose time has passed; return the reveals won."""
        reveals = []
        for rnd in await self.store.due_rounds(platform, self._now()):
            reveal = await self.close(rnd.id)
            if reveal is not None:
                reveals.append(reveal)
        return reveals

    async def channel_settings(self, place: Place) -> ChannelSettings:
        """Return the channel's settings, with the bot's default round length filled in."""
        settings = await self.store.channel_settings(place)
        if settings.round_minutes is None:
            return replace(settings, round_minutes=self.default_minutes)
        return settings

    async def set_channel_settings(self, place: Place, settings: ChannelSettings) -> None:
        """Store the channel's settings as given (``round_minutes`` None: the bot's default)."""
        if settings.round_minutes is not None and not 1 <= settings.round_minutes <= 7 * 24 * 60:
            raise UserError(say(M.ROUND_LENGTH))
        if not 0 <= settings.computed_percent <= 100:
            raise UserError(say(M.COMPUTED_PERCENT))
        await self.store.set_channel_settings(place, settings)

    async def change_channel_settings(
        self,
        place: Place,
        *,
        allow_change: bool | None = None,
        round_minutes: int | None = None,
        difficulty: DifficultyMode | None = None,
        computed_percent: int | None = None,
    ) -> ChannelSettings:
        """Change only the options given and return the settings now in force.

        An option left out keeps what is stored, so a channel that never set its round length
        goes on following the bot's default (QUIZBOT_ROUND_MINUTES) when that changes.
        """
        stored = await self.store.channel_settings(place)
        changed = replace(
            stored,
            allow_change=stored.allow_change if allow_change is None else allow_change,
            round_minutes=stored.round_minutes if round_minutes is None else round_minutes,
            difficulty=stored.difficulty if difficulty is None else difficulty,
            computed_percent=(
                stored.computed_percent if computed_percent is None else computed_percent
            ),
        )
        if changed != stored:
            await self.set_channel_settings(place, changed)
        return await self.channel_settings(place)

    async def leaderboard(
        self, platform: str, workspace: str, period: Period, caller: str
    ) -> Leaderboard:
        """Return the top scorers of a workspace over a period, and the caller's own line."""
        since = period_start(period, self._now())
        ranked = rank_rows(await self.store.score_rows(platform, workspace, since))
        mine = next((e for e in ranked if e.user == caller), None)
        return Leaderboard(
            period=period, since=since, entries=tuple(ranked[:LEADERBOARD_SIZE]), caller=mine
        )

    async def player_summary(self, platform: str, workspace: str, user: str) -> PlayerSummary:
        """Return a player's totals, best channel streaks, reviews and this week's top ten."""
        rows = await self.store.score_rows(platform, workspace, None, user=user)
        row = rows[0] if rows else ScoreRow(user, 0, 0, 0, 0)
        streak = activity.player_streaks(
            await self.store.streak_rows(platform, workspace, user)
        ).get(user, activity.PlayerStreak(user, 0, 0))
        queue = await self.review_queue(platform, workspace, user)
        return PlayerSummary(
            user=user,
            points=row.points,
            answered=row.answered,
            correct=row.correct,
            current_streak=streak.current,
            best_streak=streak.best,
            reviews_due=queue.due,
            reviews_waiting=queue.pending - queue.due,
            next_review_due=queue.next_due,
            week=await self.leaderboard(platform, workspace, Period.WEEK, user),
        )

    async def stats(self, place: Place, user: str) -> UserStats:
        """Return a user's all-time totals in the workspace and streaks in the channel."""
        rows = await self.store.score_rows(place.platform, place.workspace, None, user=user)
        row = rows[0] if rows else ScoreRow(user, 0, 0, 0, 0)
        current, best = streaks(await self.store.scheduled_results(place, user))
        return UserStats(
            user=user,
            answered=row.answered,
            correct=row.correct,
            points=row.points,
            current_streak=current,
            best_streak=best,
        )

    async def _current_streak(self, place: Place, user: str) -> int:
        for window in STREAK_WINDOWS:
            results = await self.store.scheduled_results(place, user, newest=window)
            if len(results) < window or any(breaks_run(*r) for r in results):
                return streaks(results)[0]
        return streaks(await self.store.scheduled_results(place, user))[0]

    async def question_stats(
        self, platform: str, workspace: str, question_id: str
    ) -> QuestionStats:
        """Return how one question has fared in a workspace."""
        return await self.store.question_stats(platform, workspace, question_id)

    # ---------------------------------------------------------- review (never touches scores)

    async def _study(self, key: CardKey, review: Review) -> Study:
        memory = await self.memory_for(key.platform, key.workspace)
        return Study(key=key, review=review, memory=memory)

    async def memory_for(self, platform: str, workspace: str) -> learning.Memory:
        """Return the FSRS scheduler at the workspace's desired retention.

        Read at most once a minute per workspace, so a change reaches every replica within a
        minute without a read on every answer.
        """
        key = (platform, workspace)
        cached = self._memories.get(key)
        if cached is not None and self._now() - cached[0] < RATES_MAX_AGE:
            return cached[1]
        # A round's first clicks come all at once: one read serves every one of them.
        return await self._memory_reads.get(key, lambda: self._read_memory(key))

    async def _read_memory(self, key: tuple[str, str]) -> learning.Memory:
        now = self._now()
        retention = (await self.store.workspace_settings(*key)).retention
        memory = (
            self.memory
            if retention is None or retention == self.memory.retention
            else learning.Memory(retention)
        )
        self._memories[key] = (now, memory)
        return memory

    async def set_retention(self, platform: str, workspace: str, retention: float | None) -> None:
        """Set the workspace's desired retention (None: the default); refuse one out of range."""
        if retention is not None and not (
            learning.MIN_RETENTION <= retention <= learning.MAX_RETENTION
        ):
            raise UserError(
                say(
                    M.RETENTION_RANGE,
                    given=Code(str(retention)),
                    low=learning.MIN_RETENTION,
                    high=learning.MAX_RETENTION,
                )
            )
        settings = await self.store.workspace_settings(platform, workspace)
        await self.store.set_workspace_settings(
            platform, workspace, replace(settings, retention=retention)
        )
        self._memories.pop((platform, workspace), None)

    async def review_scope(self, platform: str, workspace: str) -> ReviewScope:
        """Return whose questions written in chat wait for an admin's review here."""
        return (await self.store.workspace_settings(platform, workspace)).review

    async def set_review_scope(self, platform: str, workspace: str, scope: ReviewScope) -> None:
        """Set whose questions written in chat wait for an admin's review in the workspace."""
        settings = await self.store.workspace_settings(platform, workspace)
        await self.store.set_workspace_settings(
            platform, workspace, replace(settings, review=scope)
        )

    async def _due_cards(self, platform: str, workspace: str, user: str) -> list[MemoryCard]:
        now = self._now()
        cards = await self.store.cards(platform, workspace, user)
        bank = await self.bank_for(platform, workspace)
        return [c for c in cards if learning.is_due(c, now) and _known(bank, c.key.question_id)]

    async def next_review(self, platform: str, workspace: str, user: str) -> Question | None:
        """Return the user's most overdue card's question, or None when nothing is due."""
        bank = await self.bank_for(platform, workspace)
        for card in await self._due_cards(platform, workspace, user):
            try:
                return await self.question(platform, workspace, card.key.question_id, bank)
            except KeyError:
                continue  # a computed instance that no longer draws: the next one
        return None

    async def review_queue(self, platform: str, workspace: str, user: str) -> ReviewQueue:
        """Return how many reviews are due and waiting, and when the next falls due."""
        now = self._now()
        bank = await self.bank_for(platform, workspace)
        cards = [
            c
            for c in await self.store.cards(platform, workspace, user)
            if c.seen and _known(bank, c.key.question_id)
        ]
        due = sum(learning.is_due(c, now) for c in cards)
        later = [c.due_at for c in cards if not learning.is_due(c, now)]
        return ReviewQueue(due=due, pending=len(cards), next_due=min(later, default=None))

    async def answer_review(
        self, platform: str, workspace: str, user: str, question_id: str, key: str
    ) -> ReviewOutcome:
        """Grade a review answer and review the card with it (scores never change).

        Only a due card is reviewed: a second click on the same review reports the card as the
        first left it.
        """
        return await self._answer_outside_round(
            CardKey(platform, workspace, user, question_id), key, Source.REVIEW, due_only=True
        )


def _known(bank: Bank, question_id: str) -> bool:
    """Return whether a bank has a question; a computed instance is known by its template."""
    # Counting cards rebuilds no computed question.
    template = template_of(question_id)
    if template is not None and template in bank.templates:
        return True
    try:
        bank.by_id(question_id)
    except KeyError:
        return False
    return True


def not_a_choice(given: str, question: Question) -> Text:
    """Return the refusal of an answer that names no choice of the question."""
    return say(M.NOT_A_CHOICE, given=Code(given[:20]), keys=", ".join(question.keys))


def _outcome(
    status: AnswerStatus,
    question: Question,
    round_id: int,
    user: str,
    key: str,
    *,
    streak: int = 0,
    previous: str | None = None,
) -> AnswerOutcome:
    correct = key == question.answer
    counted = status in (AnswerStatus.ACCEPTED, AnswerStatus.CHANGED, AnswerStatus.ALREADY)
    return AnswerOutcome(
        status=status,
        round_id=round_id,
        user=user,
        choice=question.choice(key),
        correct=correct,
        answer=question.answer_choice,
        short=question.short,
        points=points_for(question, correct) if counted else 0,
        streak=streak,
        previous=question.choice(previous) if previous is not None else None,
        why_not=None if correct else question.why_not.get(key),
        question_id=question.id,
    )
