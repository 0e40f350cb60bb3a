"""The embedded SQLite file holds every tenant's data: only the server's own user may read it."""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any

PRIVATE_MODE = 0o600


def make_sqlite_file_private(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: the SQLite file and its WAL files get mode ``0600``."""
    if connection.vendor != "sqlite":
        return
    name = str(connection.settings_dict.get("NAME") or "")
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    for path in (name, f"{name}-wal", f"{name}-shm"):
        with contextlib.suppress(FileNotFoundError):
            if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
                os.chmod(path, PRIVATE_MODE)
