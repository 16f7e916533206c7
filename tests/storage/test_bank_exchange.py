"""Export then import gives the same workspace bank, through the store (a property test).

``tests/bank/test_exchange.py`` holds the formats alone to the round trip; here the questions go
the whole way ``quizbot questions import`` and ``export`` take them: checked for the workspace,
stored as revisions, read back as the workspace's bank, exported, and imported into a second
workspace, in YAML and in CSV, on a SQLite file and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
from dataclasses import replace
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, assume, given, settings

from bot.bank.exchange import Format, export, parse
from bot.bank.loader import load_bank
from bot.bank.workspace import WorkspaceBanks, markup_problems
from bot.cli.questions import save_checked
from bot.engine.model import Question
from bot.storage import SqlStore, open_store
from tests.bank.test_exchange import banks
from tests.conformance.drivers import BANK

BASE = load_bank([BANK])
WORKSPACES = itertools.count()


def plain(questions: list[Question]) -> list[Question]:
    """Return questions as the format holds them: no file, line or revision, ordered by id."""
    return sorted(
        (replace(q, source="", line=0, revision=None) for q in questions), key=lambda q: q.id
    )


async def import_text(store: SqlStore, workspace: str, text: str, fmt: Format) -> int:
    """Import a file's text into a workspace as ``quizbot questions import`` does."""
    banks = WorkspaceBanks(BASE, store)
    found, problems = parse(text, f"bank.{fmt.value}", fmt)
    rt = SimpleNamespace(store=store)
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        status: int = await save_checked(
            rt,
            "slack",
            workspace,
            found,
            problems,
            await banks.bank_for("slack", workspace),
            new_only=False,
            author="cli",
            allow_warnings=True,  # generated questions draw lint warnings; the test is the trip
            dry_run=False,
        )
    assert status == 0, quiet.getvalue()
    return sum(line.count(": revision ") for line in quiet.getvalue().splitlines())


async def exported(store: SqlStore, workspace: str, fmt: Format) -> tuple[list[Question], str]:
    """Return a workspace's own questions and their export, as ``quizbot questions export``."""
    bank = await WorkspaceBanks(BASE, store).bank_for("slack", workspace)
    own = [q for q in bank if q.revision is not None]
    return own, export(own, fmt)


async def round_trip(store: SqlStore, bank: list[Question], fmt: Format) -> None:
    first, second = f"T{next(WORKSPACES)}", f"T{next(WORKSPACES)}"
    text = export(bank, fmt)
    assert await import_text(store, first, text, fmt) == len(bank)
    own, out = await exported(store, first, fmt)
    assert plain(own) == plain(bank)
    assert all(q.revision == 1 for q in own)
    # The export imports into another workspace as the same bank, and exports the same text.
    assert await import_text(store, second, out, fmt) == len(bank)
    again, out_again = await exported(store, second, fmt)
    assert plain(again) == plain(bank) and out_again == out
    # Importing the export where it came from stores nothing: no revision is a change.
    assert await import_text(store, first, out, fmt) == 0
    assert [q.revision for q in (await exported(store, first, fmt))[0]] == [1] * len(bank)


@pytest.mark.parametrize("fmt", list(Format))
def test_export_then_import_gives_the_same_workspace_bank(database_url: str, fmt: Format) -> None:
    loop = asyncio.new_event_loop()
    store = loop.run_until_complete(open_store(database_url))
    tripped: list[int] = []

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(bank=banks())
    def trip(bank: list[Question]) -> None:
        # A workspace's question holds no chat markup: the import refuses it (tested apart).
        assume(not any(markup_problems(q) for q in bank))
        assume(not any(q.id in BASE for q in bank))
        loop.run_until_complete(round_trip(store, bank, fmt))
        tripped.append(len(bank))

    try:
        trip()
        # Most generated banks hold no markup: the round trip ran on many, not a handful.
        assert len(tripped) >= 15, tripped
    finally:
        loop.run_until_complete(store.close())
        loop.close()
