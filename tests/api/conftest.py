from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import Organization, User
from agents import services
from agents.models import Agent
from tests.conftest import Cast
from tests.factories import api_key_for
from tests.fake_llm.server import FakeLLMServer
from tests.tool_sources import DICE_SOURCE
from tools.services import tool_upsert_from_source

CAPTURE = Path(__file__).parent / "fixtures" / "letta_wire" / "letta-0.13.0_approvals.json"


def api_client(organization: Organization, user: User | None = None) -> APIClient:
    """A DRF client authenticated with a fresh API key of ``organization``."""
    _, raw_key = api_key_for(organization, user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


@pytest.fixture
def alice_api(cast: Cast) -> APIClient:
    return api_client(cast.org_a, cast.alice)


@pytest.fixture
def charlie_api(cast: Cast) -> APIClient:
    return api_client(cast.org_b, cast.charlie)


@pytest.fixture
def claude(cast: Cast, settings: Any, fake_llm: FakeLLMServer) -> Agent:
    """An integrator's agent: one source tool, no base tools, the Anthropic path against the fake model."""
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    return services.agent_create(
        organization=cast.org_a,
        name="claude",
        model="anthropic/claude-sonnet-4-5-20250929",
        tool_ids=[dice.public_id],
        include_base_tools=False,
    )


@pytest.fixture(scope="session")
def letta_capture() -> list[dict[str, Any]]:
    """HTTP exchanges of a real Letta 0.13.0 server running seed 000 (see ``fixtures/letta_wire/README.md``)."""
    return json.loads(CAPTURE.read_text())


def captured_messages(capture: list[dict[str, Any]], message_type: str) -> list[dict[str, Any]]:
    """The LettaMessages of ``message_type`` that Letta returned from ``messages.list``."""
    return [
        message
        for exchange in capture
        if exchange["method"] == "GET" and "/messages" in exchange["path"]
        for message in exchange["response_body"]
        if message["message_type"] == message_type
    ]


def captured_response(capture: list[dict[str, Any]], method: str, path_prefix: str) -> Any:
    return next(e["response_body"] for e in capture if e["method"] == method and e["path"].startswith(path_prefix))
