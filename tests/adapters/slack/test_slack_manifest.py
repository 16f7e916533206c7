"""The app manifest asks for what the bot uses, and no more."""

from __future__ import annotations

from pathlib import Path

import yaml

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"


def test_the_manifest_declares_the_commands_events_and_scopes_in_use() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    features, settings = manifest["features"], manifest["settings"]
    commands = {c["command"]: c for c in features["slash_commands"]}
    assert set(commands) == {"/quiz", "/bandwidth"}
    # /quiz stats needs mentions sent as <@U123|name>.
    assert commands["/quiz"]["should_escape"] is True
    assert settings["event_subscriptions"]["bot_events"] == ["reaction_added"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "commands",
        "chat:write",
        "chat:write.public",
        "reactions:read",
        "users:read",
        "files:write",
    }
