"""Slack's App Home tab: the person's own page (the chat core's ``home``), published when opened.

Its buttons are the bot's buttons like any other (``Listeners.press``), answered in the app's
direct messages.
"""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import render
from bot.adapters.slack.handlers import PLATFORM, Background, Body, SlackPort, workspace_admin
from bot.chat import Chat
from bot.engine.model import Place

log = logging.getLogger(__name__)


class HomeTab:
    """The App Home tab, published when the person opens it."""

    def __init__(self, chat: Chat, port: SlackPort, background: Background) -> None:
        self.chat = chat
        self.port = port
        self.background = background

    def register(self, app: AsyncApp) -> None:
        """Listen for the Home tab opening."""
        app.event("app_home_opened")(self.opened)

    async def opened(self, event: Body, body: Body, client: AsyncWebClient) -> None:
        """Publish the person's Home tab (Slack sends this event for the Messages tab too).

        The event is acknowledged at once; the tab is published in the background.
        """
        user, team = event.get("user"), body.get("team_id")
        if event.get("tab") != "home" or not isinstance(user, str) or not isinstance(team, str):
            return
        self.background.spawn(self._publish(client, team, user))

    async def _publish(self, client: AsyncWebClient, team: str, user: str) -> None:
        panels = await self.chat.home(
            Place(PLATFORM, team, user), user, lambda: self._slack_admin(client, team, user)
        )
        await client.views_publish(user_id=user, view=render.home_view(panels))

    async def _slack_admin(self, client: AsyncWebClient, team: str, user: str) -> bool:
        where = {"platform": PLATFORM, "workspace": team, "user": user}
        try:
            return await workspace_admin(client, user, where)
        except SlackApiError as exc:
            # A tab that cannot tell who is an admin still shows the person their page.
            log.info("users.info refused (%s): not an admin", exc.response.get("error"))
            return False
