"""A web process and a Celery worker on a Postgres cluster and a Redis server of their own (``services``).

Skipped unless the suite runs on Postgres and Redis (as CI does), like the cross-process tests:
the faults need the production topology, not the embedded one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.crossprocess.conftest import NEEDS_SERVICES, services_configured
from tests.crossprocess.stack import ProcessStack, process_stack
from tests.faults.services import PrivatePostgres, PrivateRedis, binaries_missing, private_postgres, private_redis

if TYPE_CHECKING:
    from collections.abc import Iterator

# A 2 s lease (stale after 4 s) and a sweep every 2 s in every process, so a dead run ends in seconds.
FAST_RECOVERY = {
    "DEMO_TOKEN_DELAY": "0.1",
    "AGENT_TURN_LOCK_SECONDS": "2",
    "RUN_SWEEP_INTERVAL_SECONDS": "2",
    "STREAM_ACCESS_RECHECK_SECONDS": "1",
}


class FaultStack:
    """The stack, and the services its faults go into."""

    def __init__(self, stack: ProcessStack, postgres: PrivatePostgres, redis: PrivateRedis) -> None:
        self.stack = stack
        self.postgres = postgres
        self.redis = redis


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    if not services_configured():
        pytest.skip(NEEDS_SERVICES)
    missing = binaries_missing()
    if missing is not None:
        pytest.skip(f"the fault tests start their own Postgres and Redis: {missing}")
    folder = tmp_path_factory.mktemp("faults")
    with (
        private_postgres() as postgres,
        private_redis() as redis,
        process_stack(folder, database_url=postgres.url, redis_url=redis.url, extra_env=FAST_RECOVERY) as stack,
    ):
        stack.start(webs=("web-1",), workers=("worker-1",))
        yield FaultStack(stack, postgres, redis)
