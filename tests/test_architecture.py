"""Structural rules of the code base, checked on its source (DESIGN §14, STYLE 19a-19c)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agents", "tools", "accounts", "config")
RUN_STATE_FIELDS = {"status", "stop_reason", "error", "started_at", "completed_at", "heartbeat_at"}


def source_files() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


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

    assert importers <= {"config.urls"}


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
