"""Shared archives, passage search and the small routes through letta-client 1.12.0 and 1.12.1, live."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.sdk.archives_1x import ARCHIVE_SCENARIOS
from tests.sdk.conftest import VERSIONS, run_driver
from tests.sdk.small_routes_1x import SMALL_ROUTE_SCENARIOS
from tests.support.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]
SCENARIOS = [*ARCHIVE_SCENARIOS, *SMALL_ROUTE_SCENARIOS]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    env = {"ANTHROPIC_BASE_URL": fake_llm_server.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
    with start_live_server(tmp_path_factory.mktemp("sdk-archives"), extra_env=env) as live:
        yield live


@pytest.fixture(scope="module")
def reports(server: LiveServer, fake_llm_server: FakeLLMServer) -> dict[str, dict[str, Any]]:
    return {version: run_driver(version, server, fake_llm_server, SCENARIOS) for version in VERSIONS}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("version", VERSIONS)
def test_the_scenario_passes_with_letta_client_1x(reports, version: str, scenario: str) -> None:
    outcome = reports[version][scenario]
    assert outcome["ok"], outcome["error"]
