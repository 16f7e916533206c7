"""deploy/: the Dockerfile, compose file, Kubernetes manifests and systemd units hold together."""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import AliasChoices

from bot.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"


def setting_names() -> set[str]:
    names = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        assert isinstance(alias, AliasChoices)
        names.update(str(choice) for choice in alias.choices)
    return names


# Variables read by something other than quizbot's settings.
# QUIZBOT_LOG_FORMAT is read by bot.logs before the settings are loaded.
OTHER_VARIABLES = {"MPLCONFIGDIR", "QUIZBOT_LOG_FORMAT"}


# ------------------------------------------------------------------------------- Dockerfile


def dockerfile() -> list[tuple[str, str]]:
    """Return (INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    steps = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            steps.append((word.upper(), " ".join(rest.split())))
    return steps


def final_stage() -> list[tuple[str, str]]:
    steps = dockerfile()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def test_dockerfile_uses_slim_python_311_pinned_by_digest_in_every_stage():
    bases = [args.split()[0] for word, args in dockerfile() if word == "FROM"]
    assert len(bases) == 2 and len(set(bases)) == 1, bases
    tag, _, digest = bases[0].partition("@")
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", tag), tag
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), "the base image is pinned by digest"


def test_dockerfile_runs_as_a_non_root_user():
    users = [args for word, args in final_stage() if word == "USER"]
    assert users, "the final stage must switch user"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    # The uid the image runs as is the one Kubernetes is told to expect.
    for name in ("slack-deployment.yaml", "discord-statefulset.yaml"):
        spec = yaml.safe_load((K8S / name).read_text())["spec"]["template"]["spec"]
        assert str(spec["securityContext"]["runAsUser"]) == user


def test_dockerfile_has_a_healthcheck_on_the_probe_module():
    [check] = [args for word, args in final_stage() if word == "HEALTHCHECK"]
    assert "--interval=" in check and "CMD" in check
    assert '"bot.observability.probe"' in check
    assert (ROOT / "bot" / "observability" / "probe.py").is_file()


def test_dockerfile_ships_the_question_bank_and_points_at_it():
    steps = final_stage()
    [copy] = [args for word, args in steps if word == "COPY" and args.startswith("questions ")]
    target = copy.split()[1]
    env = " ".join(args for word, args in steps if word == "ENV")
    assert f"QUIZBOT_QUESTIONS={target}" in env
    assert "QUIZBOT_OPS_PORT=8080" in env
    entry = [args for word, args in steps if word == "ENTRYPOINT"]
    assert entry == ['["quizbot"]']
    exposed = {p for word, args in steps if word == "EXPOSE" for p in args.split()}
    assert exposed == {"3000", "3978", "8080"}


def dockerignore() -> list[str]:
    return [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]


def ignored(path: str) -> bool:
    result = False
    for pattern in dockerignore():
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").removeprefix("**/")
        if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.split("/")[0], pattern):
            result = not negate
    return result


def test_every_copied_path_exists_and_survives_dockerignore():
    sources = []
    for word, args in dockerfile():
        if word == "COPY" and not args.startswith("--from"):
            sources.extend(args.split()[:-1])
    assert set(sources) >= {"pyproject.toml", "README.md", "bot", "questions"}
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not ignored(source), f"{source} is excluded by .dockerignore"


@pytest.mark.parametrize(
    "path", [".venv", ".git", "tests", "quizbot.db", "deploy/quizbot.env", "deploy/postgres.env"]
)
def test_dockerignore_keeps_local_state_and_secrets_out(path: str):
    assert ignored(path)


# ------------------------------------------------------------------------------- compose

# The part of the Compose specification this file uses, with the value types it allows.
COMPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["services"],
    "additionalProperties": False,
    "patternProperties": {"^x-": {}},
    "properties": {
        "name": {"type": "string"},
        "services": {
            "type": "object",
            "additionalProperties": {"$ref": "#/$defs/service"},
        },
        "volumes": {"type": "object"},
    },
    "$defs": {
        "healthcheck": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "test": {"type": ["array", "string"]},
                "interval": {"type": "string"},
                "timeout": {"type": "string"},
                "retries": {"type": "integer"},
                "start_period": {"type": "string"},
                "disable": {"type": "boolean"},
            },
        },
        "service": {
            "type": "object",
            "additionalProperties": False,
            "anyOf": [{"required": ["image"]}, {"required": ["build"]}],
            "properties": {
                "image": {"type": "string"},
                "build": {
                    "type": "object",
                    "required": ["context"],
                    "properties": {"context": {"type": "string"}, "dockerfile": {"type": "string"}},
                    "additionalProperties": False,
                },
                "command": {"type": "array", "items": {"type": "string"}},
                "env_file": {"type": ["string", "array"]},
                "environment": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                },
                "ports": {"type": "array", "items": {"type": "string"}},
                "volumes": {"type": "array", "items": {"type": "string"}},
                "tmpfs": {"type": "array", "items": {"type": "string"}},
                "read_only": {"type": "boolean"},
                "security_opt": {"type": "array", "items": {"type": "string"}},
                "restart": {"enum": ["no", "always", "on-failure", "unless-stopped"]},
                "stop_grace_period": {"type": "string"},
                "healthcheck": {"$ref": "#/$defs/healthcheck"},
                "depends_on": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["condition"],
                        "properties": {
                            "condition": {
                                "enum": [
                                    "service_started",
                                    "service_healthy",
                                    "service_completed_successfully",
                                ]
                            }
                        },
                    },
                },
            },
        },
    },
}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return data


def test_compose_matches_the_schema(compose):
    jsonschema.validate(compose, COMPOSE_SCHEMA)


def test_compose_matches_the_compose_specification(compose):
    # The Compose Specification's own JSON Schema, as check-jsonschema ships it (vendored from
    # github.com/compose-spec/compose-spec), not one written to fit this file.
    spec = json.loads(
        resources.files("check_jsonschema.builtin_schemas.vendor")
        .joinpath("compose-spec.json")
        .read_text()
    )
    jsonschema.validators.validator_for(spec)(spec).validate(compose)
    # ...and it is strict enough to catch a typo in a service key.
    broken = {
        **compose,
        "services": {
            **compose["services"],
            "slack": {**compose["services"]["slack"], "enviroment": {}},
        },
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validators.validator_for(spec)(spec).validate(broken)


def test_compose_has_the_database_the_migration_and_the_bots(compose):
    services = compose["services"]
    assert set(services) == {"postgres", "migrate", "slack", "discord", "teams"}
    assert services["postgres"]["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name, command in (("slack", "slack"), ("discord", "discord"), ("teams", "teams")):
        service = services[name]
        assert service["command"][0] == command
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert service["environment"]["QUIZBOT_AUTO_MIGRATE"] == "false"
        assert "bot.observability.probe" in service["healthcheck"]["test"]
        assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
        assert service["restart"] == "unless-stopped"
    assert services["slack"]["ports"] == ["3000:3000"]
    assert services["teams"]["ports"] == ["3978:3978"]
    used = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert used <= set(compose["volumes"])


def test_compose_env_file_example_exists_and_loads(compose, monkeypatch):
    example = DEPLOY / "quizbot.env.example"
    bots = {name: s for name, s in compose["services"].items() if name != "postgres"}
    assert {s["env_file"] for s in bots.values()} == {"quizbot.env"}
    values = {}
    for line in example.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, line
            values[key] = value
    unknown = set(values) - setting_names() - OTHER_VARIABLES
    assert not unknown, f"variables quizbot does not read: {unknown}"
    documented = set(values) | {
        line.lstrip("# ").partition("=")[0]
        for line in example.read_text().splitlines()
        if re.match(r"# [A-Z_]+=", line)
    }
    assert setting_names() - documented == set(), "every setting is in the example"
    for key in setting_names():
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    settings = load_settings()
    assert settings.database_url.startswith("postgresql+asyncpg://quizbot:")
    assert (settings.db_pool_size, settings.db_max_overflow, settings.health_port) == (5, 10, 8080)
    assert settings.shard_ids() is None and settings.slack_oauth() is False


# ------------------------------------------------------------------------------- Kubernetes


def manifests() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        docs.extend(d for d in yaml.safe_load_all((K8S / name).read_text()) if d)
    return docs


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


def workloads() -> list[dict[str, Any]]:
    return [d for d in manifests() if d["kind"] in ("Deployment", "StatefulSet")]


def test_every_manifest_has_api_version_kind_and_name():
    docs = manifests()
    assert {d["kind"] for d in docs} == {
        "ConfigMap",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "StatefulSet",
    }
    for d in docs:
        assert d["apiVersion"] and d["metadata"]["name"].startswith("quizbot")


def test_slack_deployment_runs_two_replicas():
    deployment = by_kind("Deployment")["quizbot-slack"]
    assert deployment["spec"]["replicas"] == 2
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "slack"


@pytest.mark.parametrize("workload", workloads(), ids=lambda w: w["metadata"]["name"])
def test_workloads_have_probes_resources_secrets_and_a_migration(workload):
    spec = workload["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["terminationGracePeriodSeconds"] > 20  # QUIZBOT_SHUTDOWN_TIMEOUT drains first
    [migrate] = pod["initContainers"]
    assert migrate["args"] == ["db", "upgrade"]
    for container in [*pod["initContainers"], *pod["containers"]]:
        requests = container["resources"]["requests"]
        assert {"cpu", "memory"} <= set(requests)
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
    for container in pod["containers"]:
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports["health"] == 8080
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
        assert container["envFrom"] == [{"configMapRef": {"name": "quizbot-config"}}]
        refs = {
            e["name"]: e["valueFrom"]["secretKeyRef"]
            for e in container["env"]
            if "secretKeyRef" in e.get("valueFrom", {})
        }
        assert refs["QUIZBOT_DATABASE_URL"] == {"name": "quizbot-secrets", "key": "database-url"}
        assert set(refs) <= setting_names()


def test_secret_references_name_keys_of_the_example_secret():
    example = yaml.safe_load((K8S / "secret.example.yaml").read_text())
    keys = set(example["stringData"])
    for workload in workloads():
        pod = workload["spec"]["template"]["spec"]
        for container in [*pod["initContainers"], *pod["containers"]]:
            for e in container.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["name"] == example["metadata"]["name"]
                    assert ref["key"] in keys


def test_discord_statefulset_gives_each_pod_its_own_shard():
    statefulset = by_kind("StatefulSet")["quizbot-discord"]
    [container] = statefulset["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert int(env["DISCORD_SHARD_COUNT"]["value"]) == statefulset["spec"]["replicas"]
    field = env["DISCORD_SHARD_IDS"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert field == "metadata.labels['apps.kubernetes.io/pod-index']"
    assert statefulset["spec"]["serviceName"] in by_kind("Service")


def test_services_select_pods_and_target_named_ports():
    pods = {
        w["metadata"]["name"]: (
            w["spec"]["template"]["metadata"]["labels"],
            {p["name"] for c in w["spec"]["template"]["spec"]["containers"] for p in c["ports"]},
        )
        for w in workloads()
    }
    for name, service in by_kind("Service").items():
        labels, ports = pods[name]
        assert service["spec"]["selector"].items() <= labels.items()
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= ports


def test_configmap_holds_only_known_settings():
    data = by_kind("ConfigMap")["quizbot-config"]["data"]
    assert set(data) <= setting_names() | OTHER_VARIABLES
    assert data["QUIZBOT_AUTO_MIGRATE"] == "false"
    assert data["QUIZBOT_OPS_PORT"] == "8080" and data["QUIZBOT_OPS_HOST"] == "0.0.0.0"
    assert all(isinstance(v, str) for v in data.values())


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_renders_the_manifests():
    result = subprocess.run(
        ["kubectl", "kustomize", str(K8S)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rendered = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert len(rendered) == len(manifests())
    for d in rendered:
        assert d["metadata"]["labels"]["app.kubernetes.io/part-of"] == "quizbot"


# ------------------------------------------------------------------------------- systemd


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((DEPLOY / "systemd" / name).read_text())
    return parser


@pytest.mark.parametrize(
    ("name", "command"),
    [
        ("quizbot-slack.service", "slack"),
        ("quizbot-discord.service", "discord"),
        ("quizbot-teams.service", "teams"),
    ],
)
def test_systemd_unit_runs_the_bot_as_a_service_user(name: str, command: str):
    parsed = unit(name)
    service = parsed["Service"]
    assert service["ExecStart"].split()[1] == command
    assert service["ExecStartPre"].endswith("quizbot db upgrade")
    assert service["User"] not in ("root", "0")
    assert service["EnvironmentFile"] == "/etc/quizbot/quizbot.env"
    assert service["KillSignal"] == "SIGTERM" and int(service["TimeoutStopSec"]) > 20
    assert service["Restart"] == "on-failure"
    assert parsed["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
@pytest.mark.parametrize(
    "name", ["quizbot-slack.service", "quizbot-discord.service", "quizbot-teams.service"]
)
def test_systemd_analyze_finds_nothing_wrong(name: str, tmp_path: Path):
    # verify insists the program exists: point the copy at this checkout's quizbot.
    quizbot = tool("quizbot")
    assert quizbot is not None
    text = (DEPLOY / "systemd" / name).read_text().replace("/opt/quizbot/bin/quizbot", quizbot)
    (tmp_path / name).write_text(text)
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(tmp_path / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Unknown" not in result.stderr and "ignoring" not in result.stderr, result.stderr


def tool(name: str) -> str | None:
    """Find a command on PATH or beside this Python (a virtual environment's bin)."""
    beside = Path(sys.executable).with_name(name)
    return shutil.which(name) or (str(beside) if beside.exists() else None)


@pytest.mark.skipif(tool("hadolint") is None, reason="hadolint is not installed")
def test_hadolint_finds_nothing_in_the_dockerfile():
    hadolint = tool("hadolint")
    assert hadolint is not None
    result = subprocess.run(
        [hadolint, "--failure-threshold", "info", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
