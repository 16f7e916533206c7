"""The app manifest asks for what the code uses and no more, and its usage hints follow the grammar.

Nothing here is a list of scopes to copy: the commands, events and actions are read off the
listeners of the Bolt app as the product builds it, the Web API methods off the calls in
``bot/`` (and checked against the calls that reach the stand-in when the flows run), and each
method's and event's scope from Slack's reference (``BOT_SCOPE`` and ``EVENT_SCOPE`` in the
stand-in, which refuses a call whose scope the token lacks).
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import _home
from bot.adapters.slack._oauth import BOT_SCOPES, REDIRECT_PATH
from bot.adapters.slack.app import EVENTS_PATH
from bot.bandwidth._options import usage_hint
from bot.chat.grammar import BANDWIDTH, QUIZ
from tests.adapters.slack.conftest import ADMIN, Harness, reaction
from tests.standins.slack_api import BOT_SCOPE, EVENT_SCOPE, PRIVATE_SCOPE

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "deploy" / "slack-manifest.yaml"
# Methods Bolt itself calls before any listener runs (auth.test, for the bot's own ids).
BOLT_CALLS = {"auth.test"}


def manifest() -> dict[str, Any]:
    return dict(yaml.safe_load(MANIFEST.read_text()))


def bot_scopes() -> set[str]:
    return set(manifest()["oauth_config"]["scopes"]["bot"])


# ---------------------------------------------------------------- what the app registers


@dataclass
class Registered:
    """The listeners of a Bolt app, by kind."""

    commands: set[str] = field(default_factory=set)
    events: set[str] = field(default_factory=set)
    actions: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)  # modals sent back (no scope: interactivity)


def _cells(func: Callable[..., Any]) -> dict[str, Any]:
    cells = func.__closure__ or ()
    names = func.__code__.co_freevars
    return {name: cell.cell_contents for name, cell in zip(names, cells, strict=True)}


def registered(app: AsyncApp) -> Registered:
    """Read each listener's matcher: Bolt builds it as a closure over what it matches."""
    found = Registered()
    for listener in app._async_listeners:
        for matcher in listener.matchers:
            inner = _cells(matcher.func).get("func")
            assert callable(inner), f"a listener matcher Bolt did not build: {matcher!r}"
            kind = inner.__qualname__.split(".")[0]
            values = [
                v.pattern if isinstance(v, re.Pattern) else v
                for v in _cells(inner).values()
                if isinstance(v, str | re.Pattern)
            ]
            assert len(values) == 1, f"cannot read what a {kind} listener matches: {values}"
            if kind == "command":
                found.commands.add(values[0])
            elif kind == "event":
                found.events.add(values[0])
            elif kind in ("action", "block_action"):
                found.actions.append(values[0])
            elif kind in ("view", "view_submission"):
                found.views.append(values[0])
            else:
                raise AssertionError(f"a {kind} listener: add what it needs to the manifest test")
    return found


# ---------------------------------------------------------------- what the code calls


@cache
def _client_methods() -> dict[str, frozenset[str]]:
    """Map each AsyncWebClient method to the Web API methods it calls (a helper's, too)."""
    direct: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    for name, member in vars(AsyncWebClient).items():
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        source = inspect.getsource(member)
        direct[name] = set(re.findall(r'api_call\(\s*"([\w.]+)"', source))
        calls[name] = set(re.findall(r"self\.(\w+)\(", source))

    def resolve(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        found = set(direct.get(name, ()))
        for other in calls.get(name, ()) - seen:
            if other in direct:
                found |= resolve(other, seen | {name})
        return found

    resolved = {name: frozenset(resolve(name)) for name in direct}
    return {name: methods for name, methods in resolved.items() if methods}


def web_api_calls(package: Path) -> dict[str, set[str]]:
    """Return the Web API methods the package's ``client.<method>(...)`` calls make, and where."""
    methods = _client_methods()
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                for method in methods.get(node.func.attr, ()):
                    found.setdefault(method, set()).add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


# ---------------------------------------------------------------- the checks


def needed_scopes(app: AsyncApp) -> dict[str, str]:
    """Return every bot scope the code needs, each with the reason."""
    listeners = registered(app)
    needed = (
        {"commands": f"slash commands {sorted(listeners.commands)}"} if listeners.commands else {}
    )
    for event in sorted(listeners.events):
        assert event in EVENT_SCOPE, f"event {event}: add its scope to EVENT_SCOPE (its reference)"
        if EVENT_SCOPE[event]:
            needed[str(EVENT_SCOPE[event])] = f"event {event}"
    for method, where in sorted(web_api_calls(ROOT / "bot").items()):
        assert method in BOT_SCOPE, (
            f"{method} (called at {sorted(where)}): add its scope to BOT_SCOPE from "
            f"https://docs.slack.dev/reference/methods/{method}"
        )
        if BOT_SCOPE[method]:
            needed.setdefault(str(BOT_SCOPE[method]), f"{method} at {sorted(where)[0]}")
        if method in PRIVATE_SCOPE:
            needed.setdefault(PRIVATE_SCOPE[method], f"{method} in a private channel")
    return needed


def test_the_manifest_asks_for_exactly_the_scopes_the_code_needs(slack: Harness) -> None:
    needed = needed_scopes(slack.bot.app)
    granted = bot_scopes()
    missing = {scope: why for scope, why in needed.items() if scope not in granted}
    unused = granted - set(needed)
    assert not missing, f"the manifest lacks scopes the code needs: {missing}"
    assert not unused, f"the manifest asks for scopes nothing uses: {sorted(unused)}"
    # The many-workspace install asks Slack for the same scopes.
    assert set(BOT_SCOPES) == granted


def test_the_manifest_declares_the_registered_commands_events_and_actions(
    slack: Harness,
) -> None:
    listeners = registered(slack.bot.app)
    features, settings = manifest()["features"], manifest()["settings"]
    commands = {c["command"]: c for c in features["slash_commands"]}
    assert set(commands) == listeners.commands
    # /quiz stats needs mentions sent as <@U123|name>.
    assert commands["/quiz"]["should_escape"] is True
    events = set(settings["event_subscriptions"]["bot_events"])
    missing = listeners.events - events
    assert not missing, f"events the app listens for but the manifest does not subscribe: {missing}"
    # One subscription may come before its listener: the Home tab, enabled in the manifest and
    # built by bot/adapters/slack/_home.py, is only ever published in answer to app_home_opened.
    ahead = events - listeners.events
    if ahead == {"app_home_opened"}:
        assert features["app_home"]["home_tab_enabled"] is True
        assert callable(_home.HomeTab.opened)
        ahead = set()
    assert not ahead, f"the manifest subscribes to events no listener takes: {ahead}"
    assert settings["interactivity"]["is_enabled"] is bool(listeners.actions or listeners.views)
    assert settings["socket_mode_enabled"] is True
    assert settings["token_rotation_enabled"] is False


async def test_the_flows_call_only_what_the_scan_found_and_the_manifest_grants(
    slack: Harness,
) -> None:
    """Run the flows with a token holding the manifest's scopes only; nothing is refused."""
    standin = slack.standin
    standin.granted = bot_scopes()
    round_id, ts = await slack.open_card()
    await slack.click(round_id, "A", user="U1", message_ts=ts)
    await slack.event(reaction("U2", "two", ts), event_id="EvScope")
    await standin.wait_calls("chat.postEphemeral", 2)
    await standin.wait_calls("chat.update")  # the card's count, before the close
    await slack.command("settings minutes 5", user=ADMIN, respond_to="settings")
    await slack.command("close", respond_to="close")
    await slack.command("bandwidth 1GB", respond_to="bw", name="/bandwidth")
    await slack.command("review", user="U1", respond_to="review")
    await standin.wait_calls("files.completeUploadExternal")
    await standin.wait_for(lambda: all(standin.responses_to(n) for n in ("settings", "review")))
    await standin.wait_for(lambda: any(c.params.get("thread_ts") for c in standin.calls))

    assert standin.refused == []
    reached = {c.method for c in standin.calls}
    scanned = set(web_api_calls(ROOT / "bot"))
    assert reached - BOLT_CALLS <= scanned, f"calls the scan missed: {reached - scanned}"
    assert {"chat.postMessage", "chat.update", "conversations.join", "users.info"} <= reached
    assert standin.scopes_used <= bot_scopes()


# ---------------------------------------------------------------- usage hints and URLs


def hint(command: str) -> str:
    (entry,) = [c for c in manifest()["features"]["slash_commands"] if c["command"] == command]
    return str(entry["usage_hint"])


def test_the_quiz_hint_lists_every_verb_of_the_grammar() -> None:
    words = set(re.findall(r"[a-z]+", hint("/quiz")))
    for verb in QUIZ.verbs:
        spelled = (verb.spelled or verb.name).split()
        assert set(spelled) <= words, f"/quiz {' '.join(spelled)} is not in the usage hint"
    # The spelled-out phrases read as the grammar reads them.
    assert "schedule off" in hint("/quiz")


def test_the_bandwidth_hint_lists_every_option_and_form() -> None:
    (verb,) = BANDWIDTH.verbs
    text = hint("/bandwidth")
    for option in verb.options:
        assert option.hint in text, f"/bandwidth {option.hint} is not in the usage hint"
    # The text form's usage has more than the typed options: read them off it.
    assert verb.text_usage is not None
    usage = verb.text_usage.split("Examples:")[0]
    options = set(re.findall(r"\[([a-z]+)[=\]]", usage))
    forms = set(re.findall(r"/bandwidth ([a-z]+)\b", usage))
    assert {"intra", "algo", "sharp", "tp"} <= options and forms == {"plan"}
    named = set(re.findall(r"\[([a-z]+)[=\]]", text)) | set(re.findall(r"\| ([a-z]+) ", text))
    assert options | forms <= named, f"missing from the hint: {(options | forms) - named}"


def test_the_bandwidth_hint_is_the_one_the_options_table_makes() -> None:
    # The manifest is a file Slack reads: it holds the hint bot.bandwidth makes, word for word.
    assert hint("/bandwidth") == usage_hint()


def test_uncommented_the_urls_point_at_the_paths_the_bot_serves() -> None:
    lines = MANIFEST.read_text().splitlines()
    url = re.compile(r"^(\s*)# (\s*(?:url|request_url|redirect_urls):.*|\s*- https://.*)$")
    opened = [m.group(1) + m.group(2) if (m := url.match(line)) else line for line in lines]
    http = yaml.safe_load("\n".join(opened))
    urls = [c["url"] for c in http["features"]["slash_commands"]]
    urls += [
        http["settings"]["event_subscriptions"]["request_url"],
        http["settings"]["interactivity"]["request_url"],
    ]
    assert len(urls) == 4
    assert all(u.startswith("https://") and u.endswith(EVENTS_PATH) for u in urls), urls
    (redirect,) = http["oauth_config"]["redirect_urls"]
    assert redirect.startswith("https://") and redirect.endswith(REDIRECT_PATH)
    assert http["oauth_config"]["scopes"] == manifest()["oauth_config"]["scopes"]
