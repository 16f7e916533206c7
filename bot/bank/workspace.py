"""Workspace banks: a workspace's own questions, kept in the store, over the files' bank.

A workspace (a Slack workspace, a Discord server) sees the bank of the files (the bundled
``questions/`` or ``QUIZBOT_QUESTIONS``), less the questions it hid, with its own questions laid
over it: one with the id of a file's question replaces it, the others follow. Every edit of an
own question is a new revision, stored as the question's YAML text; a round records the revision
it asked, and answers are counted per revision (``Question.asked_as``).

A question written in chat by someone who is not an admin is a *proposal* (``submit``): it waits
in the store until an admin approves it (then it is a new revision like any other) or rejects it;
a workspace whose review setting is ``everyone`` makes its admins' questions proposals too.

Every change raises the workspace's generation in the store. ``WorkspaceBanks`` keeps one copy
of each workspace's bank and reads the generation before handing it out, so a change made on
any replica is in the next round of every replica, with no restart and no message between them.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

import yaml

from bot import messages as M
from bot.bank.bank import Problem, QuestionBank
from bot.bank.lint import Finding, lint
from bot.bank.loader import check_text
from bot.engine.model import (
    Difficulty,
    Flag,
    Flagged,
    FlagReason,
    Place,
    Proposal,
    ProposalStatus,
    Proposed,
    Published,
    Question,
    ResolvedReport,
    ReviewScope,
    WorkspaceSettings,
)
from bot.errors import UserError
from bot.text import Code, say

__all__ = [  # the proposals' values, defined with the engine's and named here for callers
    "Proposal",
    "ProposalStatus",
    "Proposed",
    "Published",
]

# Own questions' topic, as the folder of a file is a file's question's topic.
TOPIC = "workspace"
# Revisions are immutable: a process keeps this many it has read.
REVISION_CACHE = 4096
# The longest reason a rejection keeps.
REASON_MAX = 500


@dataclass(frozen=True, slots=True)
class StoredRevision:
    """One revision of a workspace's own question, as the store keeps it."""

    question_id: str
    revision: int
    body: str
    author: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BankLayer:
    """What a workspace lays over the files' bank: its own questions, the ids it hid, and the
    ids paused by players' reports."""

    generation: int
    questions: tuple[StoredRevision, ...]
    hidden: frozenset[str]
    paused: frozenset[str] = frozenset()


class UnknownProposal(UserError):
    """No proposal has this id (in this workspace)."""

    def __init__(self, proposal_id: int) -> None:
        super().__init__(say(M.PROPOSAL_UNKNOWN, id=proposal_id))
        self.proposal_id = proposal_id


class AlreadyDecided(UserError):
    """A proposal was approved or rejected already; deciding it again changes nothing."""

    def __init__(self, proposal: Proposal) -> None:
        status = (
            M.PROPOSAL_WAS_APPROVED
            if proposal.status is ProposalStatus.APPROVED
            else M.PROPOSAL_WAS_REJECTED
        )
        super().__init__(
            say(
                M.PROPOSAL_ALREADY_DECIDED,
                id=proposal.id,
                question=Code(proposal.question_id),
                decision=say(status),
                by=proposal.decided_by or "?",
            )
        )
        self.proposal = proposal


class BankStore(Protocol):
    """The store's part in workspace banks."""

    async def bank_generation(self, platform: str, workspace: str) -> int:
        """Return the workspace bank's generation: 0 until its first change."""
        ...

    async def bank_layer(self, platform: str, workspace: str, pause_at: int = 0) -> BankLayer:
        """Return the workspace's own questions (latest revisions), hidden and paused ids."""
        ...

    async def question_revision(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> StoredRevision | None:
        """Return one revision of a workspace's question, or None."""
        ...

    async def latest_round(self, place: Place) -> tuple[str, int | None] | None:
        """Return the question (and revision) of the channel's latest round, or None."""
        ...

    async def add_flag(
        self,
        platform: str,
        workspace: str,
        question_id: str,
        revision: int | None,
        *,
        user: str,
        reason: FlagReason,
        note: str | None,
        at: datetime,
        pause_at: int,
        channel: str | None = None,
    ) -> Flagged | None:
        """Record a report; None when this person has an open one on the question already."""
        ...

    async def claim_resolved_reports(
        self, platform: str, at: datetime, limit: int = 100
    ) -> list[ResolvedReport]:
        """Claim resolved reports whose reporter was not told yet (once across replicas)."""
        ...

    async def open_flags(self, platform: str, workspace: str) -> list[Flag]:
        """Return the workspace's open reports, oldest first."""
        ...

    async def save_revisions(
        self,
        platform: str,
        workspace: str,
        bodies: Sequence[tuple[str, str]],
        *,
        author: str,
        at: datetime,
    ) -> list[tuple[str, int]]:
        """Store a new revision of each changed (id, body), in one transaction."""
        ...

    async def set_hidden(
        self,
        platform: str,
        workspace: str,
        question_ids: Sequence[str],
        hidden: bool,
        *,
        by: str,
        at: datetime,
    ) -> list[str]:
        """Hide (or show again) these questions in the workspace; return the ids changed."""
        ...

    async def question_history(
        self, platform: str, workspace: str, question_id: str
    ) -> list[StoredRevision]:
        """Return every revision of a workspace's question, oldest first."""
        ...

    async def workspace_settings(self, platform: str, workspace: str) -> WorkspaceSettings:
        """Return the workspace's settings (defaults when never set)."""
        ...

    async def add_proposal(
        self,
        platform: str,
        workspace: str,
        question_id: str,
        body: str,
        *,
        author: str,
        at: datetime,
        channel: str | None = None,
    ) -> int:
        """Store a pending proposal; return its id."""
        ...

    async def proposals(
        self, platform: str, workspace: str, status: ProposalStatus | None = ProposalStatus.PENDING
    ) -> list[Proposal]:
        """Return the workspace's proposals in this status (all with None), oldest first."""
        ...

    async def proposal(self, proposal_id: int) -> Proposal | None:
        """Return one proposal, or None."""
        ...

    async def approve_proposal(
        self, proposal_id: int, *, by: str, at: datetime, body: str | None = None
    ) -> Published:
        """Approve a pending proposal: its question (or ``body``, an admin's edit) goes live."""
        ...

    async def claim_new_proposals(
        self, platform: str, at: datetime, limit: int = 100
    ) -> list[Proposal]:
        """Claim pending proposals whose admins were not told yet (once across replicas)."""
        ...

    async def claim_decided_proposals(
        self, platform: str, at: datetime, limit: int = 100
    ) -> list[Proposal]:
        """Claim decided proposals whose author was not told yet (once across replicas)."""
        ...

    async def reject_proposal(
        self, proposal_id: int, *, by: str, at: datetime, reason: str | None = None
    ) -> Proposal:
        """Reject a pending proposal; return it as decided."""
        ...


# ---------------------------------------------------------------- the question as data


def question_data(q: Question) -> dict[str, Any]:
    """Return a question as the mapping its YAML file holds, fields in the format's order.

    Defaults are left out (no tags, medium difficulty), so loading the mapping gives back an
    equal question.
    """
    data: dict[str, Any] = {
        "id": q.id,
        "question": q.text,
        "choices": {c.key: c.text for c in q.choices},
        "answer": q.answer,
    }
    explanation: dict[str, Any] = {"short": q.short, "full": q.full}
    if q.why_not:
        explanation["why_not"] = {c.key: q.why_not[c.key] for c in q.choices if c.key in q.why_not}
    data["explanation"] = explanation
    if q.tags:
        data["tags"] = list(q.tags)
    if q.difficulty is not Difficulty.MEDIUM:
        data["difficulty"] = q.difficulty.value
    if q.references:
        data["references"] = [{"title": r.title, "url": r.url} for r in q.references]
    if q.image is not None:
        data["image"] = q.image
    if q.chart is not None:
        data["chart"] = _chart_data(q)
    return data


def _chart_data(q: Question) -> dict[str, Any]:
    chart = q.chart
    assert chart is not None
    out: dict[str, Any] = {}
    if chart.plan is not None:
        p = chart.plan
        plan: dict[str, Any] = {"model": p.model, "gpus": p.gpus}
        for name in ("tp", "seq", "batch", "gpu"):
            value = getattr(p, name)
            if value is not None:
                plan[name] = value
        for name in ("pp", "cp", "zero"):
            value = getattr(p, name)
            if value != 1:
                plan[name] = value
        out["plan"] = plan
    else:
        out = {"size": chart.size, "op": chart.op, "nodes": chart.nodes, "gpus": chart.gpus}
    if chart.over:
        out["over"] = list(chart.over)
    return out


def dump(data: object) -> str:
    """Return YAML text for question data: block style, Unicode as written, keys in order."""
    # safe_dump quotes any text YAML would read as a boolean, a number or a date.
    text: str = yaml.safe_dump(
        data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
    )
    return text


def question_yaml(q: Question) -> str:
    """Return one question as the YAML text of its own file (a revision's body)."""
    return dump(question_data(q))


def bank_yaml(questions: Iterable[Question]) -> str:
    """Return questions as one YAML file of the format: a ``questions:`` list."""
    return dump({"questions": [question_data(q) for q in questions]})


def source_of(question_id: str) -> str:
    """Return the source an own question is named by in messages and topics."""
    return f"{TOPIC}/{question_id}"


def from_revision(stored: StoredRevision) -> Question:
    """Return the question a stored revision holds (ValueError if its body no longer loads)."""
    name = f"{source_of(stored.question_id)}@{stored.revision}"
    questions, problems = check_text(stored.body, name)
    if problems or len(questions) != 1:
        raise ValueError("; ".join(str(p) for p in problems) or f"{name}: not one question")
    return replace(questions[0], revision=stored.revision)


def layered(base: QuestionBank, own: Sequence[Question], hidden: Iterable[str]) -> QuestionBank:
    """Return the files' bank less the hidden ids, own questions replacing those of their ids."""
    hide = set(hidden)
    mine = {q.id: q for q in own}
    out = [mine.pop(q.id, q) for q in base if q.id not in hide]
    out += [q for q in own if q.id in mine and q.id not in hide]
    return base.with_questions(out)


# ---------------------------------------------------------------- checking what is submitted

# Chat markup that would reach the wire live if a renderer ever let it through: Slack's special
# mentions and links (<!channel>, <@U1>, <#C1>, <https://...|text>), Discord's mentions
# (@everyone, @here, <@123>, <@&123>, <#123>) and masked links. A workspace's question is text.
MARKUP = re.compile(
    r"<[!@#][^>]*>|<https?://[^>]*>|@(?:everyone|here|channel)\b|\[[^\]]*\]\(\s*https?://",
    re.IGNORECASE,
)


def _texts(q: Question) -> Iterable[tuple[str, str]]:
    yield "question", q.text
    for c in q.choices:
        yield f"choices.{c.key}", c.text
    yield "explanation.short", q.short
    yield "explanation.full", q.full
    for key, why in q.why_not.items():
        yield f"explanation.why_not.{key}", why
    for n, r in enumerate(q.references):
        yield f"references.{n}", r.title


def markup_problems(q: Question) -> list[Problem]:
    """Return a problem for each field of a question that holds a mention or chat markup."""
    out = []
    for field, text in _texts(q):
        found = MARKUP.search(text)
        if found is not None:
            out.append(
                Problem(
                    q.source,
                    q.line_of(field),
                    f"{field} holds {found.group(0)!r}: mentions and chat markup are not "
                    "allowed in a workspace's question; write plain text",
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Checked:
    """Questions submitted to a workspace's bank, checked: what to save, or why not."""

    questions: tuple[Question, ...]
    problems: tuple[Problem, ...]
    warnings: tuple[Finding, ...]

    def refused(self, *, allow_warnings: bool = False) -> bool:
        """Return whether nothing may be saved: a problem, or a warning not allowed."""
        return bool(self.problems) or (bool(self.warnings) and not allow_warnings)


def check_submission(
    text: str, name: str, current: QuestionBank, *, new_only: bool = False
) -> Checked:
    """Check question text for a workspace: the format, chat markup, ids, and the lint rules.

    ``current`` is the workspace's bank as it is; the lint runs over it with the submitted
    questions laid over it, and keeps the warnings about the submitted ones. ``new_only``
    refuses an id the workspace's bank has already (adding, not editing).
    """
    questions, problems = check_text(text, name)
    return check_parsed(questions, problems, current, new_only=new_only)


def check_parsed(
    questions: Sequence[Question],
    problems: Sequence[Problem],
    current: QuestionBank,
    *,
    new_only: bool = False,
) -> Checked:
    """Check questions already read (from YAML or CSV) as ``check_submission`` does."""
    problems = list(problems)
    for q in questions:
        problems += markup_problems(q)
        if new_only and q.id in current:
            problems.append(
                Problem(
                    q.source,
                    q.line_of("id"),
                    f"duplicate id '{q.id}': the workspace's bank has a question with this id "
                    "already (import the file to make a new revision of it)",
                )
            )
    if problems:
        return Checked((), tuple(problems), ())
    ids = {q.id for q in questions}
    candidate = layered(current, questions, ())
    topics = {q.id: TOPIC for q in questions}
    report = lint(candidate.questions, topics)
    warnings = tuple(
        f for f in report.findings if f.question_id in ids and f.rule != "letter-balance"
    )
    return Checked(tuple(questions), (), warnings)


# ---------------------------------------------------------------- one bank per workspace


@dataclass(frozen=True, slots=True)
class WorkspaceView:
    """A workspace's questions as its admins see them: hidden and paused ones too."""

    bank: QuestionBank  # the files' bank with the own questions laid over it, none left out
    own: frozenset[str]  # the ids of the workspace's own questions
    hidden: frozenset[str]
    paused: frozenset[str]  # taken out of rounds by players' open reports


class WorkspaceBanks:
    """Hand out each workspace's bank, rebuilt when its generation in the store moves."""

    def __init__(self, base: QuestionBank, store: BankStore, *, pause_at: int = 3) -> None:
        """``pause_at`` open reports take a question out of its workspace's rounds (0: never)."""
        self.base = base
        self.store = store
        self.pause_at = pause_at
        self._banks: dict[tuple[str, str], tuple[int, QuestionBank]] = {}
        self._revisions: OrderedDict[tuple[str, str, str, int], Question] = OrderedDict()

    async def flag(
        self,
        place: Place,
        user: str,
        reason: FlagReason,
        note: str | None,
        at: datetime,
        question_id: str | None = None,
    ) -> Flagged:
        """Record a player's report on a question: the one named (its latest revision here),
        else the channel's latest (UserError if there is none)."""
        if question_id is None:
            latest = await self.store.latest_round(place)
            if latest is None:
                raise UserError(say(M.FLAG_NO_ROUND))
            question_id, revision = latest
        else:
            revision = await self._latest_revision(place, question_id)
        flagged = await self.store.add_flag(
            place.platform,
            place.workspace,
            question_id,
            revision,
            user=user,
            reason=reason,
            note=note,
            at=at,
            pause_at=self.pause_at,
            channel=place.channel,
        )
        if flagged is None:
            raise UserError(say(M.FLAG_ALREADY, question=Code(question_id)))
        return flagged

    async def open_flags(self, platform: str, workspace: str) -> list[Flag]:
        """Return the workspace's open reports."""
        return await self.store.open_flags(platform, workspace)

    async def _latest_revision(self, place: Place, question_id: str) -> int | None:
        """Return the revision a report on a question concerns: its latest in the workspace
        (None for a question of the files), or refuse an id the workspace does not know."""
        layer = await self.store.bank_layer(place.platform, place.workspace, self.pause_at)
        for stored in layer.questions:
            if stored.question_id == question_id:
                return stored.revision
        if question_id not in self.base:
            raise UserError(say(M.FLAG_UNKNOWN_QUESTION, question=Code(question_id)))
        return None

    async def resolved_reports(self, platform: str, at: datetime) -> list[ResolvedReport]:
        """Claim the resolved reports of a platform whose reporters are still to be told."""
        return await self.store.claim_resolved_reports(platform, at)

    # ------------------------------------------------------------ proposals and their review

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
        """Take a question written for the workspace: live at once, or a proposal for review.

        ``body`` is one question's YAML text, checked by the caller (``check_submission``).
        An admin's question goes live (a new revision; the latest one when the text is
        unchanged) unless the workspace reviews everyone's (``WorkspaceSettings.review``);
        anyone else's, and then the admins' too, waits as a proposal. ``channel`` is where it
        was written, to tell its author there of the decision.
        """
        question_id = question_id_of(body)
        if admin and not await self.reviews_everyone(platform, workspace):
            return await self.publish(platform, workspace, question_id, body, author=author, at=at)
        proposal_id = await self.store.add_proposal(
            platform, workspace, question_id, body, author=author, at=at, channel=channel
        )
        return Proposed(proposal_id=proposal_id, question_id=question_id)

    async def publish(
        self,
        platform: str,
        workspace: str,
        question_id: str,
        body: str,
        *,
        author: str,
        at: datetime,
    ) -> Published:
        """Store a question's text as its new revision, live in the next round."""
        written = await self.store.save_revisions(
            platform, workspace, [(question_id, body)], author=author, at=at
        )
        if written:
            return Published(question_id=written[0][0], revision=written[0][1])
        history = await self.store.question_history(platform, workspace, question_id)
        return Published(question_id=question_id, revision=history[-1].revision)

    async def reviews_everyone(self, platform: str, workspace: str) -> bool:
        """Return whether the workspace's admins' questions wait for review too."""
        settings = await self.store.workspace_settings(platform, workspace)
        return settings.review is ReviewScope.EVERYONE

    async def proposals(
        self, platform: str, workspace: str, status: ProposalStatus | None = ProposalStatus.PENDING
    ) -> list[Proposal]:
        """Return the workspace's proposals in this status (all with None), oldest first."""
        return await self.store.proposals(platform, workspace, status)

    async def proposal(self, proposal_id: int) -> Proposal | None:
        """Return one proposal, or None."""
        return await self.store.proposal(proposal_id)

    async def approve(
        self, proposal_id: int, by: str, at: datetime, *, body: str | None = None
    ) -> Published:
        """Approve a pending proposal, once across replicas: its question goes live.

        ``body`` is an admin's edit of the question (checked by the caller), stored instead of
        the text proposed; it keeps the proposal's question id (UserError otherwise). Raise
        ``UnknownProposal``, or ``AlreadyDecided`` (nothing changed) when it was approved or
        rejected before.
        """
        if body is not None:
            found = await self.store.proposal(proposal_id)
            if found is None:
                raise UnknownProposal(proposal_id)
            if question_id_of(body) != found.question_id:
                raise UserError(say(M.PROPOSAL_EDIT_ID, question=Code(found.question_id)))
        return await self.store.approve_proposal(proposal_id, by=by, at=at, body=body)

    async def reject(
        self, proposal_id: int, by: str, at: datetime, reason: str | None = None
    ) -> Proposal:
        """Reject a pending proposal, once across replicas; return it as decided.

        Raise ``UnknownProposal``, or ``AlreadyDecided`` (nothing changed) when it was decided.
        """
        reason = (reason or "").strip() or None
        if reason is not None and len(reason) > REASON_MAX:
            raise UserError(say(M.PROPOSAL_REASON_LONG, limit=REASON_MAX, length=len(reason)))
        return await self.store.reject_proposal(proposal_id, by=by, at=at, reason=reason)

    async def new_proposals(self, platform: str, at: datetime) -> list[Proposal]:
        """Claim the pending proposals whose workspace's admins are still to be told."""
        return await self.store.claim_new_proposals(platform, at)

    async def decided_proposals(self, platform: str, at: datetime) -> list[Proposal]:
        """Claim the decided proposals whose authors are still to be told."""
        return await self.store.claim_decided_proposals(platform, at)

    async def hide(
        self, platform: str, workspace: str, question_id: str, hidden: bool, by: str, at: datetime
    ) -> bool:
        """Hide a question in the workspace (or show it again); return whether that changed.

        The question may be one of the files' or one of the workspace's own; an id the
        workspace does not know is refused (UserError) and nothing changes. Like an edit, it
        raises the workspace's generation: every replica's next round leaves it out.
        """
        layer = await self.store.bank_layer(platform, workspace, self.pause_at)
        known = question_id in self.base or any(
            stored.question_id == question_id for stored in layer.questions
        )
        if not known:
            raise UserError(say(M.HIDE_UNKNOWN, question=Code(question_id)))
        changed = await self.store.set_hidden(
            platform, workspace, [question_id], hidden, by=by, at=at
        )
        return question_id in changed

    async def bank_for(self, platform: str, workspace: str) -> QuestionBank:
        """Return the workspace's bank as the store has it now (one small read when unchanged)."""
        key = (platform, workspace)
        generation = await self.store.bank_generation(platform, workspace)
        if generation == 0:
            return self.base
        cached = self._banks.get(key)
        if cached is not None and cached[0] == generation:
            return cached[1]
        layer = await self.store.bank_layer(platform, workspace, self.pause_at)
        own = []
        for stored in layer.questions:
            q = self._remember(platform, workspace, stored)
            if q is not None:
                own.append(q)
        bank = layered(self.base, own, layer.hidden | layer.paused)
        self._banks[key] = (layer.generation, bank)
        return bank

    async def revision(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> Question | None:
        """Return one revision of a workspace's question (what a round asked), or None."""
        cached = self._revisions.get((platform, workspace, question_id, revision))
        if cached is not None:
            return cached
        stored = await self.store.question_revision(platform, workspace, question_id, revision)
        return None if stored is None else self._remember(platform, workspace, stored)

    async def view(self, platform: str, workspace: str) -> WorkspaceView:
        """Return every question of a workspace, with which are its own, hidden and paused."""
        layer = await self.store.bank_layer(platform, workspace, self.pause_at)
        own = [
            q
            for stored in layer.questions
            if (q := self._remember(platform, workspace, stored)) is not None
        ]
        return WorkspaceView(
            bank=layered(self.base, own, ()),
            own=frozenset(q.id for q in own),
            hidden=layer.hidden,
            paused=layer.paused,
        )

    def _remember(self, platform: str, workspace: str, stored: StoredRevision) -> Question | None:
        try:
            q = from_revision(stored)
        except ValueError:
            # Saved bodies passed the same loader; one that no longer loads (a rule made
            # stricter since) stays out of rounds rather than stopping the workspace's bank.
            return None
        self._revisions[(platform, workspace, stored.question_id, stored.revision)] = q
        if len(self._revisions) > REVISION_CACHE:
            self._revisions.popitem(last=False)
        return q


def question_id_of(body: str) -> str:
    """Return the id of the one question a body holds (ValueError when it holds no one)."""
    questions, problems = check_text(body, "the question")
    if problems or len(questions) != 1:
        raise ValueError("; ".join(str(p) for p in problems) or "not one question")
    return questions[0].id


def own_ids(bank: QuestionBank) -> Mapping[str, int]:
    """Return the ids of a bank's own (workspace) questions with their revisions."""
    return {q.id: q.revision for q in bank if q.revision is not None}
