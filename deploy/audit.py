"""Audit the locked dependencies with pip-audit: fail on a known vulnerability, pass unreached.

Usage: python deploy/audit.py LOCK [LOCK ...]

Each advisory database pip-audit knows (PyPI's, then OSV's) is asked in turn until one answers
for the locked versions. A vulnerability in any lock exits 1 with its id and the fixed versions.
When no database can be reached (a closed network, or an index mirror without PyPI's
per-version API) it says so in one block and exits 0: an audit that did not run is reported as
not run, never as clean.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SERVICES = ("pypi", "osv")
TIMEOUT_S = 20


@dataclass
class Verdict:
    """What one pip-audit run found in one lock."""

    audited: int = 0
    skipped: int = 0
    vulnerable: list[str] = field(default_factory=list)


def read_report(report: dict[str, object]) -> Verdict:
    """Count the audited, skipped and vulnerable dependencies in a pip-audit JSON report."""
    verdict = Verdict()
    deps = report.get("dependencies", [])
    assert isinstance(deps, list)
    for dep in deps:
        if "skip_reason" in dep:
            verdict.skipped += 1
            continue
        verdict.audited += 1
        for vuln in dep.get("vulns", []):
            fixed = ", ".join(vuln.get("fix_versions", [])) or "no fixed version"
            aliases = ", ".join(vuln.get("aliases", []))
            name = f"{vuln['id']} ({aliases})" if aliases else vuln["id"]
            verdict.vulnerable.append(f"{dep['name']} {dep['version']}: {name}, fixed in {fixed}")
    return verdict


def run_pip_audit(lock: Path, service: str) -> Verdict | None:
    """Run pip-audit on one lock against one database; None when it could not run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip_audit",
            "--requirement",
            str(lock),
            "--require-hashes",
            "--disable-pip",
            "--vulnerability-service",
            service,
            "--timeout",
            str(TIMEOUT_S),
            "--progress-spinner",
            "off",
            "--format",
            "json",
            "--output",
            str(out),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if not out.exists() or not out.read_text().strip():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"  {service}: not reached ({last[:160]})")
            return None
        return read_report(json.loads(out.read_text()))


def audit(lock: Path) -> tuple[bool, list[str]]:
    """Audit one lock: (whether a database answered, the vulnerabilities found)."""
    for service in SERVICES:
        verdict = run_pip_audit(lock, service)
        if verdict is None:
            continue
        if verdict.audited == 0:
            print(f"  {service}: answered for none of the {verdict.skipped} locked versions")
            continue
        print(
            f"  {service}: {verdict.audited} audited, {verdict.skipped} skipped, "
            f"{len(verdict.vulnerable)} known vulnerabilities"
        )
        return True, verdict.vulnerable
    return False, []


def main(argv: list[str]) -> int:
    """Audit every lock named on the command line; exit 1 on a known vulnerability."""
    if not argv:
        print("usage: python deploy/audit.py LOCK [LOCK ...]", file=sys.stderr)
        return 2
    unreached: list[str] = []
    found: list[str] = []
    for name in argv:
        lock = Path(name)
        print(f"pip-audit {lock}:")
        reached, vulns = audit(lock)
        if not reached:
            unreached.append(name)
        found.extend(vulns)
    for line in found:
        print(f"VULNERABLE {line}")
    if found:
        print(f"pip-audit: {len(found)} known vulnerabilities in the locked dependencies.")
        return 1
    if unreached:
        print("=" * 72)
        print(f"pip-audit: NOT AUDITED: {', '.join(unreached)}")
        print("No advisory database (PyPI's JSON API, OSV) could be reached from here.")
        print("Nothing is known to be wrong, and nothing was checked: run make audit")
        print("where the network reaches pypi.org or api.osv.dev.")
        print("=" * 72)
        return 0
    print("pip-audit: no known vulnerabilities in the locked dependencies.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
