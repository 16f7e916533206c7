"""Tables and versioned migrations.

Each migration is applied once, in order, inside one transaction, and recorded in
``schema_version``; on PostgreSQL an advisory lock keeps replicas that start together from racing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored as UTC and always read back timezone-aware."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Store aware UTC (naive UTC on SQLite, which has no zone type)."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    @staticmethod
    def sqlite_text(value: datetime | None) -> str | None:
        """Return the text SQLAlchemy stores for ``value`` on SQLite, by one C call.

        The same as this type's ``process_bind_param`` followed by the SQLite dialect's own
        DATETIME processor (``YYYY-MM-DD HH:MM:SS.ffffff``, microseconds always written), for
        the hot statements the store runs on the driver.
        """
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store")
        return value.astimezone(UTC).isoformat(" ", "microseconds")[:26]

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Return aware UTC."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = sa.MetaData()

schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String(200), nullable=False),
    sa.Column("applied_at", UTCDateTime, nullable=False),
)

rounds = sa.Table(
    "rounds",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("question_id", sa.String(120), nullable=False),
    sa.Column("opened_at", UTCDateTime, nullable=False),
    sa.Column("closes_at", UTCDateTime, nullable=True),
    sa.Column("closed_at", UTCDateTime, nullable=True),
    sa.Column("message_ref", sa.String(64), nullable=True),
    sa.Column("scheduled", sa.Boolean, nullable=False, default=False),
    sa.Column("slot", sa.String(40), nullable=True),
    # The reveal as an outbox: the process that closes a round holds its reveal until
    # reveal_until (reveal_owner: that store's token); revealed_at is set once the results are
    # posted. A closed round not revealed in time is claimed again by any replica.
    sa.Column("revealed_at", UTCDateTime, nullable=True),
    sa.Column("reveal_owner", sa.String(32), nullable=True),
    sa.Column("reveal_until", UTCDateTime, nullable=True),
    # The revision of a workspace's own question the round asked (bank_revisions); None for a
    # question of the bundled bank or of QUIZBOT_QUESTIONS.
    sa.Column("revision", sa.Integer, nullable=True),
    sa.Index("ix_rounds_place", "platform", "workspace", "channel", "opened_at"),
    # One open round per channel: a second /quiz next (from any replica) fails the insert.
    sa.Index(
        "uq_rounds_open_per_channel",
        "platform",
        "workspace",
        "channel",
        unique=True,
        sqlite_where=sa.text("closed_at IS NULL"),
        postgresql_where=sa.text("closed_at IS NULL"),
    ),
    sa.Index(
        "ix_rounds_due",
        "platform",
        "closes_at",
        sqlite_where=sa.text("closed_at IS NULL"),
        postgresql_where=sa.text("closed_at IS NULL"),
    ),
    sa.Index(
        "ix_rounds_unrevealed",
        "platform",
        "reveal_until",
        sqlite_where=sa.text("closed_at IS NOT NULL AND revealed_at IS NULL"),
        postgresql_where=sa.text("closed_at IS NOT NULL AND revealed_at IS NULL"),
    ),
)

answers = sa.Table(
    "answers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("round_id", sa.Integer, sa.ForeignKey("rounds.id"), nullable=False),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("choice", sa.String(1), nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
    sa.Column("points", sa.Integer, nullable=False),
    sa.Column("answered_at", UTCDateTime, nullable=False),
    sa.Column("elapsed_ms", sa.BigInteger, nullable=False),
    # The idempotency of answers lives here: one row per (round, user), whatever retries.
    sa.UniqueConstraint("round_id", "user_id", name="uq_answers_round_user"),
    sa.Index("ix_answers_scores", "platform", "workspace", "answered_at"),
    sa.Index("ix_answers_user", "platform", "workspace", "user_id"),
)

channel_settings = sa.Table(
    "channel_settings",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("allow_change", sa.Boolean, nullable=False),
    sa.Column("round_minutes", sa.Integer, nullable=True),
    sa.Column("difficulty", sa.String(16), nullable=True),  # None: mixed
    # The share of untagged rounds that ask a computed question, 0-100 (None: 0).
    sa.Column("computed_percent", sa.Integer, nullable=True),
)

# A channel's daily question. Slot keys are the schedule's local dates.
schedules = sa.Table(
    "schedules",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("hour", sa.Integer, nullable=False),
    sa.Column("minute", sa.Integer, nullable=False),
    sa.Column("zone", sa.String(64), nullable=False),
    sa.Column("days", sa.String(16), nullable=False),
    sa.Column("tag", sa.String(64), nullable=True),
    sa.Column("digest_weekday", sa.Integer, nullable=True),
    sa.Column("close_minutes", sa.Integer, nullable=True),
    sa.Column("since", UTCDateTime, nullable=False),
    sa.Column("set_by", sa.String(64), nullable=False),
    # When the schedule next needs a tick: its next post or digest, or at once after a change.
    sa.Column("due_at", UTCDateTime, nullable=True),
    # The channel's place in its workspace (0, 1, ...): due channels are taken turn by turn, so
    # every workspace's first channel goes before any workspace's second.
    sa.Column("turn", sa.Integer, nullable=True),
    # The replica working on the due schedule, until when (it renews while it works).
    sa.Column("lease_owner", sa.String(64), nullable=True),
    sa.Column("lease_until", UTCDateTime, nullable=True),
    # A tick reads only due schedules, in the order it serves them, through this index alone.
    sa.Index("ix_schedules_due", "platform", "due_at", "turn", "workspace", "channel"),
)

slot_claims = sa.Table(
    "slot_claims",
    metadata,
    # Exactly-once posting lives here: one row per (channel, kind, slot), whichever replica wins.
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), primary_key=True),
    sa.Column("slot", sa.String(40), primary_key=True),
    sa.Column("slot_at", UTCDateTime, nullable=False),
    sa.Column("claimant", sa.String(64), nullable=False),
    sa.Column("claimed_at", UTCDateTime, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=True),
    sa.Column("round_id", sa.Integer, nullable=True),
)

# The old review ladder's tables: created by migration 2, replaced by the cards
# (``_ladder_to_cards``). They live in their own MetaData, so that ``metadata`` lists only the
# tables in use.
retired = sa.MetaData()

review_items = sa.Table(
    "review_items",
    retired,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.String(64), primary_key=True),
    sa.Column("question_id", sa.String(120), primary_key=True),
    sa.Column("step", sa.Integer, nullable=False),
    sa.Column("right_in_row", sa.Integer, nullable=False),
    sa.Column("due_at", UTCDateTime, nullable=False),
    sa.Column("done", sa.Boolean, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Index("ix_review_items_due", "platform", "workspace", "user_id", "done", "due_at"),
)

# Review answers never count towards scores, so they stay out of the answers table.
review_answers = sa.Table(
    "review_answers",
    retired,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("question_id", sa.String(120), nullable=False),
    sa.Column("choice", sa.String(1), nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
    sa.Column("answered_at", UTCDateTime, nullable=False),
    sa.Index("ix_review_answers_user", "platform", "workspace", "user_id", "answered_at"),
)

# Each person's FSRS card for each question (bot/engine/learning.py): its memory state, and
# when it is due again. ``version`` guards the read-modify-write of every answer. The ``p_``
# columns keep the state the latest review started from, and ``rating`` and ``confidence`` what
# it was rated, so that a confidence given after an answer can re-rate it.
cards = sa.Table(
    "cards",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.String(64), primary_key=True),
    sa.Column("question_id", sa.String(120), primary_key=True),
    sa.Column("state", sa.Integer, nullable=False),
    sa.Column("stability", sa.Float, nullable=True),
    sa.Column("difficulty", sa.Float, nullable=True),
    sa.Column("due_at", UTCDateTime, nullable=False),
    sa.Column("last_review", UTCDateTime, nullable=True),
    sa.Column("reps", sa.Integer, nullable=False),
    sa.Column("lapses", sa.Integer, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("rating", sa.Integer, nullable=True),
    sa.Column("confidence", sa.String(16), nullable=True),
    sa.Column("p_state", sa.Integer, nullable=True),
    sa.Column("p_stability", sa.Float, nullable=True),
    sa.Column("p_difficulty", sa.Float, nullable=True),
    sa.Column("p_due_at", UTCDateTime, nullable=True),
    sa.Column("p_last_review", UTCDateTime, nullable=True),
    sa.Column("p_lapses", sa.Integer, nullable=True),
    # A person's cards are read through the primary key's prefix (platform, workspace, user):
    # no second index for every answer to keep up.
)

# Settings that hold for a whole workspace or server.
workspace_settings = sa.Table(
    "workspace_settings",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("retention", sa.Float, nullable=True),  # FSRS's desired retention; None: default
    # Whose questions written in chat wait for an admin: "everyone", or "others" (None: others).
    sa.Column("review", sa.String(16), nullable=True),
)

# Answers given outside rounds (review, practice), which never count towards scores; round
# answers are in ``answers``.
card_reviews = sa.Table(
    "card_reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("question_id", sa.String(120), nullable=False),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("choice", sa.String(1), nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
    sa.Column("rating", sa.Integer, nullable=False),
    sa.Column("elapsed_ms", sa.BigInteger, nullable=True),
    sa.Column("answered_at", UTCDateTime, nullable=False),
    sa.Index("ix_card_reviews_user", "platform", "workspace", "user_id", "answered_at"),
)

# Learning tracks run in channels (bot/engine/tracks.py): one running track per channel, each
# scheduled post opening its next unit; ``opened`` counts the units opened so far.
track_runs = sa.Table(
    "track_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("track", sa.String(120), nullable=False),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("started_by", sa.String(64), nullable=False),
    sa.Column("opened", sa.Integer, nullable=False),
    sa.Column("last_slot", sa.String(40), nullable=True),
    sa.Column("finished_at", UTCDateTime, nullable=True),
    sa.Index("ix_track_runs_place", "platform", "workspace", "channel", "id"),
    # One running track per channel: a second start (from any replica) fails the insert.
    sa.Index(
        "uq_track_runs_running",
        "platform",
        "workspace",
        "channel",
        unique=True,
        sqlite_where=sa.text("finished_at IS NULL"),
        postgresql_where=sa.text("finished_at IS NULL"),
    ),
)

# The units each person completed in a track run, recorded once, dated by the answer that
# completed them.
track_units = sa.Table(
    "track_units",
    metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey("track_runs.id"), primary_key=True),
    sa.Column("user_id", sa.String(64), primary_key=True),
    sa.Column("unit", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("done_at", UTCDateTime, nullable=False),
)

# An app installed into many workspaces through an OAuth flow (Slack's today): one row per
# installer and one (user_id "") for the workspace's latest installation, keyed as the
# platform's installation names them (an enterprise, a workspace, a user). ``data`` holds the
# installation as JSON, bot token included, so this table deserves the database's access
# controls.
installations = sa.Table(
    "installations",
    metadata,
    sa.Column("enterprise_id", sa.String(32), primary_key=True),
    sa.Column("team_id", sa.String(32), primary_key=True),
    sa.Column("user_id", sa.String(32), primary_key=True),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("installed_at", UTCDateTime, nullable=False),
)

# The nonces of signed OAuth states already used (``InstallationSql.use_state``): a state is
# accepted once, on any replica. Issuing a state writes nothing here.
oauth_states = sa.Table(
    "oauth_states",
    metadata,
    sa.Column("state", sa.String(64), primary_key=True),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)

# The same two tables as migration 3 made them, under Slack's name, until migration 24 renamed
# them: retired, as the review ladder's are.
slack_installations = installations.to_metadata(retired, name="slack_installations")
slack_oauth_states = oauth_states.to_metadata(retired, name="slack_oauth_states")


# Requests every replica has seen, each until it expires: a replayed signed Slack request, or
# a redelivered event, is recognised by whichever replica it reaches.
request_claims = sa.Table(
    "request_claims",
    metadata,
    sa.Column("request_key", sa.String(200), primary_key=True),
    sa.Column("expires_at", UTCDateTime, nullable=False),
    # Which claim wrote the row, so a claim whose reply was lost recognises its own.
    sa.Column("claimant", sa.String(32), nullable=False),
    sa.Index("ix_request_claims_expiry", "expires_at"),
)

# Dashboard links already opened: a link works once, on whichever replica opens it first.
dashboard_links = sa.Table(
    "dashboard_links",
    metadata,
    sa.Column("nonce", sa.String(64), primary_key=True),
    sa.Column("expires_at", UTCDateTime, nullable=False),
    # Which open recorded it, so an open whose commit reply was lost recognises its own row.
    sa.Column("claimant", sa.String(32), nullable=True),
)

# Dashboard sessions a workspace ended (``quizbot dashboard revoke``): every session of the
# workspace issued before ``revoked_at`` is refused.
dashboard_revocations = sa.Table(
    "dashboard_revocations",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("revoked_at", UTCDateTime, nullable=False),
)

# What people, channels and workspaces are called on their platform, and when that was learnt.
# ``kind`` is "user", "channel" or "workspace"; a workspace's own row has id = workspace.
display_names = sa.Table(
    "display_names",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), primary_key=True),
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("fetched_at", UTCDateTime, nullable=False),
)


# Where to reach a conversation unprompted (a daily post, a timer's reveal): platforms that
# post only into conversations they have heard from (Microsoft Teams) keep its reference here.
conversation_references = sa.Table(
    "conversation_references",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(200), primary_key=True),
    sa.Column("service_url", sa.String(500), nullable=False),
    sa.Column("reference", sa.Text, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)


# A workspace's own questions (docs/questions.md#workspace-banks): every edit is a new row, the
# question as its YAML text, numbered 1, 2, ... per (workspace, question id). The latest
# revision of each is in the workspace's bank; rounds name the revision they asked.
bank_revisions = sa.Table(
    "bank_revisions",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("question_id", sa.String(120), primary_key=True),
    sa.Column("revision", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("author", sa.String(64), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)

# Questions of the bundled bank (or QUIZBOT_QUESTIONS) a workspace keeps out of its rounds.
bank_hidden = sa.Table(
    "bank_hidden",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("question_id", sa.String(120), primary_key=True),
    sa.Column("hidden_by", sa.String(64), nullable=False),
    sa.Column("hidden_at", UTCDateTime, nullable=False),
)

# One number per workspace, raised in the transaction of every change to its bank: a replica
# compares it with the one its copy was built at before each round, and rebuilds on a change.
bank_generations = sa.Table(
    "bank_generations",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("generation", sa.Integer, nullable=False),
)


# Chart images a platform serves by URL because they are too large to send in a message
# (Teams' cards), shared by every replica and kept across restarts.
chart_images = sa.Table(
    "chart_images",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("png", sa.LargeBinary, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)


# Players' reports of a problem with a question ("Report a problem", /quiz flag): open until
# a new revision of the question resolves them. A question with enough open reports leaves its
# workspace's rounds (bot.bank.workspace). One open report per person and question.
question_flags = sa.Table(
    "question_flags",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("question_id", sa.String(120), nullable=False),
    sa.Column("revision", sa.Integer, nullable=True),  # the revision asked; None: the files'
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("reason", sa.String(16), nullable=False),
    sa.Column("note", sa.String(500), nullable=True),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("resolved_at", UTCDateTime, nullable=True),
    sa.Column("resolved_revision", sa.Integer, nullable=True),
    # Where the report was made, to tell the reporter there once a revision resolves it, and
    # when they were told (set by the one replica that claims the telling).
    sa.Column("channel", sa.String(64), nullable=True),
    sa.Column("notified_at", UTCDateTime, nullable=True),
    sa.Index("ix_question_flags_open", "platform", "workspace", "question_id"),
    sa.Index(
        "uq_question_flags_open",
        "platform",
        "workspace",
        "question_id",
        "user_id",
        unique=True,
        sqlite_where=sa.text("resolved_at IS NULL"),
        postgresql_where=sa.text("resolved_at IS NULL"),
    ),
)


# The computed questions each workspace asked, as asked (bot.engine.instances): a round's
# ``template#seed`` reads its question here, so a changed template or estimator changes no
# question already asked.
computed_instances = sa.Table(
    "computed_instances",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("question_id", sa.String(120), primary_key=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)


# A person's private practice session (bot/engine/practice.py): at most one per workspace.
# ``asked`` and ``owed`` are question ids separated by spaces; ``current`` the question waiting
# for an answer, shown at ``asked_at``. ``version`` guards each step.
practice_sessions = sa.Table(
    "practice_sessions",
    metadata,
    sa.Column("platform", sa.String(16), primary_key=True),
    sa.Column("workspace", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.String(64), primary_key=True),
    sa.Column("topic", sa.String(120), nullable=True),
    sa.Column("tag", sa.String(64), nullable=True),
    sa.Column("target", sa.Integer, nullable=False),
    sa.Column("answered", sa.Integer, nullable=False),
    sa.Column("right_answers", sa.Integer, nullable=False),
    sa.Column("asked", sa.Text, nullable=False),
    sa.Column("owed", sa.Text, nullable=False),
    sa.Column("current", sa.String(120), nullable=True),
    sa.Column("current_kind", sa.String(8), nullable=True),
    sa.Column("asked_at", UTCDateTime, nullable=True),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
)


# Questions proposed for a workspace's bank (docs/questions.md#proposals): a question written by
# someone who is not an admin (or by anyone, when the workspace reviews everyone's) waits here,
# pending, until an admin approves it (a new revision in bank_revisions, named by ``revision``)
# or rejects it. ``status`` moves from pending once, on whichever replica decides first.
# ``admins_told_at`` and ``author_told_at`` are set by the one replica that claims the telling.
question_proposals = sa.Table(
    "question_proposals",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform", sa.String(16), nullable=False),
    sa.Column("workspace", sa.String(64), nullable=False),
    sa.Column("question_id", sa.String(120), nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # the question's YAML text, as proposed
    sa.Column("author", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=True),  # where it was proposed; None: elsewhere
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # pending, approved, rejected
    sa.Column("decided_by", sa.String(64), nullable=True),
    sa.Column("decided_at", UTCDateTime, nullable=True),
    sa.Column("reason", sa.String(500), nullable=True),  # a rejection's, when one was given
    sa.Column("revision", sa.Integer, nullable=True),  # the revision approval stored
    sa.Column("edited", sa.Boolean, nullable=True),  # approved with an admin's edit
    sa.Column("admins_told_at", UTCDateTime, nullable=True),
    sa.Column("author_told_at", UTCDateTime, nullable=True),
    sa.Index("ix_question_proposals_status", "platform", "workspace", "status", "id"),
)


def _create(*tables: sa.Table) -> Callable[[Connection], None]:
    def run(conn: Connection) -> None:
        for table in tables:
            table.create(conn, checkfirst=True)

    return run


def _add_column(table: sa.Table, name: str) -> Callable[[Connection], None]:
    """Add a column of ``table`` (as declared above) to a database created before it."""

    def run(conn: Connection) -> None:
        have = {c["name"] for c in sa.inspect(conn).get_columns(table.name)}
        if name in have:  # a database created from the current tables already has it
            return
        column = table.c[name]
        kind = column.type.compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE {table.name} ADD COLUMN {name} {kind}"))

    return run


def _reveal_outbox(conn: Connection) -> None:
    """Give rounds their reveal claim; every round closed before this counts as revealed."""
    for name in ("revealed_at", "reveal_owner", "reveal_until"):
        _add_column(rounds, name)(conn)
    conn.execute(
        rounds.update()
        .where(rounds.c.closed_at.is_not(None), rounds.c.revealed_at.is_(None))
        .values(revealed_at=rounds.c.closed_at)
    )
    for index in rounds.indexes:
        if index.name == "ix_rounds_unrevealed":
            index.create(conn, checkfirst=True)


def _schedules_due(conn: Connection) -> None:
    """Give schedules their next due time, turn and lease; every schedule is due at once."""
    for name in ("due_at", "turn", "lease_owner", "lease_until"):
        _add_column(schedules, name)(conn)
    for index in schedules.indexes:
        index.create(conn, checkfirst=True)
    # The first tick works out each schedule's real next time; until then it is due.
    conn.execute(
        schedules.update().where(schedules.c.due_at.is_(None)).values(due_at=schedules.c.since)
    )
    turns = sa.select(
        schedules.c.platform,
        schedules.c.workspace,
        schedules.c.channel,
        (
            sa.func.row_number().over(
                partition_by=(schedules.c.platform, schedules.c.workspace),
                order_by=schedules.c.channel,
            )
            - 1
        ).label("turn"),
    ).subquery()
    rows = conn.execute(sa.select(turns)).all()
    for row in rows:
        conn.execute(
            schedules.update()
            .where(
                schedules.c.platform == row.platform,
                schedules.c.workspace == row.workspace,
                schedules.c.channel == row.channel,
            )
            .values(turn=row.turn)
        )


def _ladder_to_cards(conn: Connection) -> None:
    """Turn the old ladder's review items into FSRS cards, and its review answers into the
    cards' history (``learning.from_ladder`` has the rule); then drop the old tables."""
    from bot.engine import learning

    metadata.create_all(conn, tables=[cards, card_reviews])
    memory = learning.Memory()
    rows = []
    for item in conn.execute(review_items.select()):
        key = learning.CardKey(item.platform, item.workspace, item.user_id, item.question_id)
        card = learning.from_ladder(
            key,
            step=item.step,
            right_in_row=item.right_in_row,
            due_at=item.due_at,
            done=bool(item.done),
            memory=memory,
        )
        rows.append(
            {
                "platform": key.platform,
                "workspace": key.workspace,
                "user_id": key.user,
                "question_id": key.question_id,
                "state": card.state,
                "stability": card.stability,
                "difficulty": card.difficulty,
                "due_at": card.due_at,
                "last_review": card.last_review,
                "reps": card.reps,
                "lapses": card.lapses,
                "version": 1,
            }
        )
    if rows:
        conn.execute(cards.insert(), rows)
    history = [
        {
            "platform": a.platform,
            "workspace": a.workspace,
            "user_id": a.user_id,
            "question_id": a.question_id,
            "source": learning.Source.REVIEW.value,
            "choice": a.choice,
            "correct": bool(a.correct),
            "rating": int(learning.Grade.GOOD if a.correct else learning.Grade.AGAIN),
            "elapsed_ms": None,
            "answered_at": a.answered_at,
        }
        for a in conn.execute(review_answers.select())
    ]
    if history:
        conn.execute(card_reviews.insert(), history)
    review_answers.drop(conn)
    review_items.drop(conn)


def _workspace_banks(conn: Connection) -> None:
    """Create the workspace banks' tables and give rounds the revision they asked."""
    _create(bank_revisions, bank_hidden, bank_generations)(conn)
    _add_column(rounds, "revision")(conn)


def _flags_told(conn: Connection) -> None:
    """Give reports the channel they were made in and the time their reporter was told."""
    for name in ("channel", "notified_at"):
        _add_column(question_flags, name)(conn)


def _proposals(conn: Connection) -> None:
    """Create the proposals' table and give workspace settings whose questions wait for review."""
    _create(question_proposals)(conn)
    _add_column(workspace_settings, "review")(conn)


def _rename(*renames: tuple[sa.Table, sa.Table]) -> Callable[[Connection], None]:
    """Rename tables (each ``old`` to ``new``), and on PostgreSQL their primary keys too."""

    def run(conn: Connection) -> None:
        have = set(sa.inspect(conn).get_table_names())
        for old, new in renames:
            if old.name not in have:
                continue
            conn.execute(sa.text(f"ALTER TABLE {old.name} RENAME TO {new.name}"))
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text(f"ALTER INDEX {old.name}_pkey RENAME TO {new.name}_pkey"))

    return run


Migration = tuple[int, str, Callable[[Connection], None]]

MIGRATIONS: list[Migration] = [
    (1, "rounds, answers, channel settings", _create(rounds, answers, channel_settings)),
    (
        2,
        "schedules, slot claims, review items and answers",
        _create(schedules, slot_claims, review_items, review_answers),
    ),
    (
        3,
        "Slack installations and OAuth states",
        _create(slack_installations, slack_oauth_states),
    ),
    (4, "request claims shared by replicas", _create(request_claims)),
    (5, "channel difficulty mode", _add_column(channel_settings, "difficulty")),
    (6, "dashboard link claims", _create(dashboard_links)),
    (7, "FSRS cards and their reviews, from the review ladder", _ladder_to_cards),
    (8, "dashboard session revocations", _create(dashboard_revocations)),
    (9, "dashboard link claimants", _add_column(dashboard_links, "claimant")),
    (10, "schedules' next due time, turn and lease", _schedules_due),
    (11, "workspace settings", _create(workspace_settings)),
    (12, "display names of people, channels and workspaces", _create(display_names)),
    (
        13,
        "reveals as an outbox: who holds a round's reveal, until when, and when it was posted",
        _reveal_outbox,
    ),
    (14, "channel share of computed questions", _add_column(channel_settings, "computed_percent")),
    (
        15,
        "conversation references for messages nobody asked for (Teams)",
        _create(conversation_references),
    ),
    (
        16,
        "learning tracks run in channels, and the units people completed",
        _create(track_runs, track_units),
    ),
    (
        17,
        "workspace banks: question revisions, hidden questions, rounds' revision",
        _workspace_banks,
    ),
    (18, "chart images served by URL (Teams cards)", _create(chart_images)),
    (19, "players' reports of problems with questions", _create(question_flags)),
    (20, "reports' channel, and when the reporter was told of the fix", _flags_told),
    (21, "computed questions as each workspace asked them", _create(computed_instances)),
    (22, "practice sessions", _create(practice_sessions)),
    (23, "question proposals, and whose questions a workspace reviews", _proposals),
    (
        24,
        "installations and OAuth states named for what they are, not for Slack",
        _rename((slack_installations, installations), (slack_oauth_states, oauth_states)),
    ),
]


def latest_version() -> int:
    """Return the version the code expects."""
    return MIGRATIONS[-1][0]


def upgrade(conn: Connection, now: datetime) -> list[int]:
    """Apply every migration not yet recorded; return the versions applied."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(727274)"))
    metadata.create_all(conn, tables=[schema_version])
    done = set(conn.execute(sa.select(schema_version.c.version)).scalars())
    applied = []
    for version, description, step in MIGRATIONS:
        if version in done:
            continue
        step(conn)
        conn.execute(
            schema_version.insert().values(version=version, description=description, applied_at=now)
        )
        applied.append(version)
    return applied


def current_version(conn: Connection) -> int:
    """Return the highest applied version (0 for an empty database)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    value: Any = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
    return int(value or 0)
