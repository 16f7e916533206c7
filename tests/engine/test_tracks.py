"""Learning tracks' rules as pure functions: what counts, who completed what, what comes next."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.engine.model import Place
from bot.engine.tracks import (
    CardMark,
    Track,
    TrackRun,
    Unit,
    UnitDone,
    completed,
    counts,
    next_question,
    summarise,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
TRACK = Track(
    "t", "Three days", (Unit(("a", "b"), "first"), Unit(("c",), "second"), Unit(("d",), "third"))
)


@pytest.mark.parametrize(
    ("rating", "answered", "due_before", "expected", "why"),
    [
        (3, T0, None, True, "a first answer, right"),
        (1, T0, None, False, "a first answer, wrong"),
        (2, T0, T0 - DAY, True, "right after the due date (Hard still counts)"),
        (4, T0, T0, True, "right on the due date"),
        (3, T0, T0 + DAY, False, "right, but before the card was due"),
        (1, T0, T0 - DAY, False, "wrong when due"),
        (None, T0, None, False, "a card moved from the old ladder, never rated"),
        (3, None, None, False, "never answered"),
    ],
)
def test_what_counts_for_a_unit(
    rating: int | None,
    answered: datetime | None,
    due_before: datetime | None,
    expected: bool,
    why: str,
) -> None:
    assert counts(rating, answered, due_before) is expected, why


def mark(user: str, q: str, ok: bool, at: datetime = T0, due: datetime = T0 + DAY) -> CardMark:
    return CardMark(user, q, at, ok, due)


def test_a_unit_is_completed_when_every_card_counts_and_dated_by_the_last() -> None:
    marks = [
        mark("ada", "a", True, T0),
        mark("ada", "b", True, T0 + timedelta(hours=3)),
        mark("bob", "a", True),
        mark("bob", "b", False),
        mark("ada", "c", True, T0 + DAY),
    ]
    done = completed(TRACK, 2, marks, {})
    assert done == [
        UnitDone("ada", 0, T0 + timedelta(hours=3)),
        UnitDone("ada", 1, T0 + DAY),
    ]
    # Only opened units count, and what is recorded is not reported again.
    assert completed(TRACK, 1, marks, {}) == done[:1]
    assert completed(TRACK, 2, marks, {("ada", 0): T0}) == done[1:]


def test_the_next_question_skips_done_units_and_waits_for_cards_not_due() -> None:
    now = T0 + DAY
    # Nothing answered: the first question of the first unit.
    assert next_question(TRACK, 2, {}, [], now) == ("a", None)
    # a counts; b missed and due again: b.
    mine = {"a": mark("ada", "a", True), "b": mark("ada", "b", False, due=now)}
    assert next_question(TRACK, 2, mine, [], now) == ("b", None)
    # b missed and not due until tomorrow: nothing to ask now, c is next.
    mine["b"] = mark("ada", "b", False, due=now + DAY)
    assert next_question(TRACK, 2, mine, [], now) == ("c", None)
    # Unit 0 recorded done: its cards are not asked whatever they say now.
    assert next_question(TRACK, 1, mine, [0], now) == (None, None)
    # Every open question waits: the soonest date.
    mine["c"] = mark("ada", "c", False, due=now + 2 * DAY)
    assert next_question(TRACK, 2, mine, [], now) == (None, now + DAY)


def test_the_summary_names_who_finished_first_and_counts_each_unit() -> None:
    done = [
        UnitDone("bob", 0, T0),
        UnitDone("ada", 0, T0),
        UnitDone("ada", 1, T0 + DAY),
        UnitDone("ada", 2, T0 + 2 * DAY),
        UnitDone("bob", 1, T0 + DAY),
        UnitDone("bob", 2, T0 + DAY + timedelta(hours=1)),
        UnitDone("cy", 2, T0),
    ]
    summary = summarise(TRACK, done)
    assert summary.finishers == ("bob", "ada")  # bob finished his last unit first
    assert summary.per_unit == (2, 2, 3)
    assert summary.people == 3 and summary.units == 3


def test_a_run_is_finished_once_it_has_an_end() -> None:
    run = TrackRun(Place("slack", "T", "C"), "t", T0, "U1")
    assert not run.finished
    assert TrackRun(Place("slack", "T", "C"), "t", T0, "U1", finished_at=T0).finished
