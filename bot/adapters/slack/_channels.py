"""Join a public channel before posting a card there, so that reactions on it reach the bot.

Slack sends ``reaction_added`` only from conversations the app is a member of. The bot therefore
joins a public channel (``conversations.join``, scope ``channels:join``) before its first card
there. A private channel or a direct message cannot be joined, but a card only posts there when
the bot is in it already. Where joining fails (an install without ``channels:join``, an
archived or full channel), a card that still posts says that emoji answers cannot count.

A token without ``chat:write.public`` (the shipped manifest does not ask for it) can post only
where the bot is a member, so a card it posts proves the reactions arrive: such a workspace
skips the join, and joins only where Slack refuses a card with ``not_in_channel``. Every Web API
answer names the token's scopes (``x-oauth-scopes``); ``learn`` reads them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

# What conversations.join answers for a private channel, a DM or a group DM: a card posts
# there only when the bot is a member already, so its reactions arrive.
CANNOT_JOIN_KIND = "method_not_supported_for_channel_type"
MISSING = "missing_scope"
# How long an answer is trusted: a bot removed from a channel, or given channels:join by a
# reinstall, is noticed within this (a failed post forgets it at once).
REMEMBER_SECONDS = 3600.0
POST_PUBLIC = "chat:write.public"
SCOPES_HEADER = "x-oauth-scopes"


class Channels:
    """Which channels' reactions reach the bot, joining public ones as needed."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        remember: float = REMEMBER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.remember = remember
        self._clock = clock
        self._known: dict[tuple[str, str], tuple[bool, float]] = {}
        # Per workspace: whether its token may post where the bot is not a member.
        self._posts_anywhere: dict[str, bool] = {}

    def learn(self, workspace: str, response: Any) -> None:
        """Note from a Web API answer's headers whether the token may post without joining."""
        headers = getattr(response, "headers", None) or {}
        scopes = next((v for k, v in headers.items() if k.lower() == SCOPES_HEADER), None)
        if isinstance(scopes, str):
            granted = {s.strip() for s in scopes.split(",")}
            self._posts_anywhere[workspace] = POST_PUBLIC in granted

    def needs_join(self, workspace: str) -> bool:
        """Return whether a card in a channel not known yet must join first (see the module)."""
        return self._posts_anywhere.get(workspace, True)

    async def reactions_arrive(self, workspace: str, channel: str) -> bool:
        """Join the channel if it is public; return whether its reactions reach the bot."""
        key = (workspace, channel)
        known = self._known.get(key)
        if known is not None and self._clock() - known[1] < self.remember:
            return known[0]
        if not self.needs_join(workspace):
            # A card posted here proves membership; a refused one makes ``join`` be called.
            return True
        return await self.join(workspace, channel)

    async def join(self, workspace: str, channel: str) -> bool:
        """Join the channel (public ones); return whether its reactions reach the bot."""
        key = (workspace, channel)
        try:
            await self.client.conversations_join(channel=channel)
            arrive = True
        except SlackApiError as exc:
            data = getattr(exc.response, "data", None)
            code = str(data.get("error")) if isinstance(data, dict) else ""
            status = int(getattr(exc.response, "status_code", 0) or 0)
            if code == CANNOT_JOIN_KIND:
                arrive = True
            elif status >= 500 or status == 429:
                # Unknown for now: say nothing on the card, and ask again next time.
                return True
            else:
                arrive = False
                hint = "; add the channels:join scope and reinstall" if code == MISSING else ""
                log.warning(
                    "cannot join channel %s (%s): emoji answers on its cards will not count%s",
                    channel,
                    code or status,
                    hint,
                    extra={"workspace": workspace, "channel": channel},
                )
        except (aiohttp.ClientError, TimeoutError):
            return True
        self._known[key] = (arrive, self._clock())
        return arrive

    def forget(self, workspace: str, channel: str) -> None:
        """Ask again next time (a post there failed: the bot may have been removed)."""
        self._known.pop((workspace, channel), None)
