"""Slack's App Home tab: a player's stats, streak and due reviews, and the week's top ten.

Built with slack_sdk's Block Kit models, which check Slack's limits when the view is built.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.engine.model import PlayerSummary

HOME_REVIEW_ACTION = "quiz_home_review"
HOME_DASHBOARD_ACTION = "quiz_home_dashboard"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def home_view(summary: PlayerSummary, *, admin: bool, dashboard: bool) -> dict[str, Any]:
    """Return the Home tab's view for one player, validated, as the JSON ``views.publish`` takes."""
    s = summary
    share = f"{s.correct / s.answered:.0%}" if s.answered else "–"
    blocks: list[Block] = [
        HeaderBlock(text="Your quiz"),
        SectionBlock(
            block_id="home_stats",
            fields=[
                MarkdownTextObject(text=f"*Points*\n{s.points}"),
                MarkdownTextObject(text=f"*Right*\n{s.correct} of {s.answered} ({share})"),
                MarkdownTextObject(text=f"*Streak*\n{s.current_streak} in a row"),
                MarkdownTextObject(text=f"*Best streak*\n{s.best_streak}"),
            ],
        ),
    ]
    if s.reviews_due:
        blocks.append(
            SectionBlock(
                block_id="home_reviews",
                text=MarkdownTextObject(
                    text=f"*Reviews due:* {s.reviews_due}"
                    + (f" (and {s.reviews_waiting} waiting)" if s.reviews_waiting else "")
                ),
                accessory=ButtonElement(
                    text="Start a review",
                    action_id=HOME_REVIEW_ACTION,
                    value="start",
                    style="primary",
                ),
            )
        )
    else:
        later = (
            f" The next is due {s.next_review_due:%Y-%m-%d %H:%M} UTC." if s.next_review_due else ""
        )
        blocks.append(
            SectionBlock(
                block_id="home_reviews",
                text=MarkdownTextObject(text=f"*Reviews due:* none.{later}"),
            )
        )
    blocks.append(DividerBlock())
    blocks.append(HeaderBlock(text="This week's top ten"))
    if s.week.entries:
        lines = [
            f"{e.rank}. <@{_escape(e.user)}>  {e.points} pts · {e.correct}/{e.answered} right"
            for e in s.week.entries
        ]
        blocks.append(
            SectionBlock(block_id="home_week", text=MarkdownTextObject(text="\n".join(lines)))
        )
        me = s.week.caller
        if me is not None and me.rank > len(s.week.entries):
            blocks.append(
                ContextBlock(
                    block_id="home_week_me",
                    elements=[MarkdownTextObject(text=f"You are #{me.rank} with {me.points} pts.")],
                )
            )
    else:
        blocks.append(
            SectionBlock(
                block_id="home_week",
                text=MarkdownTextObject(text="Nobody has answered this week yet."),
            )
        )
    if admin and dashboard:
        blocks.append(DividerBlock())
        blocks.append(
            ActionsBlock(
                block_id="home_admin",
                elements=[
                    ButtonElement(
                        text="Open the team dashboard",
                        action_id=HOME_DASHBOARD_ACTION,
                        value="workspace",
                    )
                ],
            )
        )
    view = View(type="home", blocks=blocks)
    view.validate_json()
    result: dict[str, Any] = view.to_dict()
    return result
