"""Two web processes and two Celery workers on one Postgres and one Redis (``stack.ProcessStack``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tests.crossprocess.stack import ProcessStack, process_stack
from tests.support.databases import scratch_database
from tests.support.live_chat import redis_test_url

if TYPE_CHECKING:
    from collections.abc import Iterator

NEEDS_SERVICES = (
    "several web processes and workers share one Postgres and one Redis: "
    "set DATABASE_URL=postgres://… and REDIS_URL=redis://… to run the cross-process tests"
)


def services_configured() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")) and bool(
        os.environ.get("REDIS_URL")
    )


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessStack]:
    """web-1 and web-2 (Daphne), worker-1 and worker-2 (Celery), a short turn lease (stale after 2 x 2 s)."""
    if not services_configured():
        pytest.skip(NEEDS_SERVICES)
    folder = tmp_path_factory.mktemp("crossprocess")
    extra_env = {"DEMO_TOKEN_DELAY": "0.1", "AGENT_TURN_LOCK_SECONDS": "2"}
    with (
        scratch_database(folder) as database_url,
        process_stack(folder, database_url=database_url, redis_url=redis_test_url(), extra_env=extra_env) as started,
    ):
        started.start(webs=("web-1", "web-2"), workers=("worker-1", "worker-2"))
        yield started
