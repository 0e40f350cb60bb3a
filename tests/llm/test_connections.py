"""SDK clients are shared within a loop, never across loops, and can be closed."""

from __future__ import annotations

import asyncio

from agents.llm import connections
from agents.llm.anthropic import AnthropicClient
from agents.llm.connections import close_shared_clients, shared_sdk_client


async def test_one_configuration_shares_one_sdk_client_on_a_loop() -> None:
    first = AnthropicClient(api_key="k", base_url="http://127.0.0.1:1")._sdk()
    again = AnthropicClient(api_key="k", base_url="http://127.0.0.1:1")._sdk()
    other_key = AnthropicClient(api_key="other", base_url="http://127.0.0.1:1")._sdk()

    assert first is again
    assert other_key is not first
    assert first.max_retries == 0


def test_another_loop_gets_its_own_client_and_closed_loops_are_forgotten() -> None:
    async def client_on_this_loop() -> tuple[asyncio.AbstractEventLoop, object]:
        return asyncio.get_running_loop(), shared_sdk_client("key", object)

    first_loop, first = asyncio.run(client_on_this_loop())
    second_loop, second = asyncio.run(client_on_this_loop())

    assert first is not second
    assert first_loop not in connections._per_loop
    assert second_loop in connections._per_loop


async def test_closing_the_shared_clients_closes_them_and_starts_afresh() -> None:
    sdk = AnthropicClient(api_key="k", base_url="http://127.0.0.1:1")._sdk()

    await close_shared_clients()

    assert sdk.is_closed()
    assert AnthropicClient(api_key="k", base_url="http://127.0.0.1:1")._sdk() is not sdk
