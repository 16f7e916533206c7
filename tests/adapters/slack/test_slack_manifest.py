"""The app manifest asks for what the bot listens to and calls, and no more."""

from __future__ import annotations

from pathlib import Path

import yaml
from slack_bolt.async_app import AsyncApp

from bot.adapters.slack._oauth import BOT_SCOPES
from bot.adapters.slack.handlers import COMMANDS, EVENTS, Listeners

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"


class Recording(AsyncApp):
    """A Bolt app that records what the listeners register on it."""

    def __init__(self) -> None:
        super().__init__(
            signing_secret="s", token="xoxb-manifest", request_verification_enabled=False
        )
        self.commands: list[str] = []
        self.events: list[str] = []

    def command(self, command, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.commands.append(command)
        return super().command(command, *args, **kwargs)

    def event(self, event, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.events.append(event)
        return super().event(event, *args, **kwargs)


def test_the_manifest_declares_the_commands_and_events_the_app_listens_to() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    features, settings = manifest["features"], manifest["settings"]
    app = Recording()
    Listeners(chat=None, port=None).register(app)  # type: ignore[arg-type]
    assert app.commands == list(COMMANDS) and app.events == list(EVENTS)
    commands = {c["command"]: c for c in features["slash_commands"]}
    assert set(commands) == set(app.commands)
    # /quiz stats needs mentions sent as <@U123|name>.
    assert commands["/quiz"]["should_escape"] is True
    assert settings["event_subscriptions"]["bot_events"] == app.events
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True


def test_the_manifest_asks_for_the_scopes_the_install_flow_asks_for() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)
