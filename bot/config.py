"""Settings from the environment, in one typed place. Secrets have no defaults."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.errors import ConfigError
from bot.links import LinkMaker, secret_keys, secret_problem
from bot.platforms import CHATS

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///quizbot.db"
# The SQLite ``synchronous`` levels QUIZBOT_SQLITE_SYNCHRONOUS accepts (docs/reliability.md).
SQLITE_SYNCHRONOUS = ("FULL", "NORMAL", "EXTRA")
# The bank: inside the package when installed from a wheel, beside it in a checkout.
PACKAGED_QUESTIONS = Path(__file__).resolve().parent / "questions"
CHECKOUT_QUESTIONS = Path(__file__).resolve().parent.parent / "questions"
BUNDLED_QUESTIONS = PACKAGED_QUESTIONS if PACKAGED_QUESTIONS.is_dir() else CHECKOUT_QUESTIONS
# Where an HTTP server listens unless told: this machine only, or, in a container (where only
# the published port is reachable from outside), every address.
THIS_MACHINE = "127.0.0.1"
EVERY_ADDRESS = "0.0.0.0"
# The files Docker and Podman put in every container they start.
CONTAINER_MARKERS = (Path("/.dockerenv"), Path("/run/.containerenv"))


README_SETTINGS = "see the README's configuration section"
# Where each platform's setting is explained, and what to set instead where there is a choice.
WHERE_TOLD = {
    "SLACK_BOT_TOKEN": (
        "see docs/slack.md (for one workspace; to install into many, set SLACK_CLIENT_ID and "
        "SLACK_CLIENT_SECRET instead)"
    ),
    "DISCORD_TOKEN": "see docs/discord.md",
    "TEAMS_APP_ID": "see docs/teams.md",
    "TEAMS_APP_PASSWORD": "see docs/teams.md (or TEAMS_ANONYMOUS=true for local testing only)",
}


def in_container(markers: tuple[Path, ...] = CONTAINER_MARKERS) -> bool:
    """Return whether this process runs in a Docker or Podman container."""
    return any(marker.exists() for marker in markers)


PLATFORMS = CHATS


@dataclass(frozen=True)
class Admins:
    """The people QUIZBOT_ADMINS lists: in one workspace each, or (a bare id) in every one.

    An entry ``slack:T0123:U0456`` (or ``discord:GUILD:USER``, ``teams:TENANT:29:USER``) makes
    that user an admin of that workspace, server or tenant only. A bare user id is an admin in
    every workspace the bot serves: an operator-wide entry, meant for a bot that serves one team.
    """

    everywhere: frozenset[str] = frozenset()
    scoped: frozenset[tuple[str, str, str]] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Admins:
        """Return the admins a QUIZBOT_ADMINS value lists (ConfigError for a bad entry)."""
        everywhere: set[str] = set()
        scoped: set[tuple[str, str, str]] = set()
        for entry in (part.strip() for part in text.split(",")):
            if not entry:
                continue
            # A Teams user id has a colon of its own (29:1a2b...): the user is all after the second.
            parts = entry.split(":", 2)
            if len(parts) == 1 or (parts[0].isdigit() and parts[0] not in PLATFORMS):
                everywhere.add(entry)
            elif len(parts) == 3 and parts[0] in PLATFORMS and all(parts):
                scoped.add((parts[0], parts[1], parts[2]))
            else:
                raise ConfigError(
                    f"QUIZBOT_ADMINS entry {entry[:60]!r} is neither a user id nor "
                    "PLATFORM:WORKSPACE:USER (such as slack:T0123:U0456)"
                )
        return cls(frozenset(everywhere), frozenset(scoped))

    def lists(self, platform: str, workspace: str, user: str) -> bool:
        """Return whether the user is listed as an admin of this workspace."""
        return user in self.everywhere or (platform, workspace, user) in self.scoped

    def of(self, platform: str, workspace: str) -> list[str]:
        """Return the users listed as admins of this workspace (its own entries, then the bare
        ids, which are admins everywhere), each once, in a stable order."""
        mine = sorted(u for p, w, u in self.scoped if (p, w) == (platform, workspace))
        return list(dict.fromkeys([*mine, *sorted(self.everywhere)]))

    def __bool__(self) -> bool:
        return bool(self.everywhere or self.scoped)


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class ChatOptions(TypedDict):
    """What the chat core of every platform is made with from the settings."""

    admins: Admins
    admins_only: bool
    links: LinkMaker | None


class Settings(BaseSettings):
    """Everything quizbot reads from its environment."""

    # An empty value (``KEY=`` in an env file) means unset, as in a shell.
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=False, env_ignore_empty=True)

    database_url: str = Field(DEFAULT_DATABASE_URL, validation_alias=_env("QUIZBOT_DATABASE_URL"))
    questions: str | None = Field(None, validation_alias=_env("QUIZBOT_QUESTIONS"))
    round_minutes: int = Field(
        10, ge=1, le=7 * 24 * 60, validation_alias=_env("QUIZBOT_ROUND_MINUTES")
    )
    # Open reports that take a question out of its workspace's rounds; 0 never does.
    flag_pause: int = Field(3, ge=0, le=1000, validation_alias=_env("QUIZBOT_FLAG_PAUSE"))
    admins: str = Field("", validation_alias=_env("QUIZBOT_ADMINS"))
    admins_only: bool = Field(False, validation_alias=_env("QUIZBOT_ADMINS_ONLY"))
    db_pool_size: int = Field(5, ge=1, validation_alias=_env("QUIZBOT_DB_POOL_SIZE"))
    db_max_overflow: int = Field(10, ge=0, validation_alias=_env("QUIZBOT_DB_MAX_OVERFLOW"))
    auto_migrate: bool = Field(True, validation_alias=_env("QUIZBOT_AUTO_MIGRATE"))
    sqlite_synchronous: str = Field("FULL", validation_alias=_env("QUIZBOT_SQLITE_SYNCHRONOUS"))
    host: str | None = Field(None, min_length=1, validation_alias=_env("QUIZBOT_HOST"))
    # The operations port: /healthz, /readyz and /metrics, on localhost unless QUIZBOT_OPS_HOST
    # says otherwise (QUIZBOT_HEALTH_PORT is its older name, still read).
    health_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        validation_alias=AliasChoices("QUIZBOT_OPS_PORT", "QUIZBOT_HEALTH_PORT"),
    )
    ops_host: str = Field(THIS_MACHINE, min_length=1, validation_alias=_env("QUIZBOT_OPS_HOST"))
    # Socket Mode and Discord: the dashboard's pages on their own port (HTTP mode: the events port).
    dashboard_port: int | None = Field(
        None, ge=0, le=65535, validation_alias=_env("QUIZBOT_DASHBOARD_PORT")
    )
    shutdown_timeout: float = Field(
        20.0, gt=0, le=600, validation_alias=_env("QUIZBOT_SHUTDOWN_TIMEOUT")
    )

    dashboard_secret: str | None = Field(None, validation_alias=_env("QUIZBOT_DASHBOARD_SECRET"))
    public_url: str | None = Field(
        None, pattern=r"^https?://[^\s/]+(/\S*)?$", validation_alias=_env("QUIZBOT_PUBLIC_URL")
    )

    slack_bot_token: str | None = Field(None, validation_alias=_env("SLACK_BOT_TOKEN"))
    slack_signing_secret: str | None = Field(None, validation_alias=_env("SLACK_SIGNING_SECRET"))
    slack_app_token: str | None = Field(None, validation_alias=_env("SLACK_APP_TOKEN"))
    slack_api_url: str | None = Field(None, validation_alias=_env("SLACK_API_URL"))
    slack_client_id: str | None = Field(None, validation_alias=_env("SLACK_CLIENT_ID"))
    slack_client_secret: str | None = Field(None, validation_alias=_env("SLACK_CLIENT_SECRET"))
    slack_redirect_uri: str | None = Field(None, validation_alias=_env("SLACK_REDIRECT_URI"))
    token_key: str | None = Field(None, validation_alias=_env("QUIZBOT_TOKEN_KEY"))

    discord_token: str | None = Field(None, validation_alias=_env("DISCORD_TOKEN"))
    discord_api_url: str | None = Field(None, validation_alias=_env("DISCORD_API_URL"))
    discord_gateway_url: str | None = Field(None, validation_alias=_env("DISCORD_GATEWAY_URL"))
    discord_guild_id: int | None = Field(None, validation_alias=_env("DISCORD_GUILD_ID"))
    discord_application_id: int | None = Field(
        None, validation_alias=_env("DISCORD_APPLICATION_ID")
    )
    discord_shard_count: int | None = Field(
        None, ge=1, validation_alias=_env("DISCORD_SHARD_COUNT")
    )
    discord_shard_ids: str | None = Field(None, validation_alias=_env("DISCORD_SHARD_IDS"))

    teams_app_id: str | None = Field(None, validation_alias=_env("TEAMS_APP_ID"))
    teams_app_password: str | None = Field(None, validation_alias=_env("TEAMS_APP_PASSWORD"))
    teams_tenant_id: str | None = Field(None, validation_alias=_env("TEAMS_TENANT_ID"))
    teams_port: int = Field(3978, ge=0, le=65535, validation_alias=_env("TEAMS_PORT"))
    teams_keys_url: str | None = Field(
        None, pattern=r"^https?://\S+$", validation_alias=_env("TEAMS_KEYS_URL")
    )
    teams_anonymous: bool = Field(False, validation_alias=_env("TEAMS_ANONYMOUS"))

    @field_validator("sqlite_synchronous")
    @classmethod
    def _sqlite_synchronous_is_known(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in SQLITE_SYNCHRONOUS:
            raise ValueError(
                f"{value[:20]!r} is not one of {', '.join(SQLITE_SYNCHRONOUS)} "
                "(FULL keeps every acknowledged answer through power loss; see docs/reliability.md)"
            )
        return level

    @field_validator("dashboard_secret")
    @classmethod
    def _dashboard_secret_is_long(cls, value: str | None) -> str | None:
        problem = None if value is None else secret_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    def question_paths(self) -> list[Path]:
        """Return the question folders: QUIZBOT_QUESTIONS (``:``-separated) or the bundled bank."""
        if self.questions:
            return [Path(p).expanduser() for p in self.questions.split(":") if p]
        if not BUNDLED_QUESTIONS.is_dir():
            raise ConfigError(
                "QUIZBOT_QUESTIONS is not set and the bundled questions/ folder is not installed"
            )
        return [BUNDLED_QUESTIONS]

    def admin_ids(self) -> Admins:
        """Return the admins QUIZBOT_ADMINS lists (comma-separated; see ``Admins``)."""
        return Admins.parse(self.admins)

    def listen_host(self, *, container: bool | None = None) -> str:
        """Return the address HTTP mode listens on: QUIZBOT_HOST, else the default for here."""
        if self.host:
            return self.host
        return (
            EVERY_ADDRESS if (in_container() if container is None else container) else THIS_MACHINE
        )

    def listed_admins_only(self) -> bool:
        """Return True when QUIZBOT_ADMINS alone are admins and the platform is never asked."""
        if self.admins_only and not self.admin_ids():
            raise ConfigError(
                "QUIZBOT_ADMINS_ONLY is set but QUIZBOT_ADMINS lists nobody; "
                "nobody could change settings or schedules"
            )
        return self.admins_only

    def shard_ids(self) -> list[int] | None:
        """Return DISCORD_SHARD_IDS as a list (None: every shard in this process)."""
        if not self.discord_shard_ids:
            return None
        try:
            ids = sorted({int(part) for part in self.discord_shard_ids.split(",") if part.strip()})
        except ValueError:
            raise ConfigError(
                "DISCORD_SHARD_IDS must be shard numbers separated by commas, like 0,1"
            ) from None
        if self.discord_shard_count is None:
            raise ConfigError("DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT (the total) as well")
        if not ids or ids[0] < 0 or ids[-1] >= self.discord_shard_count:
            raise ConfigError(
                f"DISCORD_SHARD_IDS must lie between 0 and {self.discord_shard_count - 1} "
                "(DISCORD_SHARD_COUNT - 1)"
            )
        return ids

    def slack_oauth(self) -> bool:
        """Return True when the app installs into many workspaces through Slack's OAuth flow."""
        if bool(self.slack_client_id) != bool(self.slack_client_secret):
            missing = "SLACK_CLIENT_SECRET" if self.slack_client_id else "SLACK_CLIENT_ID"
            raise ConfigError(f"{missing} is not set; the OAuth install flow needs both")
        return bool(self.slack_client_id)

    def secrets(self) -> list[str]:
        """Return every secret value set, for the log redaction (the database password too)."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        values = [
            self.slack_bot_token,
            self.slack_signing_secret,
            self.slack_client_secret,
            self.slack_app_token,
            self.discord_token,
            self.teams_app_password,
            *secret_keys(self.dashboard_secret or ""),
            *(self.token_key or "").split(","),
        ]
        with suppress(ArgumentError):  # the store refuses a bad URL with its own message
            values.append(make_url(self.database_url).password)
        return [v.strip() for v in values if v and v.strip()]

    def dashboard_enabled(self) -> bool:
        """Return True when the dashboard can sign links (QUIZBOT_DASHBOARD_SECRET is set)."""
        return bool(self.dashboard_secret)

    def chat_options(self) -> ChatOptions:
        """Return who the admins are, whether only they are, and what signs dashboard links:
        the same for every platform's chat core."""
        return ChatOptions(
            admins=self.admin_ids(),
            admins_only=self.listed_admins_only(),
            links=self.link_maker(),
        )

    def link_maker(self) -> LinkMaker | None:
        """Return what signs dashboard links, or None while the dashboard is off."""
        if not self.dashboard_secret:
            return None
        return LinkMaker(self.dashboard_secret, self.public_url)

    def require(self, *names: str) -> None:
        """Raise ConfigError naming the first of these environment variables that is unset."""
        for name in names:
            if not getattr(self, name.lower(), None):
                raise ConfigError(f"{name} is not set; {WHERE_TOLD.get(name, README_SETTINGS)}")


def load_settings() -> Settings:
    """Read the settings from the environment, with a clear error for a bad value."""
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = first.get("loc", ("?",))[0]
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        raise ConfigError(f"bad setting {where}: {message}") from None
