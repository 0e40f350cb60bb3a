"""A database of its own for a live server, on the engine the suite runs on.

When the suite runs on Postgres (``DATABASE_URL``), a live server gets a fresh
Postgres database beside the suite's (dropped afterwards), so what only Postgres
refuses (NUL characters, unpaired surrogates) fails there as in production;
otherwise a SQLite file. Each server has its own, so parallel workers never share one.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@contextlib.contextmanager
def scratch_database(folder: Path) -> Iterator[str]:
    """The ``DATABASE_URL`` of an empty database for one live server."""
    suite_url = os.environ.get("DATABASE_URL", "")
    if not suite_url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{folder / 'live.sqlite3'}"
        return
    parts = urlsplit(suite_url)
    name = f"{parts.path.lstrip('/') or 'agentserver'}_live_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield parts._replace(path=f"/{name}").geturl()
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
