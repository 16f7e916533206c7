"""Slack's App Home tab: a player's stats, streak and due reviews, and the week's top ten.

Built with slack_sdk's Block Kit models, which check Slack's limits when the view is built.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
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
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import render
from bot.adapters.slack.handlers import PLATFORM, Background, Body, SlackExchange, SlackPort
from bot.chat import Chat, Command, Content, ReviewAsk
from bot.engine.model import Place, PlayerSummary

log = logging.getLogger(__name__)

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


class HomeExchange(SlackExchange):
    """A click in the Home tab: acknowledged at once, answered in the app's direct messages.

    A Home tab has no channel to answer in, so what the flow says privately (a review question,
    a dashboard link) goes to the person's conversation with the app.
    """

    def __init__(self, port: SlackPort, ack: AsyncAck, body: Body) -> None:
        super().__init__(port, ack, body)
        self.channel = self.user  # chat.postMessage to a user id opens the app's DM

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Ack, then post the answer in the app's direct messages."""
        if not self.acked:
            await self.ack()
        if isinstance(content, ReviewAsk):
            message = render.review_question(content)
            await self.port.client.chat_postMessage(channel=self.user, **message.as_kwargs())
            return None
        return await self.port.post(self.user, content)


class HomeTab:
    """The App Home tab: published when opened, and its two buttons."""

    def __init__(self, chat: Chat, port: SlackPort, background: Background) -> None:
        self.chat = chat
        self.port = port
        self.background = background

    def register(self, app: AsyncApp) -> None:
        """Listen for the Home tab opening and for its buttons."""
        app.event("app_home_opened")(self.opened)
        app.action(HOME_REVIEW_ACTION)(self.review)
        app.action(HOME_DASHBOARD_ACTION)(self.dashboard)

    async def opened(self, event: Body, body: Body, client: AsyncWebClient) -> None:
        """Publish the person's Home tab (Slack sends this event for the Messages tab too).

        The event is acknowledged at once; the tab is published in the background.
        """
        user, team = event.get("user"), body.get("team_id")
        if event.get("tab") != "home" or not isinstance(user, str) or not isinstance(team, str):
            return
        self.background.spawn(self._publish(client, team, user))

    async def _publish(self, client: AsyncWebClient, team: str, user: str) -> None:
        summary = await self.chat.engine.player_summary(PLATFORM, team, user)
        admin = await self.chat.is_admin(
            Place(PLATFORM, team, user), user, lambda: self._slack_admin(client, user)
        )
        view = home_view(summary, admin=admin, dashboard=self.chat.links is not None)
        await client.views_publish(user_id=user, view=view)

    async def _slack_admin(self, client: AsyncWebClient, user: str) -> bool:
        try:
            info = (await client.users_info(user=user))["user"]
        except SlackApiError as exc:
            # Without users:read (QUIZBOT_ADMINS-only installs) only the listed admins count.
            log.info("users.info refused (%s): not an admin", exc.response.get("error"))
            return False
        return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))

    async def review(self, ack: AsyncAck, body: Body) -> BoltResponse | None:
        """Start a review: the next due question, in the app's direct messages."""
        return await self._run("review", ack, body)

    async def dashboard(self, ack: AsyncAck, body: Body) -> BoltResponse | None:
        """Send an admin a fresh dashboard link in the app's direct messages."""
        return await self._run("dashboard", ack, body)

    async def _run(self, verb: str, ack: AsyncAck, body: Body) -> BoltResponse | None:
        exchange = HomeExchange(self.port, ack, body)
        team = body.get("team", {}).get("id") or body.get("team_id")
        user = body.get("user", {}).get("id")
        if not isinstance(team, str) or not isinstance(user, str):
            await ack()
            return None
        event = Command(Place(PLATFORM, team, user), user, "quiz", text=verb)
        return await self.background.answer(
            exchange, self.chat.command(event, exchange, kind="block_actions")
        )
