"""The App Home view: the chat core's own page and the week, valid Block Kit for every player."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.adapters.slack.render import home_view as render_home
from bot.chat import words
from bot.engine.model import Leaderboard, LeaderboardEntry, Period, PlayerSummary


def summary(**kw) -> PlayerSummary:
    entries = tuple(LeaderboardEntry(i, f"U{i}", 20 - i, 5, 6) for i in range(1, 11))
    base = dict(
        user="U42",
        points=7,
        answered=9,
        correct=6,
        current_streak=3,
        best_streak=5,
        reviews_due=2,
        reviews_waiting=1,
        next_review_due=None,
        week=Leaderboard(
            Period.WEEK,
            datetime(2026, 3, 2, tzinfo=UTC),
            entries,
            LeaderboardEntry(14, "U42", 3, 1, 2),
        ),
    )
    base.update(kw)
    return PlayerSummary(**base)


DASHBOARD, START_REVIEW, PRACTICE = "quiz:dashboard", "quiz:start-review", "quiz:practice"


def home_view(s: PlayerSummary, *, dashboard: bool) -> dict:
    return render_home((words.me(s, dashboard=dashboard), words.leaderboard(s.week)))


def actions(view: dict) -> list[str]:
    found = []
    for block in view["blocks"]:
        if "accessory" in block:
            found.append(block["accessory"]["action_id"])
        for el in block.get("elements", []):
            if "action_id" in el:
                found.append(el["action_id"])
    return found


def text_of(view: dict) -> str:
    return str(view)


def test_player_with_due_reviews_gets_the_review_button():
    view = home_view(summary(), dashboard=False)
    assert view["type"] == "home"
    assert actions(view) == [PRACTICE, START_REVIEW]
    assert "3 in a row" in text_of(view) and "6 of 9 right" in text_of(view)
    assert "#14 with 3 pts." in text_of(view)
    assert text_of(view).count("pts, 5/6 right") == 10


def test_the_dashboard_button_only_when_offered():
    assert DASHBOARD in actions(home_view(summary(), dashboard=True))
    assert DASHBOARD not in actions(home_view(summary(), dashboard=False))


def test_new_player_and_empty_week():
    empty = Leaderboard(Period.WEEK, None, (), None)
    view = home_view(
        summary(
            points=0,
            answered=0,
            correct=0,
            current_streak=0,
            best_streak=0,
            reviews_due=0,
            reviews_waiting=0,
            next_review_due=datetime(2026, 3, 4, 9, 0, tzinfo=UTC),
            week=empty,
        ),
        dashboard=False,
    )
    assert actions(view) == [PRACTICE]  # practice serves new questions too
    assert "No review is due; the next falls due" in text_of(view)
    assert "Mastery: no topic begun yet" in text_of(view)
    assert "0 of 0 right" in text_of(view)
