"""FSRS cards: the rating rule, the library's own states, and the old ladder's migration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Card, Rating, Scheduler
from hypothesis import given
from hypothesis import strategies as st

from bot.engine.learning import (
    CardKey,
    Confidence,
    Grade,
    Memory,
    Review,
    Study,
    from_ladder,
    is_due,
    new_card,
    rating_for,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
KEY = CardKey("slack", "T1", "U07ABC123", "q1")


@pytest.mark.parametrize(
    ("correct", "confidence", "seconds", "rating"),
    [
        (False, None, 3, Grade.AGAIN),
        (False, Confidence.SURE, 3, Grade.AGAIN),  # confidently wrong is still a miss
        (False, Confidence.GUESSED, 90, Grade.AGAIN),
        (True, Confidence.GUESSED, 3, Grade.HARD),  # a lucky guess is not recall
        (True, Confidence.GUESSED, 90, Grade.HARD),
        (True, Confidence.SURE, 3, Grade.EASY),
        (True, Confidence.SURE, 10, Grade.EASY),  # the quick bound is inclusive
        (True, Confidence.SURE, 11, Grade.GOOD),
        (True, Confidence.SURE, None, Grade.GOOD),
        (True, None, 3, Grade.GOOD),
        (True, None, 60, Grade.GOOD),
        (True, None, 61, Grade.HARD),  # slow recall
        (True, None, None, Grade.GOOD),
    ],
)
def test_rating_rule(correct: bool, confidence: Confidence | None, seconds, rating: Grade):
    elapsed = None if seconds is None else seconds * 1000
    assert rating_for(correct, confidence, elapsed) is rating


def scheduler(retention: float) -> Scheduler:
    """The fsrs package's scheduler as ``Memory`` runs it: no learning steps, no fuzz."""
    return Scheduler(
        desired_retention=retention,
        learning_steps=(),
        relearning_steps=(),
        enable_fuzzing=False,
    )


HISTORIES = [
    [(0, Grade.AGAIN)],
    [(0, Grade.GOOD)],
    [(0, Grade.AGAIN), (1, Grade.AGAIN), (2, Grade.GOOD), (5, Grade.GOOD), (14, Grade.EASY)],
    [(0, Grade.EASY), (9, Grade.HARD), (30, Grade.AGAIN), (31, Grade.GOOD)],
    [(0, Grade.GOOD), (0.5, Grade.GOOD), (3, Grade.AGAIN), (3.2, Grade.HARD), (60, Grade.GOOD)],
]


@pytest.mark.parametrize("history", HISTORIES)
@pytest.mark.parametrize("retention", [0.8, 0.9, 0.95])
def test_cards_equal_the_fsrs_librarys_own(history, retention: float):
    memory = Memory(retention)
    library = scheduler(retention)
    theirs = Card(card_id=7, due=T0)
    ours = new_card(KEY, T0)
    for days, grade in history:
        at = T0 + timedelta(days=days)
        theirs, _ = library.review_card(theirs, Rating(int(grade)), at)
        ours = Study(
            KEY, Review(at=at, correct=grade is not Grade.AGAIN, rating=grade), memory
        ).apply(ours)
        assert (ours.state, ours.stability, ours.difficulty, ours.due_at, ours.last_review) == (
            theirs.state.value,
            theirs.stability,
            theirs.difficulty,
            theirs.due,
            theirs.last_review,
        )
    replayed = memory.replay(
        KEY,
        [
            Review(at=T0 + timedelta(days=d), correct=g is not Grade.AGAIN, rating=g)
            for d, g in history
        ],
    )
    assert replayed == ours
    assert ours.reps == len(history)
    assert ours.lapses == sum(g is Grade.AGAIN for _, g in history[1:])


@given(
    at=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    ),
    grade=st.sampled_from(list(Grade)),
    retention=st.floats(min_value=0.7, max_value=0.97),
)
def test_a_first_review_at_any_time_is_the_librarys_own(at, grade: Grade, retention: float):
    # The first review is the scheduler's answer for the rating, moved to the answer's time.
    memory = Memory(retention)
    library = scheduler(retention)
    for _ in range(2):  # the second time from what the first one kept
        theirs, _ = library.review_card(Card(card_id=3, due=at), Rating(int(grade)), at)
        ours = Study(KEY, Review(at=at, correct=grade is not Grade.AGAIN, rating=grade), memory)
        card = ours.apply(None)
        assert (card.state, card.stability, card.difficulty, card.due_at, card.last_review) == (
            theirs.state.value,
            theirs.stability,
            theirs.difficulty,
            theirs.due,
            theirs.last_review,
        )
        assert (card.reps, card.lapses) == (1, 0)


def test_retention_changes_the_interval():
    right = Review(at=T0, correct=True, rating=Grade.GOOD)
    short = Study(KEY, right, Memory(0.95)).apply(None)
    long = Study(KEY, right, Memory(0.8)).apply(None)
    assert short.due_at < long.due_at


@pytest.mark.parametrize("retention", [0.5, 0.69, 0.98, 1.0])
def test_retention_out_of_range_is_refused(retention: float):
    with pytest.raises(ValueError, match="desired retention"):
        Memory(retention)


def test_an_unseen_card_is_never_due_and_recalls_nothing():
    card = new_card(KEY, T0)
    assert not is_due(card, T0 + timedelta(days=400))
    assert Memory().retrievability(card, T0) == 0.0


def test_retrievability_falls_to_the_target_at_the_due_date():
    memory = Memory(0.9)
    card = Study(KEY, Review(at=T0, correct=True, rating=Grade.GOOD), memory).apply(None)
    days = (card.due_at - T0).days
    assert memory.retrievability(card, T0) == pytest.approx(1.0)
    # Whole-day intervals round the stability's ideal interval: near 0.9, never far off.
    assert memory.retrievability(card, card.due_at) == pytest.approx(0.9, abs=0.03)
    assert memory.retrievability(card, T0 + timedelta(days=days * 4)) < 0.8


@pytest.mark.parametrize(
    ("step", "right", "done", "stability", "last_days_before_due", "due_shift_days"),
    [
        (0, 0, False, 1.0, 1, 0),
        (1, 1, False, 3.0, 3, 0),
        (2, 0, False, 7.0, 7, 0),
        (3, 1, False, 21.0, 21, 0),
        (9, 0, False, 21.0, 21, 0),  # past the ladder's end: its last interval
        (0, 2, True, 2.0, 0, 2),
        (3, 2, True, 42.0, 0, 42),
    ],
)
def test_ladder_items_migrate_by_the_documented_rule(
    step, right, done, stability, last_days_before_due, due_shift_days
):
    memory = Memory()
    card = from_ladder(KEY, step=step, right_in_row=right, due_at=T0, done=done, memory=memory)
    assert card.stability == stability
    assert card.last_review == T0 - timedelta(days=last_days_before_due)
    assert card.due_at == T0 + timedelta(days=due_shift_days)
    first = Grade.GOOD if done else Grade.AGAIN
    assert card.difficulty == memory.initial_difficulty(first)
    assert card.seen and card.version == 0
    # A migrated card reviews like any other.
    after = memory.review(card, Grade.GOOD, card.due_at)
    assert after.due_at > card.due_at and after.stability is not None
    assert after.stability > card.stability
