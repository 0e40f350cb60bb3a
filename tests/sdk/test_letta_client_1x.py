"""A day-one integrator on letta-client 1.12.0 and 1.12.1 (what ``pip install letta-client`` gives).

Each version runs every scenario of ``driver.py`` once, in one subprocess, against one
live server (with the fake Anthropic); each test reads its scenario's outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.sdk.conftest import VERSIONS, run_driver
from tests.sdk.seed_000_1x import FLOWS
from tests.support.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]


# Seed 000's flows use ``tools.upsert_from_function``, which 1.12.1 no longer has.
SEED_VERSION = "1.12.0"
# Seed 000's flows again, with an OpenAI-wire model (see ``seed_000_1x``'s docstring).
OPENAI_MODEL = "openai/gpt-4o-mini"
SCENARIOS = [
    "create_update_retrieve_delete",
    "iterate_agents_across_pages",
    "iterate_an_agents_tools",
    "attach_and_detach_a_tool",
    "update_approval_in_the_body",
    "reset_messages",
    "cancel_a_background_run",
    "cancel_a_streamed_turn",
    "cancel_a_blocking_turn",
    "list_runs",
    "client_side_tool_returns",
    "streaming_through_create",
    "a_conflict_is_sent_once",
    "steps_carry_their_run",
    "edit_and_approve_then_read_the_audit",
    "compaction_messages_when_asked",
    # The twelve ``conversations`` methods (``conversations_1x``).
    "conversations_create_retrieve_update_list_delete",
    "conversations_messages_create_and_list",
    "conversations_fork_recompile_compact",
    "conversations_cancel_and_stream",
    "conversations_share_blocks_keep_histories",
    "conversations_run_at_once_and_lose_no_block_edit",
    # Folders and files (``folders_1x``, issue 27).
    "folders_upload_process_attach_and_grep",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    env = fake_llm_server.server_env(openai=True)
    with start_live_server(tmp_path_factory.mktemp("sdk-1x"), extra_env=env) as live:
        yield live


@pytest.fixture(scope="module")
def reports(server: LiveServer, fake_llm_server: FakeLLMServer) -> dict[str, dict[str, Any]]:
    fake_llm_server.reset()
    return {
        version: run_driver(
            version, server, fake_llm_server, SCENARIOS + (list(FLOWS) if version == SEED_VERSION else [])
        )
        for version in VERSIONS
    }


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("version", VERSIONS)
def test_the_scenario_passes_with_letta_client_1x(reports, version: str, scenario: str) -> None:
    outcome = reports[version][scenario]
    assert outcome["ok"], outcome["error"]


@pytest.mark.parametrize("flow", list(FLOWS))
def test_seed_000s_flow_passes_in_1x_idioms(reports, flow: str) -> None:
    outcome = reports[SEED_VERSION][flow]
    assert outcome["ok"], outcome["error"]


@pytest.fixture(scope="module")
def openai_report(reports, server: LiveServer, fake_llm_server: FakeLLMServer) -> dict[str, Any]:
    return run_driver(SEED_VERSION, server, fake_llm_server, list(FLOWS), model=OPENAI_MODEL)


@pytest.mark.parametrize("flow", list(FLOWS))
def test_seed_000s_flow_passes_with_an_openai_model(openai_report, flow: str) -> None:
    outcome = openai_report[flow]
    assert outcome["ok"], outcome["error"]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_conflict_reaches_the_server_once(reports, server: LiveServer, version: str) -> None:
    facts = reports[version]["a_conflict_is_sent_once"]["facts"]
    path = f"/v1/agents/{facts['agent_id']}/messages"

    posts = [line for line in server.log().splitlines() if f'"POST {path}"' in line]

    assert facts["sent"] == 1
    assert facts["detail"]["detail"]["code"] == "PENDING_APPROVAL"
    assert [line.split('"')[2].split()[0] for line in posts] == ["200", "409"], posts
    assert (facts["runs"], facts["refused_stored"]) == (1, 0)


@pytest.mark.parametrize("version", VERSIONS)
def test_approval_extensions_reach_1x_as_extra_fields(reports, version: str) -> None:
    item = reports[version]["edit_and_approve_then_read_the_audit"]["facts"]["item"]
    assert item["arguments"] == {"input_text": "edited by a person"}
    assert item["original_arguments"] is not None and item["original_arguments"] != item["arguments"]
    assert (item["transport"], item["always_allow"], item["decided_by_user_id"]) == ("api", False, None)
    assert item["decided_by"].startswith("API key ") and item["decided_by_api_key_id"] is not None
    assert item["decided_at"]


@pytest.mark.parametrize("version", VERSIONS)
def test_iterating_seven_agents_two_at_a_time_takes_four_pages_and_the_empty_one(reports, version: str) -> None:
    # Four pages of 2, 2, 2 and 1 agents, then the empty page 1.x asks for before it stops.
    assert reports[version]["iterate_agents_across_pages"]["facts"]["requests"] == 5


@pytest.mark.parametrize("version", VERSIONS)
def test_a_pdf_a_docx_and_markdown_reach_completed_through_1x_with_progress_seen(reports, version: str) -> None:
    statuses = reports[version]["folders_upload_process_attach_and_grep"]["facts"]["statuses"]
    assert {name: seen[-1] for name, seen in statuses.items()} == dict.fromkeys(
        ("guide.pdf", "handbook.docx", "notes.md"), "completed"
    )
    # The upload answers before processing ends, so a status on the way is seen before ``completed``.
    assert all(seen[0] in ("pending", "parsing") and len(seen) >= 2 for seen in statuses.values()), statuses
