"""bot.bandwidth stays pure: no platform, database or HTTP library, matplotlib only when drawing."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "bot" / "bandwidth"
FORBIDDEN = (
    "slack_bolt",
    "slack_sdk",
    "discord",
    "sqlalchemy",
    "aiosqlite",
    "asyncpg",
    "aiohttp",
    "requests",
    "httpx",
    "urllib3",
    "matplotlib",
    "PIL",
)
ALLOWED_AT_TOP = {"__future__", "bot", "yaml"} | set(sys.stdlib_module_names)


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_module_imports_only_the_standard_library_yaml_and_bot(path: Path) -> None:
    assert _top_level_imports(path) <= ALLOWED_AT_TOP


def test_bot_imports_stay_inside_errors_and_the_package() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot"):
                assert node.module == "bot.errors" or node.module.startswith("bot.bandwidth"), (
                    f"{path.name} imports {node.module}"
                )


def test_importing_the_package_loads_no_heavy_or_platform_module() -> None:
    code = (
        "import sys, bot.bandwidth as b\n"
        "b.estimate(b.parse_request('1GB allreduce gpus=8'), b.load_catalogue())\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    assert loaded.isdisjoint(FORBIDDEN), loaded & set(FORBIDDEN)
