"""SQL for workspace banks: question revisions, hidden questions and the bank's generation.

Every change to a workspace's bank raises its generation in the same transaction, first, so
that on PostgreSQL two changes to one workspace queue on that row instead of numbering the same
revision twice (SQLite's writers are one at a time already).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.bank.workspace import (
    AlreadyDecided,
    BankLayer,
    Proposal,
    ProposalStatus,
    Published,
    StoredRevision,
    UnknownProposal,
)
from bot.engine.model import Flag, Flagged, FlagReason, Place, ResolvedReport
from bot.storage._schema import (
    bank_generations,
    bank_hidden,
    bank_revisions,
    computed_instances,
    question_flags,
    question_proposals,
    rounds,
)


def _ws(table: sa.Table, platform: str, workspace: str) -> sa.ColumnElement[bool]:
    return sa.and_(table.c.platform == platform, table.c.workspace == workspace)


def _open(platform: str, workspace: str) -> sa.ColumnElement[bool]:
    return sa.and_(
        question_flags.c.platform == platform,
        question_flags.c.workspace == workspace,
        question_flags.c.resolved_at.is_(None),
    )


def _revision(row: Any) -> StoredRevision:
    return StoredRevision(
        question_id=row.question_id,
        revision=int(row.revision),
        body=row.body,
        author=row.author,
        created_at=row.created_at,
    )


def _proposal(row: Any) -> Proposal:
    return Proposal(
        id=int(row.id),
        platform=row.platform,
        workspace=row.workspace,
        question_id=row.question_id,
        body=row.body,
        author=row.author,
        channel=row.channel,
        created_at=row.created_at,
        status=ProposalStatus(row.status),
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        reason=row.reason,
        revision=None if row.revision is None else int(row.revision),
        edited=bool(row.edited),
    )


class BankSql:
    """The workspace-bank part of the store, mixed into SqlStore."""

    if TYPE_CHECKING:

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

    async def keep_instance(
        self, platform: str, workspace: str, question_id: str, body: str, *, at: datetime
    ) -> str:
        """Store a computed question as drawn, once per workspace; return the stored text.

        The first text stored for an id is kept: a replica that drew the id again with other
        code gets back the text stored first, and asks that.
        """
        insert = (
            self._insert(computed_instances)
            .values(
                platform=platform,
                workspace=workspace,
                question_id=question_id,
                body=body,
                created_at=at,
            )
            .on_conflict_do_nothing(index_elements=["platform", "workspace", "question_id"])
        )
        query = sa.select(computed_instances.c.body).where(
            _ws(computed_instances, platform, workspace),
            computed_instances.c.question_id == question_id,
        )
        async with self.write() as conn:
            await conn.execute(insert)
            stored = (await conn.execute(query)).scalar()
        return str(stored) if stored is not None else body

    async def computed_instances(
        self, platform: str, workspace: str, question_ids: Sequence[str]
    ) -> dict[str, str]:
        """Return the stored text of these computed questions of a workspace, by id."""
        if not question_ids:
            return {}
        found: dict[str, str] = {}
        ids = sorted(set(question_ids))
        async with self.read() as conn:
            # In slices, well under any driver's limit on bound parameters.
            for start in range(0, len(ids), 500):
                query = sa.select(
                    computed_instances.c.question_id, computed_instances.c.body
                ).where(
                    _ws(computed_instances, platform, workspace),
                    computed_instances.c.question_id.in_(ids[start : start + 500]),
                )
                for row in await conn.execute(query):
                    found[row.question_id] = row.body
        return found

    async def bank_generation(self, platform: str, workspace: str) -> int:
        """Return the workspace bank's generation: 0 until its first change."""
        query = sa.select(bank_generations.c.generation).where(
            _ws(bank_generations, platform, workspace)
        )
        async with self.read() as conn:
            value = (await conn.execute(query)).scalar()
        return int(value or 0)

    async def bank_layer(self, platform: str, workspace: str, pause_at: int = 0) -> BankLayer:
        """Return the workspace's own questions (latest revisions), hidden ids, and the ids
        with ``pause_at`` or more open reports (none when ``pause_at`` is 0)."""
        latest = (
            sa.select(
                bank_revisions.c.question_id.label("q"),
                sa.func.max(bank_revisions.c.revision).label("r"),
            )
            .where(_ws(bank_revisions, platform, workspace))
            .group_by(bank_revisions.c.question_id)
            .subquery()
        )
        own = (
            sa.select(bank_revisions)
            .join(
                latest,
                sa.and_(
                    bank_revisions.c.question_id == latest.c.q,
                    bank_revisions.c.revision == latest.c.r,
                ),
            )
            .where(_ws(bank_revisions, platform, workspace))
            .order_by(bank_revisions.c.created_at, bank_revisions.c.question_id)
        )
        hidden = sa.select(bank_hidden.c.question_id).where(_ws(bank_hidden, platform, workspace))
        generation = sa.select(bank_generations.c.generation).where(
            _ws(bank_generations, platform, workspace)
        )
        # The generation is read first: a change that lands between the reads leaves a copy
        # marked older than what it holds, which is rebuilt once more, never one marked newer.
        async with self.read() as conn:
            gen = int((await conn.execute(generation)).scalar() or 0)
            revisions = tuple(_revision(r) for r in await conn.execute(own))
            hidden_ids = frozenset((await conn.execute(hidden)).scalars())
            paused: frozenset[str] = frozenset()
            if pause_at > 0:
                paused = frozenset(
                    (
                        await conn.execute(
                            sa.select(question_flags.c.question_id)
                            .where(_open(platform, workspace))
                            .group_by(question_flags.c.question_id)
                            .having(sa.func.count() >= pause_at)
                        )
                    ).scalars()
                )
        return BankLayer(generation=gen, questions=revisions, hidden=hidden_ids, paused=paused)

    async def question_revision(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> StoredRevision | None:
        """Return one revision of a workspace's question, or None."""
        query = sa.select(bank_revisions).where(
            _ws(bank_revisions, platform, workspace),
            bank_revisions.c.question_id == question_id,
            bank_revisions.c.revision == revision,
        )
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else _revision(row)

    async def question_history(
        self, platform: str, workspace: str, question_id: str
    ) -> list[StoredRevision]:
        """Return every revision of a workspace's question, oldest first."""
        query = (
            sa.select(bank_revisions)
            .where(
                _ws(bank_revisions, platform, workspace),
                bank_revisions.c.question_id == question_id,
            )
            .order_by(bank_revisions.c.revision)
        )
        async with self.read() as conn:
            return [_revision(r) for r in await conn.execute(query)]

    async def save_revisions(
        self,
        platform: str,
        workspace: str,
        bodies: Sequence[tuple[str, str]],
        *,
        author: str,
        at: datetime,
    ) -> list[tuple[str, int]]:
        """Store a new revision of each (question id, body) whose body changed, in one transaction.

        Return the (question id, revision) pairs written; a body equal to its question's latest
        revision writes nothing (so a retry after a lost commit writes nothing twice).
        """
        async with self.write() as conn:
            await self._bump(conn, platform, workspace)
            return await self._write_revisions(conn, platform, workspace, bodies, author, at)

    async def _write_revisions(
        self,
        conn: AsyncConnection,
        platform: str,
        workspace: str,
        bodies: Sequence[tuple[str, str]],
        author: str,
        at: datetime,
    ) -> list[tuple[str, int]]:
        """Write the changed bodies' revisions in the caller's transaction (generation raised)."""
        written: list[tuple[str, int]] = []
        ids = [q for q, _ in bodies]
        latest: dict[str, tuple[int, str]] = {}
        rows = await conn.execute(
            sa.select(
                bank_revisions.c.question_id,
                bank_revisions.c.revision,
                bank_revisions.c.body,
            )
            .where(
                _ws(bank_revisions, platform, workspace),
                bank_revisions.c.question_id.in_(ids),
            )
            .order_by(bank_revisions.c.revision)
        )
        for qid, rev, body in rows:
            latest[qid] = (int(rev), body)
        for qid, body in bodies:
            rev, before = latest.get(qid, (0, None))
            if before == body:
                continue
            await conn.execute(
                bank_revisions.insert().values(
                    platform=platform,
                    workspace=workspace,
                    question_id=qid,
                    revision=rev + 1,
                    body=body,
                    author=author,
                    created_at=at,
                )
            )
            latest[qid] = (rev + 1, body)
            written.append((qid, rev + 1))
            # A new revision is the fix: the reports on the question are resolved by it.
            await conn.execute(
                question_flags.update()
                .where(_open(platform, workspace), question_flags.c.question_id == qid)
                .values(resolved_at=at, resolved_revision=rev + 1)
            )
        return written

    async def resolved_flags(
        self, platform: str, workspace: str, question_id: str, revision: int
    ) -> list[str]:
        """Return who reported a question, each once, whose reports this revision resolved."""
        query = (
            sa.select(question_flags.c.user_id)
            .where(
                question_flags.c.platform == platform,
                question_flags.c.workspace == workspace,
                question_flags.c.question_id == question_id,
                question_flags.c.resolved_revision == revision,
            )
            .order_by(question_flags.c.id)
        )
        async with self.read() as conn:
            return list(dict.fromkeys((await conn.execute(query)).scalars()))

    async def latest_round(self, place: Place) -> tuple[str, int | None] | None:
        """Return the question (and revision) of the channel's latest round, or None."""
        query = (
            sa.select(rounds.c.question_id, rounds.c.revision)
            .where(
                rounds.c.platform == place.platform,
                rounds.c.workspace == place.workspace,
                rounds.c.channel == place.channel,
            )
            .order_by(rounds.c.opened_at.desc(), rounds.c.id.desc())
            .limit(1)
        )
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else (row.question_id, row.revision)

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
        """Record a report; None when this person has an open report on the question already.

        The report that brings the open ones to ``pause_at`` raises the workspace bank's
        generation in the same transaction, so every replica drops the question at its next
        round.
        """
        async with self.write() as conn:
            mine = await conn.execute(
                sa.select(question_flags.c.id).where(
                    _open(platform, workspace),
                    question_flags.c.question_id == question_id,
                    question_flags.c.user_id == user,
                )
            )
            if mine.first() is not None:
                return None
            await conn.execute(
                question_flags.insert().values(
                    platform=platform,
                    workspace=workspace,
                    question_id=question_id,
                    revision=revision,
                    user_id=user,
                    reason=reason.value,
                    note=note,
                    created_at=at,
                    channel=channel,
                )
            )
            count = int(
                (
                    await conn.execute(
                        sa.select(sa.func.count()).where(
                            _open(platform, workspace),
                            question_flags.c.question_id == question_id,
                        )
                    )
                ).scalar()
                or 0
            )
            paused = pause_at > 0 and count >= pause_at
            if pause_at > 0 and count == pause_at:
                await self._bump(conn, platform, workspace)
        return Flagged(question_id=question_id, open=count, paused=paused)

    async def claim_resolved_reports(
        self, platform: str, at: datetime, limit: int = 100
    ) -> list[ResolvedReport]:
        """Claim reports a revision resolved whose reporter was not told yet; each is claimed by
        one call on one replica only (its ``notified_at`` is set as it is claimed)."""
        pending = (
            sa.select(question_flags)
            .where(
                question_flags.c.platform == platform,
                question_flags.c.resolved_at.is_not(None),
                question_flags.c.notified_at.is_(None),
                question_flags.c.channel.is_not(None),
            )
            .order_by(question_flags.c.id)
            .limit(limit)
        )
        claimed = []
        async with self.write() as conn:
            for row in (await conn.execute(pending)).all():
                won = await conn.execute(
                    question_flags.update()
                    .where(question_flags.c.id == row.id, question_flags.c.notified_at.is_(None))
                    .values(notified_at=at)
                )
                if won.rowcount == 1:
                    claimed.append(
                        ResolvedReport(
                            place=Place(platform, row.workspace, row.channel),
                            user=row.user_id,
                            question_id=row.question_id,
                            revision=int(row.resolved_revision),
                        )
                    )
        return claimed

    async def open_flags(self, platform: str, workspace: str) -> list[Flag]:
        """Return the workspace's open reports, oldest first."""
        query = (
            sa.select(question_flags)
            .where(_open(platform, workspace))
            .order_by(question_flags.c.created_at, question_flags.c.id)
        )
        async with self.read() as conn:
            return [
                Flag(
                    question_id=r.question_id,
                    revision=r.revision,
                    user=r.user_id,
                    reason=FlagReason(r.reason),
                    note=r.note,
                    created_at=r.created_at,
                )
                for r in await conn.execute(query)
            ]

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
        changed: list[str] = []
        async with self.write() as conn:
            await self._bump(conn, platform, workspace)
            have = set(
                (
                    await conn.execute(
                        sa.select(bank_hidden.c.question_id).where(
                            _ws(bank_hidden, platform, workspace),
                            bank_hidden.c.question_id.in_(list(question_ids)),
                        )
                    )
                ).scalars()
            )
            for qid in dict.fromkeys(question_ids):
                if hidden and qid not in have:
                    await conn.execute(
                        bank_hidden.insert().values(
                            platform=platform,
                            workspace=workspace,
                            question_id=qid,
                            hidden_by=by,
                            hidden_at=at,
                        )
                    )
                    changed.append(qid)
                elif not hidden and qid in have:
                    await conn.execute(
                        bank_hidden.delete().where(
                            _ws(bank_hidden, platform, workspace),
                            bank_hidden.c.question_id == qid,
                        )
                    )
                    changed.append(qid)
        return changed

    # ------------------------------------------------------------ proposals

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
        """Store a pending proposal of a question (its YAML text) for a workspace; return its id."""
        stmt = (
            question_proposals.insert()
            .values(
                platform=platform,
                workspace=workspace,
                question_id=question_id,
                body=body,
                author=author,
                channel=channel,
                created_at=at,
                status=ProposalStatus.PENDING.value,
            )
            .returning(question_proposals.c.id)
        )
        async with self.write() as conn:
            return int((await conn.execute(stmt)).scalar_one())

    async def proposals(
        self, platform: str, workspace: str, status: ProposalStatus | None = ProposalStatus.PENDING
    ) -> list[Proposal]:
        """Return the workspace's proposals in this status (every one with None), oldest first."""
        query = sa.select(question_proposals).where(_ws(question_proposals, platform, workspace))
        if status is not None:
            query = query.where(question_proposals.c.status == status.value)
        query = query.order_by(question_proposals.c.id)
        async with self.read() as conn:
            return [_proposal(r) for r in await conn.execute(query)]

    async def proposal(self, proposal_id: int) -> Proposal | None:
        """Return one proposal, or None."""
        query = sa.select(question_proposals).where(question_proposals.c.id == proposal_id)
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else _proposal(row)

    async def approve_proposal(
        self, proposal_id: int, *, by: str, at: datetime, body: str | None = None
    ) -> Published:
        """Approve a pending proposal: its question (or ``body``, an admin's edit of it) is
        stored as the question's next revision, live in the next round of every replica.

        Decided once across replicas: the proposal leaves pending in the transaction that stores
        the revision, and a second decision (here or on another replica) raises
        ``AlreadyDecided`` and changes nothing. An unknown id raises ``UnknownProposal``.
        """
        async with self.write() as conn:
            row = await self._claim_decision(
                conn,
                proposal_id,
                status=ProposalStatus.APPROVED,
                decided_by=by,
                decided_at=at,
                edited=body is not None,
            )
            text = row.body if body is None else body
            author = row.author if body is None else by
            await self._bump(conn, row.platform, row.workspace)
            written = await self._write_revisions(
                conn, row.platform, row.workspace, [(row.question_id, text)], author, at
            )
            if written:
                revision = written[0][1]
            else:  # the text is the question's latest revision already
                revision = int(
                    (
                        await conn.execute(
                            sa.select(sa.func.max(bank_revisions.c.revision)).where(
                                _ws(bank_revisions, row.platform, row.workspace),
                                bank_revisions.c.question_id == row.question_id,
                            )
                        )
                    ).scalar_one()
                )
            await conn.execute(
                question_proposals.update()
                .where(question_proposals.c.id == proposal_id)
                .values(revision=revision)
            )
        return Published(question_id=row.question_id, revision=revision)

    async def reject_proposal(
        self, proposal_id: int, *, by: str, at: datetime, reason: str | None = None
    ) -> Proposal:
        """Reject a pending proposal (with a reason or none); return it as decided.

        Decided once across replicas, as ``approve_proposal``: a second decision raises
        ``AlreadyDecided`` and changes nothing; an unknown id raises ``UnknownProposal``.
        """
        async with self.write() as conn:
            await self._claim_decision(
                conn,
                proposal_id,
                status=ProposalStatus.REJECTED,
                decided_by=by,
                decided_at=at,
                reason=reason,
            )
            row = (
                await conn.execute(
                    sa.select(question_proposals).where(question_proposals.c.id == proposal_id)
                )
            ).one()
        return _proposal(row)

    async def _claim_decision(
        self, conn: AsyncConnection, proposal_id: int, *, status: ProposalStatus, **values: Any
    ) -> Any:
        """Move a proposal from pending to ``status`` in the caller's transaction; return its
        row. The update names pending in its condition, so of two deciders (on PostgreSQL the
        second waits for the first's row lock, then finds the row decided) one wins."""
        won = await conn.execute(
            question_proposals.update()
            .where(
                question_proposals.c.id == proposal_id,
                question_proposals.c.status == ProposalStatus.PENDING.value,
            )
            .values(status=status.value, **values)
        )
        row = (
            await conn.execute(
                sa.select(question_proposals).where(question_proposals.c.id == proposal_id)
            )
        ).first()
        if row is None:
            raise UnknownProposal(proposal_id)
        if won.rowcount != 1:
            raise AlreadyDecided(_proposal(row))
        return row

    async def claim_new_proposals(
        self, platform: str, at: datetime, limit: int = 100
    ) -> list[Proposal]:
        """Claim pending proposals whose workspace's admins were not told yet; each is claimed by
        one call on one replica only (its ``admins_told_at`` is set as it is claimed)."""
        return await self._claim(
            platform,
            at,
            limit,
            sa.and_(
                question_proposals.c.status == ProposalStatus.PENDING.value,
                question_proposals.c.admins_told_at.is_(None),
            ),
            "admins_told_at",
        )

    async def claim_decided_proposals(
        self, platform: str, at: datetime, limit: int = 100
    ) -> list[Proposal]:
        """Claim decided proposals whose author was not told yet (those made in a channel);
        each is claimed by one call on one replica only (``author_told_at`` is set)."""
        return await self._claim(
            platform,
            at,
            limit,
            sa.and_(
                question_proposals.c.status != ProposalStatus.PENDING.value,
                question_proposals.c.author_told_at.is_(None),
                question_proposals.c.channel.is_not(None),
            ),
            "author_told_at",
        )

    async def _claim(
        self, platform: str, at: datetime, limit: int, due: sa.ColumnElement[bool], column: str
    ) -> list[Proposal]:
        pending = (
            sa.select(question_proposals)
            .where(question_proposals.c.platform == platform, due)
            .order_by(question_proposals.c.id)
            .limit(limit)
        )
        told = question_proposals.c[column]
        claimed = []
        async with self.write() as conn:
            for row in (await conn.execute(pending)).all():
                won = await conn.execute(
                    question_proposals.update()
                    .where(question_proposals.c.id == row.id, told.is_(None))
                    .values({column: at})
                )
                if won.rowcount == 1:
                    claimed.append(_proposal(row))
        return claimed

    async def _bump(self, conn: AsyncConnection, platform: str, workspace: str) -> None:
        """Raise the workspace bank's generation (and lock its row until the commit)."""
        stmt = self._insert(bank_generations).values(
            platform=platform, workspace=workspace, generation=1
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["platform", "workspace"],
            set_={"generation": bank_generations.c.generation + 1},
        )
        await conn.execute(stmt)
