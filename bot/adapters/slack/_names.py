"""Names on Slack: from the request payloads, ``users.info`` and ``team.info``.

Slash commands carry ``user_name``, ``channel_name`` and ``team_domain``; button clicks carry the
user's ``username`` (or ``name``), the channel's ``name`` and the team's ``domain``. Events
(reactions) carry only ids, so a person first met there is looked up with ``users.info`` (the
``users:read`` scope the admin check already uses): their display name, else their real name.

A workspace's domain is its address (``acme-infra`` of acme-infra.slack.com), not its name:
where quizbot may ask Slack, the name comes from ``team.info`` (the ``team:read`` scope), and the
domain stands in only when Slack refuses (an app installed before that scope was added).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat.names import Key, NameBook
from bot.engine.names import NameKind

log = logging.getLogger(__name__)

Next = Callable[[], Awaitable[BoltResponse]]


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def read_names(body: dict[str, Any]) -> tuple[str, dict[Key, str], list[Key]]:
    """Return a payload's workspace id, the names it carries, and every id it names."""
    names: dict[Key, str] = {}
    seen: list[Key] = []

    def note(kind: NameKind, ident: Any, name: Any = None) -> None:
        if isinstance(ident, str) and ident:
            seen.append((kind, ident))
            if _text(name):
                names[(kind, ident)] = _text(name)

    user = body.get("user")
    channel = body.get("channel")
    team = body.get("team")
    event = body.get("event")
    workspace = (
        _text(body.get("team_id"))
        or (_text(team.get("id")) if isinstance(team, dict) else "")
        or (_text(user.get("team_id")) if isinstance(user, dict) else "")
    )
    if "user_id" in body:  # a slash command
        note(NameKind.USER, body.get("user_id"), body.get("user_name"))
        note(NameKind.CHANNEL, body.get("channel_id"), body.get("channel_name"))
        note(NameKind.WORKSPACE, workspace, body.get("team_domain"))
    if isinstance(user, dict):  # an interaction
        note(NameKind.USER, user.get("id"), user.get("username") or user.get("name"))
    if isinstance(channel, dict):
        note(NameKind.CHANNEL, channel.get("id"), channel.get("name"))
    if isinstance(team, dict):
        note(NameKind.WORKSPACE, team.get("id"), team.get("domain"))
    if isinstance(event, dict) and event.get("type") in ("reaction_added", "reaction_removed"):
        note(NameKind.USER, event.get("user"))
    return workspace, names, seen


def learner(book: NameBook) -> Callable[[AsyncBoltRequest, Next], Awaitable[BoltResponse]]:
    """Return the Bolt middleware that hands every request's names to the name book.

    Where the book may ask Slack (its lookup is ``SlackNames``), a workspace's domain is kept
    aside for that lookup and the workspace's name asked of Slack instead.
    """
    asks_slack = isinstance(book.lookup, SlackNames)
    domains = book.lookup.domains if isinstance(book.lookup, SlackNames) else {}

    async def learn_names(req: AsyncBoltRequest, next: Next) -> BoltResponse:
        body = req.body
        if isinstance(body, dict):
            workspace, names, seen = read_names(body)
            wanted = [k for k in seen if k[0] is NameKind.USER]
            if asks_slack and workspace:
                key = (NameKind.WORKSPACE, workspace)
                domain = names.pop(key, None)
                if domain is not None:
                    domains[workspace] = domain
                wanted.append(key)
            # Only people and workspaces are looked up; a channel's id alone is not.
            book.learn(workspace, names, wanted)
        return await next()

    return learn_names


class SlackNames:
    """The name book's lookup: ``users.info`` for a person, ``team.info`` for a workspace."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        # Each workspace's domain, from its requests: its name when team.info is refused.
        self.domains: dict[str, str] = {}

    async def __call__(self, workspace: str, kind: NameKind, ident: str) -> str | None:
        if kind is NameKind.USER:
            return await self._person(ident)
        if kind is NameKind.WORKSPACE:
            return await self._workspace(ident)
        return None

    async def _person(self, ident: str) -> str | None:
        try:
            response = await self.client.users_info(user=ident)
        except SlackApiError as exc:
            log.info("users.info %s: %s", ident, exc.response.get("error"))
            return None
        user = response.get("user") or {}
        profile = user.get("profile") or {}
        for name in (profile.get("display_name"), profile.get("real_name"), user.get("real_name")):
            if _text(name):
                return _text(name)
        return _text(user.get("name")) or None

    async def _workspace(self, ident: str) -> str | None:
        try:
            response = await self.client.team_info(team=ident)
        except SlackApiError as exc:
            log.info("team.info %s: %s; its domain stands in", ident, exc.response.get("error"))
            return self.domains.get(ident)
        team = response.get("team") or {}
        return _text(team.get("name")) or _text(team.get("domain")) or self.domains.get(ident)
