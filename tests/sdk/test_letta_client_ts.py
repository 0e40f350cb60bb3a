"""The TypeScript SDK (``@letta-ai/letta-client`` 1.12.1, the most downloaded Letta client) on every
``conversations`` method and on agent files (every example of ``tests/agentfiles/fixtures/`` imported,
answering, exported and imported again): ``driver_ts.mjs`` runs each scenario once against one live server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.sdk.conftest import run_ts_driver
from tests.support.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]

SCENARIOS = [
    "conversations_create_retrieve_update_list_delete",
    "conversations_messages_create_and_list",
    "conversations_fork_recompile_compact",
    "conversations_cancel_and_stream",
    "conversations_share_blocks_keep_histories",
]
AGENT_FILE_SCENARIOS = [
    "agentfiles_import_every_example_file",
    "agentfiles_answer_export_reimport_and_refuse_a_bad_file",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    with start_live_server(tmp_path_factory.mktemp("sdk-ts"), extra_env=fake_llm_server.server_env()) as live:
        yield live


@pytest.fixture(scope="module")
def report(server: LiveServer, fake_llm_server: FakeLLMServer) -> dict[str, Any]:
    fake_llm_server.reset()
    return run_ts_driver(server, fake_llm_server, SCENARIOS + AGENT_FILE_SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conversations_scenario_passes_with_the_typescript_sdk(report, scenario: str) -> None:
    outcome = report[scenario]
    assert outcome["ok"], outcome["error"]


@pytest.mark.parametrize("scenario", AGENT_FILE_SCENARIOS)
def test_the_agent_file_scenario_passes_with_the_typescript_sdk(report, scenario: str) -> None:
    outcome = report[scenario]
    assert outcome["ok"], outcome["error"]
