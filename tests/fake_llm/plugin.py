"""Pytest fixtures for the fake LLM server; load with ``pytest_plugins = ["tests.fake_llm.plugin"]``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.fake_llm.server import FakeLLMServer

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """One server per test session (per xdist worker), on an ephemeral port."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The shared server with an empty script and request log for this test."""
    fake_llm_server.reset()
    yield fake_llm_server
    fake_llm_server.reset()
