"""Make the Microsoft Teams app package: manifest.json and its two icons, zipped for upload.

Usage: python deploy/teams/package.py --app-id GUID --domain quiz.example.com [-o quizbot.zip]

``--app-id`` is the Entra ID app registration's application (client) id, the bot's id as well
(TEAMS_APP_ID). ``--domain`` is the host of the bot's public address, where Teams fetches
charts from (QUIZBOT_PUBLIC_URL). The manifest follows Microsoft's schema v1.29
(tests/deploy/test_teams_package.py validates it); its command list is read off the grammar,
so what Teams suggests after ``@quizbot`` is what the bot understands. The icons are drawn
here: a 192 x 192 colour icon and a 32 x 32 white outline on transparency, as Teams asks.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bot.chat.grammar import QUIZ  # noqa: E402

MANIFEST_VERSION = "1.29"
SCHEMA = (
    "https://developer.microsoft.com/en-us/json-schemas/teams/"
    f"v{MANIFEST_VERSION}/MicrosoftTeams.schema.json"
)
GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# Teams' limits on a command list: 12 commands, a title of 128 characters (the schema).
COMMANDS_MAX = 12
ACCENT = "#3B5BDB"
COLOR_SIZE, OUTLINE_SIZE = 192, 32
SHORT = "A quiz on how large-scale training clusters work."
FULL = (
    "quizbot posts multiple-choice questions about GPU clusters, interconnects, storage and "
    "parallelism in a channel. Mention it to ask for a question (@quizbot next), answer with "
    "the card's buttons, and read the explanation in the card's thread when the question "
    "closes. It keeps scores and a leaderboard, schedules a daily question, brings back what "
    "you missed for review, and estimates transfer and training-step times with /bandwidth."
)


def commands() -> list[dict[str, str]]:
    """Return the command list Teams suggests: the /quiz verbs, as typed after a mention."""
    listed = [
        {"title": verb.spelled or verb.name, "description": verb.help}
        for verb in QUIZ.verbs
        if verb.name
    ]
    return listed[:COMMANDS_MAX]


def manifest(app_id: str, domain: str, version: str) -> dict[str, Any]:
    """Return the app manifest for a bot registration and its public host."""
    if not GUID.match(app_id):
        raise ValueError(f"--app-id must be the app registration's GUID, not {app_id!r}")
    site = f"https://{domain}"
    scopes = ["team", "personal", "groupChat"]
    return {
        "$schema": SCHEMA,
        "manifestVersion": MANIFEST_VERSION,
        "version": version,
        "id": app_id,
        "developer": {
            "name": "quizbot",
            "websiteUrl": site,
            "privacyUrl": f"{site}/privacy",
            "termsOfUseUrl": f"{site}/terms",
        },
        "name": {"short": "quizbot", "full": "quizbot: the training-cluster quiz"},
        "description": {"short": SHORT, "full": FULL},
        "icons": {"color": "color.png", "outline": "outline.png"},
        "accentColor": ACCENT,
        "bots": [
            {
                "botId": app_id,
                "scopes": scopes,
                "supportsFiles": False,
                "isNotificationOnly": False,
                "commandLists": [{"scopes": scopes, "commands": commands()}],
            }
        ],
        "permissions": ["identity", "messageTeamMembers"],
        "validDomains": [domain],
    }


def _mark(draw: ImageDraw.ImageDraw, size: int, fill: Any) -> None:
    """Draw the mark: a card with three answer bars, the middle one ticked."""
    s = size / 32
    draw.rounded_rectangle(
        (4 * s, 5 * s, 28 * s, 27 * s), radius=3 * s, outline=fill, width=max(1, round(2 * s))
    )
    for row, y in enumerate((10, 15, 20)):
        width = 14 if row != 1 else 10
        draw.rectangle((8 * s, y * s, (8 + width) * s, (y + 2) * s), fill=fill)
    draw.line(
        ((20 * s, 16 * s), (22 * s, 18 * s), (26 * s, 13 * s)),
        fill=fill,
        width=max(1, round(2 * s)),
    )


def color_icon() -> bytes:
    """Return the 192 x 192 colour icon: the mark in white on the accent colour."""
    image = Image.new("RGBA", (COLOR_SIZE, COLOR_SIZE), ACCENT)
    _mark(ImageDraw.Draw(image), COLOR_SIZE, (255, 255, 255, 255))
    return _png(image)


def outline_icon() -> bytes:
    """Return the 32 x 32 outline icon: the mark in white on transparency."""
    image = Image.new("RGBA", (OUTLINE_SIZE, OUTLINE_SIZE), (0, 0, 0, 0))
    _mark(ImageDraw.Draw(image), OUTLINE_SIZE, (255, 255, 255, 255))
    return _png(image)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def package(app_id: str, domain: str, version: str) -> bytes:
    """Return the app package: a zip of manifest.json, color.png and outline.png at its root."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest(app_id, domain, version), indent=2))
        archive.writestr("color.png", color_icon())
        archive.writestr("outline.png", outline_icon())
    return out.getvalue()


def project_version() -> str:
    """Return the version in pyproject.toml."""
    found = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert found is not None
    return found[1]


def main(argv: list[str] | None = None) -> int:
    """Write the package; exit 2 with one line for a bad argument."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--app-id", required=True, help="the app registration's GUID (TEAMS_APP_ID)"
    )
    parser.add_argument(
        "--domain", required=True, help="the bot's public host, e.g. quiz.example.com"
    )
    parser.add_argument(
        "-o", "--output", default="quizbot-teams.zip", help="where to write the zip"
    )
    args = parser.parse_args(argv)
    if "/" in args.domain or ":" in args.domain:
        print("package.py: --domain is a host name only (no scheme, port or path)", file=sys.stderr)
        return 2
    try:
        data = package(args.app_id, args.domain, project_version())
    except ValueError as exc:
        print(f"package.py: {exc}", file=sys.stderr)
        return 2
    Path(args.output).write_bytes(data)
    print(f"wrote {args.output}: upload it in Teams (Apps, Manage your apps, Upload an app)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
