"""The layer rules of the architecture, checked on the source, and a light ``quizbot --help``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parent.parent / "bot"

# Lower number = lower layer; a module may import only its own layer or lower ones.
LAYERS = {
    "errors": 0,
    "text": 0,
    "messages": 0,
    "bandwidth": 1,
    "engine": 2,
    "bank": 3,  # question files read and checked, and the authoring tools
    "storage": 3,
    "scheduler": 4,
    "scheduler.port": 2,  # the schedule values and store, below the storage that keeps them
    "chat": 5,
    "adapters": 6,
    "runtime": 5,
    "web": 5,
    "links": 0,
    "config": 0,
    "platforms": 0,  # the platforms' names, as the store keeps them
    "logs": 0,
    "tasks": 0,  # waiting on a call with a deadline, without cancelling it
    "ratelimit": 0,  # a per-client request allowance for public pages
    "observability": 4,
    "observability.metrics": 0,  # counters every layer may bump
    "observability.redact": 0,  # what every log line is cleaned with
    "cli": 7,
    "__main__": 8,
}
PURE = ("engine", "bank", "bandwidth")
# The chat layer sees neutral events and sends neutral actions: no platform, database or HTTP.
PLATFORM_FREE = ("chat",)
FORBIDDEN_IN_PURE = (
    "slack_bolt",
    "slack_sdk",
    "discord",
    "sqlalchemy",
    "aiosqlite",
    "asyncpg",
    "aiohttp",
    "httpx",
    "requests",
    "prometheus_client",
    "urllib3",
    "microsoft_agents",
    "msal",
    "jwt",
)
# Drawing libraries: imported inside the functions that draw, so only callers that draw pay.
HEAVY = ("matplotlib", "PIL")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _layer_of(dotted: str) -> str:
    """Return the LAYERS key for a module path below ``bot`` (longest matching prefix)."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in LAYERS:
            return key
    return parts[0]


def _layer(module_path: Path) -> str:
    rel = module_path.relative_to(BOT).with_suffix("")
    return _layer_of(".".join(p for p in rel.parts if p != "__init__") or "__init__")


def _sources() -> list[Path]:
    return sorted(p for p in BOT.rglob("*.py"))


def test_every_top_level_module_has_a_layer():
    unknown = {_layer(p) for p in _sources()} - set(LAYERS) - {"__init__"}
    assert not unknown, f"give these a layer in LAYERS: {sorted(unknown)}"


def test_imports_point_down_only():
    problems = []
    for path in _sources():
        layer = _layer(path)
        if layer == "__init__":
            continue
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] != "bot" or len(parts) < 2:
                continue
            target = _layer_of(".".join(parts[1:]))
            if target in LAYERS and LAYERS[target] > LAYERS[layer]:
                problems.append(f"{path.relative_to(BOT.parent)}:{line}: {layer} imports {module}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("package", PURE + PLATFORM_FREE)
def test_pure_and_chat_layers_import_no_platform_database_or_http_code(package: str):
    problems = []
    for path in sorted((BOT / package).rglob("*.py")):
        for line, module in _imports(path):
            if module.split(".")[0] in FORBIDDEN_IN_PURE:
                problems.append(f"{path.relative_to(BOT.parent)}:{line}: imports {module}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("package", PURE)
def test_pure_layers_draw_only_inside_functions(package: str):
    problems = []
    for path in sorted((BOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            heavy = [n for n in names if n.split(".")[0] in HEAVY]
            problems += [f"{path.relative_to(BOT.parent)}:{node.lineno}: {n}" for n in heavy]
    assert not problems, "\n".join(problems)


def test_bandwidth_takes_nothing_from_the_bot_but_its_errors():
    problems = [
        f"{path.relative_to(BOT.parent)}:{line}: imports {module}"
        for path in sorted((BOT / "bandwidth").rglob("*.py"))
        for line, module in _imports(path)
        if module.startswith("bot.") and module.split(".")[1] not in ("bandwidth", "errors")
    ]
    assert not problems, "\n".join(problems)


# What the bandwidth package tells a user goes through these: its error, and the lists of
# problems (Problems.found, a catalogue's errors, a plan's warnings) that become one.
_BANDWIDTH_SINKS = ("BandwidthError", "BandwidthError.of", "found.append", "errors.append")


def _dotted(node: ast.expr) -> str:
    """Return ``a.b.c`` for a name or attribute chain; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _is_literal_text(node: ast.expr) -> bool:
    """Return whether ``node`` is text written in place: a literal, an f-string, or built on one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_literal_text(node.left) or _is_literal_text(node.right)
    if isinstance(node, ast.IfExp):
        return _is_literal_text(node.body) or _is_literal_text(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _is_literal_text(node.func.value)
    return False


def _sentences_in_place(tree: ast.AST) -> list[int]:
    """Return the lines where a user-facing bandwidth message is built from literal text."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = _dotted(node.func)
        sink = any(name == s or name.endswith("." + s) for s in _BANDWIDTH_SINKS)
        if sink and _is_literal_text(node.args[0]):
            found.append(node.lineno)
    return found


def test_bandwidth_words_its_sentences_in_one_module():
    """Every sentence the bandwidth package shows a user is named in bot/bandwidth/_words.py."""
    problems = [
        f"{path.relative_to(BOT.parent)}:{line}: a message written in place; name it in _words.py"
        for path in sorted((BOT / "bandwidth").rglob("*.py"))
        if path.name != "_words.py"
        for line in _sentences_in_place(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert not problems, "\n".join(problems)


def test_sentences_in_place_are_found():
    written = (
        'raise BandwidthError(f"{key}= is given twice.")\n'
        'raise BandwidthError("Give a size first.", usage=USAGE)\n'
        'problems.found.append("Say how many GPUs" + tail)\n'
        'errors.append("{at}: bad".format(at=at))\n'
        'raise BandwidthError(hint if near else "none")\n'
    )
    named = (
        "raise BandwidthError(say.TOO_LONG)\n"
        "raise BandwidthError(say.ONE_OP.format(op=op, word=word))\n"
        'problems.found.append(say.OPTION_TWICE.format(key=key + "="))\n'
        "raise BandwidthError.of(self.found, usage=self.usage)\n"
    )
    assert _sentences_in_place(ast.parse(written)) == [1, 2, 3, 4, 5]
    assert _sentences_in_place(ast.parse(named)) == []


def _hidden_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Return the imports made by name, or inside a ``try`` that would swallow their failure."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name in ("import_module", "__import__"):
                found.append((node.lineno, name))
        if isinstance(node, ast.Try) and any(map(_swallows_import_errors, node.handlers)):
            for inner in (m for b in node.body for m in ast.walk(b)):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found.append((inner.lineno, "import inside try"))
    return found


def _swallows_import_errors(handler: ast.ExceptHandler) -> bool:
    """Return whether an ``except`` clause would catch a failed import."""
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    broad = {"Exception", "BaseException", "ImportError", "ModuleNotFoundError"}
    return any(isinstance(n, ast.Name) and n.id in broad for n in names)


def test_no_import_is_hidden_from_these_rules():
    """The command-line front loads its subcommands by name; it is the top layer, so nothing it
    loads can point up. Everywhere else an import is a plain statement the rules above can read.
    """
    problems = [
        f"{path.relative_to(BOT.parent)}:{line}: {how}"
        for path in _sources()
        if _layer(path) != "cli"
        for line, how in _hidden_imports(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert not problems, "\n".join(problems)


def test_hidden_imports_are_found():
    guarded = "try:\n    import bot.web\nexcept ImportError:\n    pass\n"
    narrow = "try:\n    import bot.web\nexcept KeyError:\n    pass\n"
    by_name = "import importlib\nm = importlib.import_module('bot.web')\n"
    assert _hidden_imports(ast.parse(guarded)) == [(2, "import inside try")]
    assert _hidden_imports(ast.parse(by_name)) == [(2, "import_module")]
    assert _hidden_imports(ast.parse(narrow)) == []


@pytest.mark.parametrize("package", ["bandwidth", "engine", "bank"])
def test_importing_a_pure_package_loads_no_heavy_or_platform_module(package: str):
    code = (
        f"import sys, bot.{package}\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    assert loaded.isdisjoint(FORBIDDEN_IN_PURE + HEAVY), loaded & set(FORBIDDEN_IN_PURE + HEAVY)


def test_help_imports_no_platform_library_or_matplotlib():
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "usage: quizbot" in result.stdout
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert imported, "importtime printed nothing"
    heavy = imported & {
        "discord",
        "slack_bolt",
        "slack_sdk",
        "microsoft_agents",
        "matplotlib",
        "sqlalchemy",
    }
    assert not heavy, f"quizbot --help imported {sorted(heavy)}"


def test_an_adapter_imports_no_other_adapter():
    problems = []
    for path in sorted((BOT / "adapters").rglob("*.py")):
        own = path.relative_to(BOT / "adapters").parts[0]
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[:2] == ["bot", "adapters"] and len(parts) > 2 and parts[2] != own:
                problems.append(f"{path.relative_to(BOT.parent)}:{line}: imports {module}")
    assert not problems, "\n".join(problems)


# Each platform library belongs to its adapter: no other package imports it.
PLATFORM_LIBRARIES = {
    "slack_bolt": "slack",
    "slack_sdk": "slack",
    "discord": "discord",
    "microsoft_agents": "teams",
}


def test_a_platform_library_is_imported_by_its_adapter_only():
    problems = []
    for path in _sources():
        rel = path.relative_to(BOT).parts
        adapter = rel[1] if rel[0] == "adapters" and len(rel) > 2 else None
        for line, module in _imports(path):
            owner = PLATFORM_LIBRARIES.get(module.split(".")[0])
            if owner is not None and owner != adapter:
                problems.append(f"{path.relative_to(BOT.parent)}:{line}: imports {module}")
    assert not problems, "\n".join(problems)


# Every adapter, the terminal's too, has these files: ``app.py`` what runs it (the client, the
# transport and ``serve``; the terminal's session), ``handlers.py`` its port and its exchange,
# ``render.py`` neutral content drawn for the platform. Anything more is a feature of that
# platform alone (Slack's OAuth install, its replay guard, its App Home tab), in a module named
# with a leading underscore, used by its own adapter.
ADAPTER_FILES = {"__init__.py", "app.py", "handlers.py", "render.py"}
# Within an adapter: app uses handlers, handlers use render, and never the other way round.
ADAPTER_ORDER = {"app": 2, "handlers": 1, "render": 0}


def _adapters() -> list[Path]:
    return sorted(p for p in (BOT / "adapters").iterdir() if (p / "__init__.py").exists())


def test_the_adapters_are_the_four_platforms():
    assert [p.name for p in _adapters()] == ["console", "discord", "slack", "teams"]


@pytest.mark.parametrize("adapter", _adapters(), ids=lambda p: p.name)
def test_every_adapter_has_the_same_files(adapter: Path):
    files = {p.name for p in adapter.glob("*.py")}
    assert files >= ADAPTER_FILES, f"missing: {sorted(ADAPTER_FILES - files)}"
    own = sorted(f for f in files - ADAPTER_FILES if not f.startswith("_"))
    assert not own, f"a platform's own feature goes in an underscored module: {own}"
    folders = [p.name for p in adapter.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert not folders, folders


@pytest.mark.parametrize("adapter", _adapters(), ids=lambda p: p.name)
def test_an_adapters_port_and_exchange_are_in_its_handlers(adapter: Path):
    tree = ast.parse((adapter / "handlers.py").read_text())
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    name = adapter.name.capitalize()
    assert {f"{name}Port", f"{name}Exchange"} <= classes, sorted(classes)


@pytest.mark.parametrize("adapter", _adapters(), ids=lambda p: p.name)
def test_within_an_adapter_imports_go_from_app_to_handlers_to_render(adapter: Path):
    problems = []
    for path in sorted(adapter.glob("*.py")):
        rank = ADAPTER_ORDER.get(path.stem)
        if rank is None:
            continue
        for line, module in _named_imports(path):
            parts = module.split(".")
            own = parts[:3] == ["bot", "adapters", adapter.name] and len(parts) > 3
            if own and ADAPTER_ORDER.get(parts[3], -1) > rank:
                problems.append(f"{path.relative_to(BOT.parent)}:{line}: imports {module}")
    assert not problems, "\n".join(problems)


def _named_imports(path: Path) -> list[tuple[int, str]]:
    """Return every name imported, in full (``from bot.x import y`` as ``bot.x.y``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_the_rest_of_the_bot_enters_an_adapter_through_its_app():
    problems = [
        f"{path.relative_to(BOT.parent)}:{line}: imports {module}"
        for path in _sources()
        if path.relative_to(BOT).parts[0] != "adapters"
        for line, module in _named_imports(path)
        if module.startswith("bot.adapters.") and module.split(".")[3:4] != ["app"]
    ]
    assert not problems, "\n".join(problems)


def _module_name(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _loaded_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """Return the modules of ``known`` that loading this one imports (not under TYPE_CHECKING,
    not inside a function): ``from bot.x import y`` is ``bot.x.y`` where that is a module."""
    found: set[str] = set()

    def read(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                test = node.test
                checking = getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"
                read(node.orelse if checking else node.body + node.orelse)
            elif isinstance(node, ast.Try):
                read(node.body + node.orelse + node.finalbody)
                for handler in node.handlers:
                    read(handler.body)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in known else node.module)

    read(tree.body)
    return found & known


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return each group of modules that import one another, round a circle (Tarjan's)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1 or module in graph[module]:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def test_no_import_circles() -> None:
    modules = {_module_name(p): p for p in _sources()}
    graph = {
        name: _loaded_imports(ast.parse(path.read_text(), filename=str(path)), set(modules))
        - {name}
        for name, path in modules.items()
    }
    assert _circles(graph) == []


def test_import_circles_are_found() -> None:
    known = {"bot.a", "bot.b", "bot.c", "bot.p", "bot.p.q"}
    graph = {
        "bot.a": _loaded_imports(ast.parse("from bot import b\n"), known),
        "bot.b": _loaded_imports(ast.parse("import bot.a\n"), known),
        "bot.c": _loaded_imports(ast.parse("if TYPE_CHECKING:\n    import bot.a\n"), known),
        "bot.p": _loaded_imports(ast.parse("from bot.p import q\n"), known),
        "bot.p.q": _loaded_imports(ast.parse("def f():\n    import bot.p\n"), known),
    }
    assert graph["bot.a"] == {"bot.b"} and graph["bot.c"] == set()
    assert _circles(graph) == [["bot.a", "bot.b"]]
