"""Signed dashboard links and sessions: HMAC-SHA256 over who, where, what and until when.

A link carries a token valid for ``LINK_TTL`` and usable once (the nonce is claimed in the
database when the link is opened); opening it sets a session cookie valid for ``SESSION_TTL``.
Both are stateless apart from that one-use claim, so any replica that shares the secret and the
database accepts them. The two kinds sign different purposes, so a link never passes for a
session or the other way round. A session's forms carry a token of their own, an HMAC of the
session's nonce, which a form that another site makes for the browser cannot hold.

Each workspace's values are signed with its own key, derived from the secret with HKDF-SHA256
over the platform and workspace: a value signed for one workspace (a ``me`` link any member can
get, say) says nothing about another's key. The secret may list several keys, comma-separated:
the first signs, every one verifies, so it can be replaced without logging everyone out at once.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from bot.errors import QuizbotError

OPEN_PATH = "/dashboard/open"
LINK_TTL = timedelta(minutes=15)
SESSION_TTL = timedelta(hours=8)
MIN_SECRET_LENGTH = 32


class Scope(StrEnum):
    """What a link or session may see."""

    WORKSPACE = "workspace"  # every page of one workspace (admins)
    ME = "me"  # one player's own page


class Purpose(StrEnum):
    """What a signed value is for; part of the signed message."""

    LINK = "link"
    SESSION = "session"
    FORM = "form"  # a session's form token (never a link or a session)


class BadToken(QuizbotError):
    """A link or cookie that is malformed, forged, for another purpose, or expired."""

    def __init__(self, reason: str, *, expired: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.expired = expired


@dataclass(frozen=True, slots=True)
class Grant:
    """Who may see what, until when: the signed content of a link or a session."""

    platform: str
    workspace: str
    scope: Scope
    user: str
    expires: datetime
    nonce: str = ""

    def sees_workspace(self) -> bool:
        """Return whether this grant opens the workspace-wide pages."""
        return self.scope is Scope.WORKSPACE


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def secret_keys(secret: str) -> list[str]:
    """Return the keys a QUIZBOT_DASHBOARD_SECRET value lists (the first one signs)."""
    return [part.strip() for part in secret.split(",") if part.strip()]


def secret_problem(secret: str) -> str | None:
    """Return why a QUIZBOT_DASHBOARD_SECRET value is not usable, or None."""
    keys = secret_keys(secret)
    if not keys or any(len(key) < MIN_SECRET_LENGTH for key in keys):
        return (
            f"each key in it must be at least {MIN_SECRET_LENGTH} characters; make one with "
            '`python3 -c "import secrets; print(secrets.token_urlsafe(32))"`'
        )
    return None


@functools.lru_cache(maxsize=1024)
def _workspace_key(key: str, platform: str, workspace: str) -> bytes:
    """Return a workspace's own signing key, derived from one key of the secret."""
    info = f"quizbot-dashboard:{platform}:{workspace}".encode()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key.encode())


def _mac(key: bytes, purpose: Purpose, body: str) -> bytes:
    message = f"quizbot-dashboard:{purpose.value}:{body}".encode()
    return hmac.new(key, message, hashlib.sha256).digest()


def sign(secret: str, purpose: Purpose, grant: Grant) -> str:
    """Return ``body.signature``: the grant as URL-safe JSON, and its HMAC-SHA256."""
    payload = {
        "p": grant.platform,
        "w": grant.workspace,
        "s": grant.scope.value,
        "u": grant.user,
        "e": int(grant.expires.timestamp()),
        "n": grant.nonce,
    }
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    key = _workspace_key(secret_keys(secret)[0], grant.platform, grant.workspace)
    return f"{body}.{_b64(_mac(key, purpose, body))}"


def verify(secret: str, purpose: Purpose, token: str, now: datetime) -> Grant:
    """Return the grant a token carries; BadToken when it is malformed, forged or expired."""
    body, dot, signature = token.partition(".")
    # compare_digest refuses str with non-ASCII characters (a TypeError, not a refusal).
    if not dot or not body or not signature or len(token) > 2048 or not token.isascii():
        raise BadToken("malformed token")
    try:
        # The body picks the workspace key; nothing in it is believed until the MAC matches.
        payload = json.loads(_unb64(body))
        mac = _unb64(signature)
        platform, workspace = str(payload["p"]), str(payload["w"])
    except (ValueError, KeyError, TypeError) as exc:
        raise BadToken("malformed token") from exc
    if not any(
        hmac.compare_digest(mac, _mac(_workspace_key(key, platform, workspace), purpose, body))
        for key in secret_keys(secret)
    ):
        raise BadToken("bad signature")
    try:
        grant = Grant(
            platform=str(payload["p"]),
            workspace=str(payload["w"]),
            scope=Scope(payload["s"]),
            user=str(payload["u"]),
            expires=datetime.fromtimestamp(int(payload["e"]), UTC),
            nonce=str(payload.get("n", "")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise BadToken("malformed token") from exc
    if now >= grant.expires:
        raise BadToken("expired", expired=True)
    return grant


def new_link(
    secret: str, platform: str, workspace: str, scope: Scope, user: str, now: datetime
) -> str:
    """Return a fresh link token (valid LINK_TTL, once) for a user."""
    grant = Grant(platform, workspace, scope, user, now + LINK_TTL, secrets.token_urlsafe(16))
    return sign(secret, Purpose.LINK, grant)


def session_for(secret: str, link: Grant, now: datetime) -> tuple[str, Grant]:
    """Return the session cookie value a verified link earns, and its grant.

    Each session has a nonce of its own, which its form token is bound to.
    """
    grant = Grant(
        link.platform,
        link.workspace,
        link.scope,
        link.user,
        now + SESSION_TTL,
        secrets.token_urlsafe(16),
    )
    return sign(secret, Purpose.SESSION, grant), grant


def _form_body(session: Grant) -> str:
    expires = int(session.expires.timestamp())
    return f"{session.scope.value}:{session.user}:{expires}:{session.nonce}"


def form_token(secret: str, session: Grant) -> str:
    """Return the token a session's forms carry: an HMAC of the session's nonce (and who, and
    until when) with the workspace's key. Only a page served to that session holds it."""
    key = _workspace_key(secret_keys(secret)[0], session.platform, session.workspace)
    return _b64(_mac(key, Purpose.FORM, _form_body(session)))


def form_token_ok(secret: str, session: Grant, token: str) -> bool:
    """Return whether a posted form token is this session's, compared in constant time.

    A session without a nonce (issued before sessions had one) has no form token.
    """
    if not session.nonce or not token or len(token) > 128 or not token.isascii():
        return False
    try:
        mac = _unb64(token)
    except ValueError:
        return False
    body = _form_body(session)
    return any(
        hmac.compare_digest(
            mac, _mac(_workspace_key(key, session.platform, session.workspace), Purpose.FORM, body)
        )
        for key in secret_keys(secret)
    )


@dataclass(frozen=True, slots=True)
class LinkMaker:
    """Makes dashboard links: the secret that signs them and the base URL they point at."""

    secret: str
    public_url: str | None = None

    def url(self, platform: str, workspace: str, scope: Scope, user: str, now: datetime) -> str:
        """Return a fresh link (valid LINK_TTL, once) to the dashboard's opening page."""
        token = new_link(self.secret, platform, workspace, scope, user, now)
        return f"{(self.public_url or '').rstrip('/')}{OPEN_PATH}?token={token}"
