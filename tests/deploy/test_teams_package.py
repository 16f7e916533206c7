"""The Teams app package: a manifest that meets Microsoft's schema, icons of the sizes asked."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest
from PIL import Image

from bot.chat.grammar import QUIZ

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "teams" / "package.py"
# The constraints of Microsoft's published manifest schema on the fields quizbot writes, restated
# from it by deploy/teams/restate_schema.py (the file names its source).
SCHEMA = Path(__file__).parent / "teams_manifest_rules.json"
APP_ID = "6d2f0c1e-3b4a-4c5d-9e8f-7a6b5c4d3e2f"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("teams_package", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("teams") / "quizbot.zip"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--app-id",
            APP_ID,
            "--domain",
            "quiz.example.com",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_package_holds_the_manifest_and_two_icons_at_its_root(
    unpacked: dict[str, bytes],
) -> None:
    assert set(unpacked) == {"manifest.json", "color.png", "outline.png"}


def test_the_manifest_is_valid_against_microsofts_schema(unpacked: dict[str, bytes]) -> None:
    schema = json.loads(SCHEMA.read_text())
    manifest = json.loads(unpacked["manifest.json"])
    # The schema is written for draft-04 but uses draft-06's "const"; draft 7 reads both.
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(manifest), key=str)
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    assert manifest["manifestVersion"] == schema["properties"]["manifestVersion"]["const"]


def test_a_manifest_that_breaks_the_schema_is_caught(unpacked: dict[str, bytes]) -> None:
    schema = json.loads(SCHEMA.read_text())
    manifest = json.loads(unpacked["manifest.json"])
    manifest["bots"][0]["scopes"] = ["channel"]
    manifest["description"]["short"] = "x" * 81
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(manifest))
    assert len(errors) >= 2


def test_the_bot_is_the_registration_and_serves_channels_chats_and_groups(
    unpacked: dict[str, bytes],
) -> None:
    manifest = json.loads(unpacked["manifest.json"])
    (bot,) = manifest["bots"]
    assert manifest["id"] == bot["botId"] == APP_ID
    assert set(bot["scopes"]) == {"team", "personal", "groupChat"}
    assert manifest["validDomains"] == ["quiz.example.com"]


def test_the_suggested_commands_are_the_grammars_verbs(unpacked: dict[str, bytes]) -> None:
    manifest = json.loads(unpacked["manifest.json"])
    titles = [c["title"] for c in manifest["bots"][0]["commandLists"][0]["commands"]]
    spelled = [v.spelled or v.name for v in QUIZ.verbs if v.name]
    assert titles == spelled[: len(titles)] and "next" in titles


def test_the_icons_are_the_sizes_teams_asks_for(unpacked: dict[str, bytes]) -> None:
    color = Image.open(io.BytesIO(unpacked["color.png"]))
    outline = Image.open(io.BytesIO(unpacked["outline.png"]))
    assert (color.format, color.size) == ("PNG", (192, 192))
    assert (outline.format, outline.size) == ("PNG", (32, 32))
    # The outline icon is white on transparency: every pixel is white or fully transparent.
    data = outline.convert("RGBA").tobytes()
    pixels = {tuple(data[i : i + 4]) for i in range(0, len(data), 4)}
    assert all(a == 0 or (r, g, b) == (255, 255, 255) for r, g, b, a in pixels)
    assert any(a == 0 for *_, a in pixels) and any(a == 255 for *_, a in pixels)


def test_a_bad_app_id_or_domain_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for args in (
        ["--app-id", "quizbot", "--domain", "q.example.com"],
        ["--app-id", APP_ID, "--domain", "https://q.example.com"],
    ):
        done = subprocess.run(
            [sys.executable, str(SCRIPT), *args, "-o", str(tmp_path / "x.zip")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "x.zip").exists()


def test_the_script_imports_as_a_module() -> None:
    assert script().MANIFEST_VERSION == "1.29"


def test_the_restated_rules_keep_constraints_and_leave_the_prose(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "restate_schema", ROOT / "deploy" / "teams" / "restate_schema.py"
    )
    assert spec is not None and spec.loader is not None
    restate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(restate)
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["manifestVersion", "name"],
        "properties": {
            "manifestVersion": {"type": "string", "const": "9.9", "description": "prose"},
            "name": {"$ref": "#/definitions/name"},
            "unused": {"type": "integer", "description": "prose"},
        },
        "definitions": {
            "name": {
                "type": "object",
                "description": "prose",
                "properties": {"short": {"type": "string", "maxLength": 30}},
            }
        },
    }
    source, package = tmp_path / "schema.json", tmp_path / "p.zip"
    source.write_text(json.dumps(schema))
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr(
            "manifest.json", json.dumps({"manifestVersion": "9.9", "name": {"short": "q"}})
        )
    out = tmp_path / "rules.json"
    assert restate.main([str(source), str(package), "-o", str(out)]) == 0
    rules = json.loads(out.read_text())
    assert "v9.9" in rules.pop("$comment")
    assert rules == {
        "type": "object",
        "additionalProperties": False,
        "required": ["manifestVersion", "name"],
        "propertyNames": {"enum": ["manifestVersion", "name", "unused"]},
        "properties": {
            "manifestVersion": {"type": "string", "const": "9.9"},
            "name": {
                "type": "object",
                "properties": {"short": {"type": "string", "maxLength": 30}},
            },
        },
    }
