"""Each test carries the markers of what it needs beyond the test process, and no other.

The markers (``pyproject.toml``): ``live_server`` (a real server process), ``browser``
(headless Chromium), ``worker`` (a real Celery worker) and ``sdk`` (a real letta-client).
What a test needs is read from its source and the sources of the fixtures it asks for
(the module's own and its folders' ``conftest.py``), through the names below. A marker
goes on the module (``pytestmark``) when every test of the module needs it, otherwise on
the tests that do.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MARKERS = frozenset({"live_server", "browser", "worker", "sdk"})

LIVE_AND_WORKER = frozenset({"live_server", "worker"})
BROWSER = frozenset({"browser", "live_server"})
# Fixtures of tests/support (plugins) that a test asks for by parameter.
FIXTURE_NEEDS: dict[str, frozenset[str]] = {
    "letta_server": frozenset({"live_server"}),
    "sdk_client": frozenset({"live_server", "sdk"}),
    "chat_server": frozenset({"live_server"}),
    "celery_stack": LIVE_AND_WORKER,
    "browser": BROWSER,
    "page": BROWSER,
    "anonymous_page": BROWSER,
    "demo_login_state": BROWSER,
}
# Functions and methods whose call starts what the marker names.
CALL_NEEDS: dict[str, frozenset[str]] = {
    "start_live_server": frozenset({"live_server"}),
    "start_inprocess_server": frozenset({"live_server"}),
    "start_chat_server": frozenset({"live_server"}),
    "process_stack": LIVE_AND_WORKER,
    "start_worker": LIVE_AND_WORKER,
    "Letta": frozenset({"sdk"}),
    "run_driver": frozenset({"sdk"}),
    "run_ts_driver": frozenset({"sdk"}),
    "sdk_python": frozenset({"sdk"}),
}


@dataclass
class Function:
    """A test or a fixture: the fixtures it asks for, what its own body needs, its own markers."""

    parameters: set[str]
    needs: set[str]
    markers: set[str] = field(default_factory=set)


def mark_name(node: ast.expr) -> str | None:
    """``X`` of ``pytest.mark.X`` or ``pytest.mark.X(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "pytest.mark":
        return node.attr
    return None


def parametrized(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The argument names a ``pytest.mark.parametrize`` decorator gives (they shadow fixtures)."""
    names: set[str] = set()
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and mark_name(decorator) == "parametrize" and decorator.args:
            first = decorator.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.update(name.strip() for name in first.value.split(","))
    return names


def read_function(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Function:
    called = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            callee = node.func
            called.add(callee.attr if isinstance(callee, ast.Attribute) else ast.unparse(callee))
    needs = {marker for name in called & CALL_NEEDS.keys() for marker in CALL_NEEDS[name]}
    parameters = {arg.arg for arg in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    markers = {name for name in map(mark_name, function.decorator_list) if name in MARKERS}
    return Function(parameters=parameters - parametrized(function), needs=needs, markers=markers)


def is_fixture(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list)


def top_level_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def module_markers(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(ast.unparse(target) == "pytestmark" for target in node.targets):
            values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            return {name for name in map(mark_name, values) if name in MARKERS}
    return set()


def fixtures_visible_from(path: Path, tree: ast.Module) -> dict[str, Function]:
    """The module's fixtures over those of each ``conftest.py`` from ``tests/`` down to its folder."""
    fixtures: dict[str, Function] = {}
    for folder in reversed([folder for folder in path.parents if folder.is_relative_to(TESTS)]):
        conftest = folder / "conftest.py"
        if conftest.exists():
            found = top_level_functions(ast.parse(conftest.read_text()))
            fixtures.update({f.name: read_function(f) for f in found if is_fixture(f)})
    fixtures.update({f.name: read_function(f) for f in top_level_functions(tree) if is_fixture(f)})
    return fixtures


def needs_of(function: Function, fixtures: dict[str, Function], seen: frozenset[str] = frozenset()) -> set[str]:
    """What ``function`` needs: its own body, the support fixtures it asks for, and its fixtures' needs."""
    needs = set(function.needs)
    for parameter in function.parameters - seen:
        needs |= FIXTURE_NEEDS.get(parameter, frozenset())
        if parameter in fixtures:
            needs |= needs_of(fixtures[parameter], fixtures, seen | {parameter})
    return needs


def marker_problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    fixtures = fixtures_visible_from(path, tree)
    on_module = module_markers(tree)
    tests = {f.name: read_function(f) for f in top_level_functions(tree) if f.name.startswith("test_")}
    where = path.relative_to(TESTS.parent)
    problems = []
    for name, test in tests.items():
        has = on_module | test.markers
        needs = needs_of(test, fixtures)
        problems += [f"{where}::{name} needs `{marker}` but is not marked" for marker in sorted(needs - has)]
        problems += [f"{where}::{name} is marked `{marker}` but needs none" for marker in sorted(has - needs)]
    return problems


def test_every_test_carries_the_markers_of_what_it_needs_and_no_other() -> None:
    problems = [problem for path in sorted(TESTS.rglob("test_*.py")) for problem in marker_problems(path)]

    assert problems == [], "Markers that do not say what the tests need:\n" + "\n".join(problems)


def test_the_check_sees_a_live_server_started_by_a_fixture_of_the_module() -> None:
    module = TESTS / "runs" / "test_run_stream.py"
    tree = ast.parse(module.read_text())
    fixtures = fixtures_visible_from(module, tree)
    [test] = [
        read_function(f)
        for f in top_level_functions(tree)
        if f.name == "test_a_background_stream_sends_token_deltas_that_add_up_to_the_stored_answer"
    ]

    assert needs_of(test, fixtures) == {"live_server"}
