"""The providers app sits in layer 0 beside accounts and tools: it imports none of agents, and they none of it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_providers_imports_nothing_of_agents_or_onboarding() -> None:
    offending = {
        path: sorted(name for name in names if name.split(".")[0] in {"agents", "onboarding"})
        for path, names in _imports("providers").items()
    }
    assert {path: names for path, names in offending.items() if names} == {}


def test_accounts_and_tools_never_import_providers() -> None:
    importers = {
        path
        for package in ("accounts", "tools", "core")
        for path, names in _imports(package).items()
        if any(name.split(".")[0] == "providers" for name in names)
    }
    assert importers == set()
