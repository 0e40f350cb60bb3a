"""API clients of the standard cast, and the integrator's Anthropic agent (pytest plugin, see tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import Organization, User
from agents.models import Agent
from tests.conftest import Cast
from tests.factories import AgentFactory, api_key_for
from tests.fake_llm.server import FakeLLMServer
from tests.tool_sources import DICE_SOURCE
from tools.services import tool_upsert_from_source


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
    return AgentFactory(
        organization=cast.org_a,
        name="claude",
        model="anthropic/claude-sonnet-4-5-20250929",
        tool_ids=[dice.public_id],
        include_base_tools=False,
    )
