"""Data-migration tests: move the test database to an older schema and back to the latest.

Those tests share the database with every test after them, so each must leave it at the latest
migrations of every app, also when it fails half-way (``latest_schema_afterwards``): a schema left
behind fails later tests with missing columns, in whatever order the run puts them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    """Migrate to ``targets``, or to the latest migration of every app."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets if targets is not None else executor.loader.graph.leaf_nodes())
    return executor


@pytest.fixture
def latest_schema_afterwards() -> Iterator[None]:
    yield
    migrate()
