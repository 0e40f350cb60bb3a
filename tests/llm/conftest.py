from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agents.llm.anthropic import AnthropicClient
from agents.llm.connections import close_shared_clients
from agents.llm.openai import OpenAIClient
from tests.fake_llm.server import FakeLLMServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@pytest.fixture(autouse=True)
async def _close_sdk_clients() -> AsyncIterator[None]:
    """Close the test loop's pooled SDK connections before the loop goes away."""
    yield
    await close_shared_clients()


@pytest.fixture
def anthropic_client(fake_llm: FakeLLMServer) -> AnthropicClient:
    return AnthropicClient(api_key="test-anthropic-key", base_url=fake_llm.base_url_anthropic)


@pytest.fixture
def openai_client(fake_llm: FakeLLMServer) -> OpenAIClient:
    return OpenAIClient(api_key="test-openai-key", base_url=fake_llm.base_url_openai)


@pytest.fixture(params=["anthropic", "openai"])
def vendor_client(request: pytest.FixtureRequest, fake_llm: FakeLLMServer) -> AnthropicClient | OpenAIClient:
    """Each SDK-backed client in turn."""
    if request.param == "anthropic":
        return AnthropicClient(api_key="test-anthropic-key", base_url=fake_llm.base_url_anthropic)
    return OpenAIClient(api_key="test-openai-key", base_url=fake_llm.base_url_openai)


@pytest.fixture(params=[True, False], ids=["streamed", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)
