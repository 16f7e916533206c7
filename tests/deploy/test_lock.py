"""The dependency locks: in step with pyproject.toml, hashed, used by make, CI and the image."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "requirements" / "runtime.txt"
TEST = ROOT / "requirements" / "test.txt"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirements(extra: str | None = None) -> list[Requirement]:
    project = pyproject()["project"]
    assert isinstance(project, dict)
    names = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return [Requirement(line) for line in names]


def pins(lock: Path) -> dict[str, set[str]]:
    """Map each locked project to its pinned versions (one per marker branch)."""
    found: dict[str, set[str]] = {}
    for line in lock.read_text().splitlines():
        match = PIN.match(line)
        if match:
            found.setdefault(canonicalize_name(match[1]), set()).add(match[2])
    return found


def entries(lock: Path) -> list[str]:
    """Split a lock into its requirement entries (continuation lines joined)."""
    text = lock.read_text().replace("\\\n", " ")
    return [line for line in text.splitlines() if line and not line.lstrip().startswith("#")]


@pytest.mark.parametrize(("lock", "extra"), [(RUNTIME, None), (TEST, None), (TEST, "test")])
def test_every_pyproject_dependency_is_pinned_in_the_lock_within_its_bounds(lock, extra):
    locked = pins(lock)
    for req in requirements(extra):
        name = canonicalize_name(req.name)
        assert name in locked, f"{req.name} is not in {lock.name}: run make lock"
        for version in locked[name]:
            assert req.specifier.contains(version, prereleases=True), (
                f"{lock.name} pins {req.name}=={version} outside {req.specifier}: run make lock"
            )


def test_the_test_lock_pins_the_runtime_lock_at_the_same_versions():
    runtime, test = pins(RUNTIME), pins(TEST)
    assert {name: test.get(name) for name in runtime} == runtime


@pytest.mark.parametrize("lock", [RUNTIME, TEST])
def test_every_locked_version_is_exact_and_hashed(lock):
    for entry in entries(lock):
        assert PIN.match(entry), f"not an exact pin: {entry[:80]}"
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), f"no hash: {entry[:80]}"


def test_the_lock_floors_are_past_the_reviewed_advisories():
    floors = {canonicalize_name(r.name): r.specifier for r in requirements()}
    # CVE-2025-53643 (3.12.14), CVE-2025-69223 (3.13.3); CVE-2024-56201/56326, CVE-2025-27516.
    assert not floors["aiohttp"].contains("3.13.2") and floors["aiohttp"].contains("3.13.3")
    assert not floors["jinja2"].contains("3.1.5") and floors["jinja2"].contains("3.1.6")
    for name, versions in pins(TEST).items():
        assert name != "setuptools" or all(Version(v) >= Version("78.1.1") for v in versions)


def test_make_installs_from_the_locks_and_regenerates_them():
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet --require-hashes -r $(LOCK)" in makefile
    assert "pip install --quiet --require-hashes -r $(TEST_LOCK)" in makefile
    assert "LOCK := requirements/runtime.txt" in makefile
    assert "TEST_LOCK := requirements/test.txt" in makefile
    # quizbot itself never resolves: a dependency missing from the lock fails pip check.
    installs = re.findall(r"pip install[^\n]*", makefile)
    assert all("--require-hashes" in i or "--no-deps" in i or "uv" in i for i in installs)
    assert makefile.count("-m pip check ||") == 2
    assert re.search(r"^test: .*\baudit\b", makefile, re.M)
    lock = makefile.split("\nlock:", 1)[1].split("\n\n", 1)[0]
    assert lock.count("--generate-hashes") == 2 and "--extra test" in lock
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("\nmake test")


def test_the_image_installs_the_runtime_lock_and_nothing_else():
    text = (ROOT / "deploy" / "Dockerfile").read_text().replace("\\\n", " ")
    installs = [i.strip() for i in re.findall(r"pip install[^&\n]*", text)]
    assert installs == [
        "pip install --require-hashes -r requirements/runtime.txt",
        "pip install --no-deps .",
    ]
    assert "pip check" in text


def test_postgres_gets_its_password_and_no_bot_secret():
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    postgres = compose["services"]["postgres"]
    assert postgres["env_file"] == "postgres.env"
    example = (ROOT / "deploy" / "postgres.env.example").read_text()
    keys = {
        line.partition("=")[0]
        for line in example.splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert keys == {"POSTGRES_PASSWORD"}
    assert "POSTGRES_PASSWORD" not in (ROOT / "deploy" / "quizbot.env.example").read_text().replace(
        "POSTGRES_PASSWORD in deploy/postgres.env", ""
    )


# ------------------------------------------------------------------------------- make audit


def audit_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quizbot_audit", ROOT / "deploy" / "audit.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


REPORT_VULNERABLE = {
    "dependencies": [
        {"name": "jinja2", "version": "3.1.6", "vulns": []},
        {
            "name": "aiohttp",
            "version": "3.13.2",
            "vulns": [
                {
                    "id": "GHSA-6mq8-rvhq-8wgg",
                    "aliases": ["CVE-2025-69223"],
                    "fix_versions": ["3.13.3"],
                }
            ],
        },
    ]
}
REPORT_SKIPPED = {
    "dependencies": [
        {"name": "aiohttp", "skip_reason": "Dependency not found on PyPI and could not be audited"}
    ]
}


def test_audit_fails_on_a_found_vulnerability(monkeypatch, capsys):
    audit = audit_module()
    monkeypatch.setattr(
        audit, "run_pip_audit", lambda lock, service: audit.read_report(REPORT_VULNERABLE)
    )
    assert audit.main([str(RUNTIME)]) == 1
    out = capsys.readouterr().out
    assert "VULNERABLE aiohttp 3.13.2: GHSA-6mq8-rvhq-8wgg (CVE-2025-69223), fixed in 3.13.3" in out


def test_audit_says_so_and_passes_when_no_database_answers(monkeypatch, capsys):
    audit = audit_module()
    asked = []

    def unreached(lock, service):
        asked.append(service)
        return None if service == "osv" else audit.read_report(REPORT_SKIPPED)

    monkeypatch.setattr(audit, "run_pip_audit", unreached)
    assert audit.main([str(RUNTIME)]) == 0
    out = capsys.readouterr().out
    assert asked == ["pypi", "osv"]
    assert "NOT AUDITED: " in out and "no known vulnerabilities" not in out


def test_audit_passes_a_clean_report_and_says_what_it_checked(monkeypatch, capsys):
    audit = audit_module()
    clean = {"dependencies": [{"name": "jinja2", "version": "3.1.6", "vulns": []}]}
    monkeypatch.setattr(audit, "run_pip_audit", lambda lock, service: audit.read_report(clean))
    assert audit.main([str(RUNTIME), str(TEST)]) == 0
    out = capsys.readouterr().out
    assert "pypi: 1 audited, 0 skipped, 0 known vulnerabilities" in out
    assert "no known vulnerabilities in the locked dependencies" in out
