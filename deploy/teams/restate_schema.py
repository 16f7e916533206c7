"""Restate the rules of Microsoft's Teams manifest schema that quizbot's manifest meets.

Microsoft publishes the app manifest's JSON Schema (v1.29:
https://developer.microsoft.com/en-us/json-schemas/teams/v1.29/MicrosoftTeams.schema.json).
This reads a copy of it and the package ``package.py`` makes, and writes the constraints on the
fields the manifest uses (types, patterns, lengths, the values allowed, what is required, and
every field name an object may have), without the schema's own text, to
``tests/deploy/teams_manifest_rules.json``; ``tests/deploy/test_teams_package.py`` validates
each package against that file with no network. Run it again when the manifest version or the
fields quizbot writes change:

    curl -sO https://developer.microsoft.com/en-us/json-schemas/teams/v1.29/MicrosoftTeams.schema.json
    python deploy/teams/package.py --app-id 00000000-0000-0000-0000-000000000000 \
        --domain quiz.example.com -o /tmp/quizbot.zip
    python deploy/teams/restate_schema.py MicrosoftTeams.schema.json /tmp/quizbot.zip
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

RULES = Path(__file__).resolve().parents[2] / "tests" / "deploy" / "teams_manifest_rules.json"
# The keywords that constrain a value; the schema's prose (descriptions, titles) is left out.
CONSTRAINTS = frozenset(
    {
        "type",
        "const",
        "enum",
        "maxLength",
        "minLength",
        "pattern",
        "format",
        "maxItems",
        "minItems",
        "uniqueItems",
        "required",
        "minimum",
        "maximum",
    }
)


class Restater:
    """Walk the schema along a manifest, keeping the constraints on what the manifest holds."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.definitions: dict[str, Any] = schema.get("definitions", {})

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = self.definitions[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def rules(self, node: dict[str, Any], value: Any, where: str = "") -> dict[str, Any]:
        node = self.resolve(node)
        for combined in ("anyOf", "oneOf", "allOf"):
            if combined in node:
                raise SystemExit(f"{where or '(top)'}: {combined} is not restated; extend this")
        out = {k: v for k, v in node.items() if k in CONSTRAINTS}
        fields = node.get("properties")
        if fields is not None:
            if isinstance(value, dict):
                out["properties"] = {
                    name: self.rules(fields[name], value[name], f"{where}.{name}")
                    for name in value
                    if name in fields
                }
            if node.get("additionalProperties") is False:
                out["additionalProperties"] = False
                out["propertyNames"] = {"enum": sorted(fields)}
        if "items" in node and isinstance(value, list) and value:
            sample = value[0]
            if isinstance(sample, dict):
                sample = {k: v for item in value for k, v in item.items()}
            out["items"] = self.rules(node["items"], sample, f"{where}[]")
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("schema", type=Path, help="Microsoft's MicrosoftTeams.schema.json")
    parser.add_argument("package", type=Path, help="a package made by deploy/teams/package.py")
    parser.add_argument("-o", "--output", type=Path, default=RULES)
    args = parser.parse_args(argv)
    schema = json.loads(args.schema.read_text())
    with zipfile.ZipFile(args.package) as package:
        manifest = json.loads(package.read("manifest.json"))
    rules = Restater(schema).rules(schema, manifest)
    version = schema["properties"]["manifestVersion"].get("const", "?")
    rules = {
        "$comment": (
            f"The constraints of Microsoft's Teams app manifest schema v{version} "
            "(https://developer.microsoft.com/en-us/json-schemas/teams/"
            f"v{version}/MicrosoftTeams.schema.json) on the fields quizbot's manifest uses, "
            "restated by deploy/teams/restate_schema.py."
        ),
        **rules,
    }
    args.output.write_text(json.dumps(rules, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
