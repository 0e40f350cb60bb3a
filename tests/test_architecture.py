"""Structural rules of the code base, checked on its source (DESIGN §14, STYLE 19a-19c).

The rooms of the code base are layered (``LAYERS``, lowest first): a module imports only its
own layer or lower ones, ``accounts`` and ``tools`` import nothing of ``agents``, the transports
(``TRANSPORTS``) never import each other, and no import sits inside a function but in
``AppConfig.ready`` or where ``FUNCTION_IMPORTS`` says why. ``TYPE_CHECKING`` imports are
annotations only: they are not edges of the layering. Each failure lists every offending import.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
# The project's own apps (those with a folder here), with ``core`` and ``config`` that are not apps.
PACKAGES = ("core", *(app for app in settings.INSTALLED_APPS if (ROOT / app).is_dir()), "config")
RUN_STATE_FIELDS = {"status", "stop_reason", "error", "started_at", "completed_at", "heartbeat_at"}

# Lowest first. A module belongs to the layer of its most specific pattern (an exact name beats
# a ``.*`` pattern, a longer pattern a shorter one); it may import its own layer and lower ones.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "core, accounts, tools and providers",
        ("core", "core.*", "accounts", "accounts.*", "tools", "tools.*", "providers", "providers.*"),
    ),
    ("errors, llm and the database", ("agents.errors", "agents.llm", "agents.llm.*", "agents.database")),
    ("engine", ("agents.engine", "agents.engine.*")),
    (
        "models",
        (
            "agents.models",
            "agents.memory.models",
            "agents.conversations",
            "agents.conversations.models",
            "folders.models",
            "folders.errors",
            "folders.filetypes",
            "folders.chunking",
            "folders.convert",
            "folders.parsing",
        ),
    ),
    ("wire", ("agents.wire", "agents.wire.*", "folders.wire")),
    (
        "services, selectors, memory and broadcast",
        (
            "agents.services",
            "agents.selectors",
            "agents.tool_calls",
            "agents.memory",
            "agents.memory.*",
            "agents.broadcast",
            "agents.sockets",
            "agents.conversations.*",
            "folders.*",
        ),
    ),
    ("runs", ("agents.runs", "agents.runs.*")),
    ("approvals", ("agents.approvals", "agents.approvals.*")),
    (
        "transports",
        (
            "agents.chat",
            "agents.chat.*",
            "agents.api",
            "agents.api.*",
            "agents.views",
            "agents.forms",
            "agents.admin",
            "folders.views",
            "folders.admin",
        ),
    ),
    ("mcp servers", ("mcp_servers", "mcp_servers.*")),
    (
        "maintenance, urls, apps, commands, onboarding and config",
        (
            "agents",
            "agents.maintenance",
            "agents.urls",
            "agents.routing",
            "agents.apps",
            "agents.management",
            "agents.management.*",
            "folders",
            "folders.apps",
            "folders.urls",
            "onboarding",
            "onboarding.*",
            "agentfiles",
            "agentfiles.*",
            "config",
            "config.*",
        ),
    ),
]
# The transports of one layer that never import each other.
TRANSPORTS: dict[str, tuple[str, ...]] = {
    "chat": ("agents.chat", "agents.chat.*"),
    "api": ("agents.api", "agents.api.*"),
    "pages": ("agents.views", "agents.forms", "folders.views"),
    "admin": ("agents.admin", "folders.admin"),
}
# Imports inside a function, besides ``AppConfig.ready`` (where Django wants signal wiring and
# checks registered), each with the reason it cannot sit at the top of its module:
# ``(module, function): reason``.
FUNCTION_IMPORTS: dict[tuple[str, str], str] = {}

# Sizes in agents/, tools/ and accounts/ (migrations aside).
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
SIZE_CHECKED = ("agents", "tools", "accounts", "providers", "folders")
# ``module`` or ``module:function`` that may stay bigger: why.
LONG_ALLOWED: dict[str, str] = {}


@dataclass(frozen=True)
class Import:
    """One import statement's target, as the module it names in this code base."""

    module: str
    line: int
    target: str
    in_function: str | None  # the enclosing function's qualified name, when inside one


def source_files(packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    return [
        path
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in source_files()}


def runtime_imports(tree: ast.Module, module: str) -> set[str]:
    """Modules ``module`` imports when it runs, function-local imports included (not ``TYPE_CHECKING`` ones)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join([*module.split(".")[: -node.level], node.module])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def all_imports(tree: ast.Module) -> set[str]:
    """Every module named by an import anywhere in the file (functions and ``TYPE_CHECKING`` included)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def resolve(name: str) -> str | None:
    """The module of this code base that ``name`` is, or lives in (``agents.models.Agent`` → ``agents.models``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, tree: ast.Module, *, type_checking: bool = False) -> list[Import]:
    """The imports ``module`` runs, resolved to modules of the code base; ``TYPE_CHECKING`` ones too if asked."""
    found: list[Import] = []

    def add(name: str, node: ast.stmt, function: str | None) -> None:
        target = resolve(name)
        if target is not None and target != module:
            found.append(Import(module=module, line=node.lineno, target=target, in_function=function))

    def visit(node: ast.AST, scope: list[str], function: str | None) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) and not type_checking:
            for child in node.orelse:
                visit(child, scope, function)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node, function)
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            base = node.module or ""
            if node.level:
                package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = ".".join(part for part in (package, base) if part)
            for alias in node.names:
                add(f"{base}.{alias.name}", node, function)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            scope = [*scope, node.name]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                function = ".".join(scope)
        for child in ast.iter_child_nodes(node):
            visit(child, scope, function)

    visit(tree, [], None)
    return list(dict.fromkeys(found))


def all_imports_in(packages: tuple[str, ...], *, type_checking: bool = False) -> list[Import]:
    return [
        found
        for path in source_files(packages)
        for found in imports_of(
            module_name(path), ast.parse(path.read_text(), filename=str(path)), type_checking=type_checking
        )
    ]


def most_specific(module: str, groups: dict[str, tuple[str, ...]]) -> str | None:
    """The group whose most specific pattern matches ``module`` (exact names first, then the longest)."""
    matches = [
        (not pattern.endswith(".*"), len(pattern), group)
        for group, patterns in groups.items()
        for pattern in patterns
        if module == pattern or fnmatch.fnmatchcase(module, pattern)
    ]
    return max(matches)[2] if matches else None


LAYER_INDEX = {name: index for index, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    layer = most_specific(module, dict(LAYERS))
    assert layer is not None, f"{module} is in no layer of LAYERS: add it to the table"
    return layer


def where(found: Import) -> str:
    inside = f" (in {found.in_function})" if found.in_function else ""
    return f"{MODULES[found.module].relative_to(ROOT)}:{found.line} {found.module} imports {found.target}{inside}"


def app_config_ready_methods() -> set[tuple[str, str]]:
    """``(module, "Class.ready")`` of every ``AppConfig`` subclass."""
    methods = set()
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any("AppConfig" in ast.unparse(base) for base in node.bases):
                methods.update(
                    (module, f"{node.name}.ready")
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and item.name == "ready"
                )
    return methods


def upward(imports: list[Import]) -> list[str]:
    return [
        f"{where(found)}: layer {layer_of(found.module)!r} is below {layer_of(found.target)!r}"
        for found in imports
        if LAYER_INDEX[layer_of(found.target)] > LAYER_INDEX[layer_of(found.module)]
    ]


def into_agents(imports: list[Import]) -> list[str]:
    return [where(found) for found in imports if layer_of(found.target) != LAYERS[0][0]]


def across_transports(imports: list[Import]) -> list[str]:
    across = []
    for found in imports:
        source, target = most_specific(found.module, TRANSPORTS), most_specific(found.target, TRANSPORTS)
        if source and target and source != target:
            across.append(f"{where(found)}: transport {source!r} imports transport {target!r}")
    return across


def in_functions(imports: list[Import], allowed: set[tuple[str, str]]) -> list[str]:
    return [where(found) for found in imports if found.in_function and (found.module, found.in_function) not in allowed]


def test_every_module_is_in_a_layer() -> None:
    unplaced = [module for module in MODULES if most_specific(module, dict(LAYERS)) is None]

    assert unplaced == [], f"Modules in no layer of LAYERS: {unplaced}"


def test_imports_go_down_the_layers_only() -> None:
    found = upward(all_imports_in(PACKAGES))

    problem = "Imports up the layers (a lower room calling a higher one needs a protocol or a registry):"
    assert found == [], "\n".join([problem, *found])


def test_accounts_and_tools_import_nothing_of_agents() -> None:
    found = into_agents(all_imports_in(("accounts", "tools"), type_checking=True))

    problem = "accounts and tools import nothing of agents, onboarding or config, not even for annotations:"
    assert found == [], "\n".join([problem, *found])


def test_the_transports_never_import_each_other() -> None:
    found = across_transports(all_imports_in(("agents",)))

    problem = "The transports (chat, api, pages, admin) never import each other:"
    assert found == [], "\n".join([problem, *found])


def test_no_import_sits_in_a_function_unless_its_reason_is_written_down() -> None:
    found = in_functions(all_imports_in(PACKAGES), app_config_ready_methods() | FUNCTION_IMPORTS.keys())

    problem = (
        "Imports inside functions (move each to the top of its module, or break the cycle with a protocol "
        "or a registry; an exception that must stay goes in FUNCTION_IMPORTS with its reason):"
    )
    assert found == [], "\n".join([problem, *found])


def test_the_function_import_exceptions_still_exist() -> None:
    present = {(found.module, found.in_function) for found in all_imports_in(PACKAGES) if found.in_function}

    assert FUNCTION_IMPORTS.keys() <= present, f"Stale FUNCTION_IMPORTS entries: {FUNCTION_IMPORTS.keys() - present}"


SAMPLE = """
from typing import TYPE_CHECKING

from agents.models import Agent
from agents.api import views

if TYPE_CHECKING:
    from agents.chat.actions import chat_send


class Checker:
    def check(self) -> None:
        from agents.runs import start
"""


def test_the_checks_see_upward_imports_at_module_and_function_level_but_not_type_checking_ones() -> None:
    imports = imports_of("agents.engine.loop", ast.parse(SAMPLE))

    assert [(found.target, found.in_function) for found in imports] == [
        ("agents.models", None),
        ("agents.api.views", None),
        ("agents.runs.start", "Checker.check"),
    ]
    assert [problem.partition(": ")[2] for problem in upward(imports)] == [
        "layer 'engine' is below 'models'",
        "layer 'engine' is below 'transports'",
        "layer 'engine' is below 'runs'",
    ]
    assert in_functions(imports, allowed=set()) == [
        "agents/engine/loop.py:13 agents.engine.loop imports agents.runs.start (in Checker.check)"
    ]
    assert in_functions(imports, allowed={("agents.engine.loop", "Checker.check")}) == []


def test_the_checks_see_accounts_importing_agents_even_for_annotations_and_transports_importing_each_other() -> None:
    from_accounts = into_agents(imports_of("accounts.services", ast.parse(SAMPLE), type_checking=True))
    from_pages = across_transports(imports_of("agents.views", ast.parse(SAMPLE)))
    from_api = across_transports(imports_of("agents.api.agents", ast.parse(SAMPLE)))

    assert [problem.split(" imports ")[1].split()[0] for problem in from_accounts] == [
        "agents.models",
        "agents.api.views",
        "agents.chat.actions",
        "agents.runs.start",
    ]
    assert [problem.partition(": ")[2] for problem in from_pages] == ["transport 'pages' imports transport 'api'"]
    assert from_api == []


def sizes() -> dict[str, tuple[str, int, int]]:
    """``module`` and ``module:function`` of agents/, tools/ and accounts/ → (where, lines, the limit)."""
    measured = {}
    for path in source_files(SIZE_CHECKED):
        module, source = module_name(path), path.read_text()
        measured[module] = (str(path.relative_to(ROOT)), len(source.splitlines()), MAX_MODULE_LINES)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                place = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                measured[f"{module}:{node.name}"] = (place, length, MAX_FUNCTION_LINES)
    return measured


def test_no_module_over_500_lines_and_no_function_over_80() -> None:
    too_long = [
        f"{place}: {lines} lines (at most {limit})"
        for name, (place, lines, limit) in sizes().items()
        if lines > limit and name not in LONG_ALLOWED
    ]

    assert too_long == [], "\n".join(["Too long (split it, or say in LONG_ALLOWED why it stays):", *too_long])


def test_what_may_stay_long_still_is() -> None:
    measured = sizes()
    stale = [name for name in LONG_ALLOWED if name not in measured or measured[name][1] <= measured[name][2]]

    assert stale == [], f"LONG_ALLOWED entries no longer needed: {stale}"


def test_only_the_run_state_module_writes_a_runs_status_stop_reason_error_or_timings() -> None:
    writers = set()
    for path in source_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update":
                receiver = ast.unparse(node.func.value)
                keywords = {k.arg for k in node.keywords}
                if receiver.startswith("Run.objects") and keywords & RUN_STATE_FIELDS:
                    writers.add(module_name(path))
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr in RUN_STATE_FIELDS
                        and "run" in ast.unparse(target.value).lower()
                    ):
                        writers.add(module_name(path))

    assert writers == {"agents.runs.state"}


def test_the_rest_package_is_imported_only_by_url_routing() -> None:
    importers = set()
    for path in source_files():
        module = module_name(path)
        if module.startswith("agents.api"):
            continue
        if any(name.startswith("agents.api") for name in all_imports(ast.parse(path.read_text()))):
            importers.add(module)

    # ``agentfiles`` serves its own ``/v1`` routes on the API's base view (above ``agents``, like ``config``).
    assert importers <= {"config.urls", "agentfiles.api", "agentfiles.urls"}


def test_agents_has_no_import_cycle() -> None:
    modules = {module_name(path): path for path in source_files() if module_name(path).startswith("agents")}
    graph = {
        module: {name for name in runtime_imports(ast.parse(path.read_text()), module) if name in modules} - {module}
        for module, path in modules.items()
    }
    # A package's ``__init__`` is not an edge back to its modules.
    graph = {module: {dep for dep in deps if not module.startswith(dep + ".")} for module, deps in graph.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep) :], dep] if dep in stack else [module, dep])
            elif dep not in state:
                visit(dep, [*stack, dep])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])

    assert cycles == []
