"""Every injected fault reaches the engine as the right ``LLMError``, from both SDKs, streamed and not."""

from __future__ import annotations

import socket

import pytest

from agents.llm.anthropic import AnthropicClient
from agents.llm.base import (
    LLMAuthenticationError,
    LLMBadRequest,
    LLMConnectionError,
    LLMContextWindowExceeded,
    LLMError,
    LLMInvalidResponse,
    LLMOverloaded,
    LLMRateLimited,
    TextDelta,
)
from agents.llm.errors import error_from_status, parse_retry_after
from agents.llm.openai import OpenAIClient
from tests.fake_llm import FakeLLMServer, Fault, Reply
from tests.llm.helpers import collect, make_request


@pytest.mark.parametrize(
    ("fault", "error_class", "retryable", "transport"),
    [
        (Fault.unauthorized(), LLMAuthenticationError, False, True),
        (Fault.http(403, "forbidden"), LLMAuthenticationError, False, True),
        (Fault.rate_limited(retry_after=7), LLMRateLimited, True, True),
        (Fault.overloaded(), LLMOverloaded, True, True),
        (Fault.http(503, "unavailable"), LLMOverloaded, True, True),
        (Fault.server_error(), LLMError, False, True),
        (Fault.prompt_too_long(), LLMContextWindowExceeded, False, True),
        (Fault.http(400, "messages.0: unknown field"), LLMBadRequest, False, True),
        (Fault.http(404, "model not found"), LLMBadRequest, False, True),
        (Fault.malformed_json(), LLMInvalidResponse, False, False),
        (Fault.drop_mid_stream(), LLMConnectionError, True, True),
        (Fault.empty_completion(), LLMInvalidResponse, False, False),
        (Fault.error_event("overloaded_error"), LLMOverloaded, True, True),
        (Fault.error_event("api_error", "Internal error"), LLMError, False, True),
    ],
    ids=lambda value: getattr(value, "kind", None) and f"{value.kind}-{value.status}",
)
async def test_each_fault_maps_to_its_error_class(
    fake_llm: FakeLLMServer,
    vendor_client: AnthropicClient | OpenAIClient,
    stream: bool,
    fault: Fault,
    error_class: type[LLMError],
    retryable: bool,
    transport: bool,
) -> None:
    fake_llm.script(fault)

    with pytest.raises(LLMError) as raised:
        await collect(vendor_client, make_request("Hi"), stream=stream)

    assert type(raised.value) is error_class
    assert raised.value.retryable is retryable
    assert raised.value.transport is transport


async def test_a_rate_limit_carries_the_retry_after_header(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(Fault.rate_limited(retry_after=7))

    with pytest.raises(LLMRateLimited) as raised:
        await collect(vendor_client, make_request("Hi"), stream=True)

    assert raised.value.retry_after == 7
    assert raised.value.status_code == 429


async def test_a_stream_without_terminal_event_or_content_is_invalid(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(Fault.no_terminal_event())

    with pytest.raises(LLMInvalidResponse, match="ended without a terminal event and without content"):
        await collect(vendor_client, make_request("Hi"), stream=True)


async def test_a_stream_without_terminal_event_but_with_content_counts_as_finished(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(Fault.no_terminal_event(partial_text="Some words."))

    answer = await collect(vendor_client, make_request("Hi"), stream=True)

    assert answer.text == "Some words."
    assert answer.completed.finish_reason is None


@pytest.mark.parametrize(
    ("reply", "thinking", "message"),
    [
        (Reply(finish_reason="length"), False, "reached the output limit with nothing written"),
        (
            Reply(reasoning="Let me think", finish_reason="length"),
            True,
            "reached the output limit with nothing written",
        ),
        (Reply(text=" \n "), False, "returned an empty completion"),
        (Fault.empty_completion(), False, "returned an empty completion"),
    ],
    ids=["nothing", "reasoning-only", "blank-text", "empty-completion"],
)
async def test_an_answer_with_nothing_written_is_invalid_and_says_why(
    fake_llm: FakeLLMServer,
    vendor_client: AnthropicClient | OpenAIClient,
    stream: bool,
    reply: Reply | Fault,
    thinking: bool,
    message: str,
) -> None:
    fake_llm.script(reply)
    request = make_request("Hi", reasoning=thinking, reasoning_budget_tokens=1024 if thinking else 0)

    with pytest.raises(LLMInvalidResponse, match=message):
        await collect(vendor_client, request, stream=stream)


async def test_a_content_filter_stop_with_nothing_written_is_left_to_the_engine(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient, stream: bool
) -> None:
    fake_llm.script(Reply(finish_reason="content_filter"))

    answer = await collect(vendor_client, make_request("Hi"), stream=stream)

    assert answer.completed.finish_reason == "content_filter"


async def test_a_dropped_stream_fails_after_the_partial_output(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(Fault.drop_mid_stream(partial_text="This answer is cut"))
    seen: list[str] = []

    with pytest.raises(LLMConnectionError, match="failed mid-response"):
        async for event in vendor_client.generate(make_request("Hi"), stream=True):
            if isinstance(event, TextDelta):
                seen.append(event.text)

    assert "".join(seen).startswith("This")


async def test_an_error_event_after_partial_output_arrives_after_that_output(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(Fault.error_event("overloaded_error", partial_text="Started"))
    seen: list[str] = []

    with pytest.raises(LLMOverloaded, match="Overloaded"):
        async for event in vendor_client.generate(make_request("Hi"), stream=True):
            if isinstance(event, TextDelta):
                seen.append(event.text)

    assert seen == ["Started"]


async def test_an_unreachable_server_is_a_connection_error(stream: bool) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    clients = [
        AnthropicClient(api_key="k", base_url=f"http://127.0.0.1:{free_port}"),
        OpenAIClient(api_key="k", base_url=f"http://127.0.0.1:{free_port}/v1"),
    ]

    for client in clients:
        with pytest.raises(LLMConnectionError, match="Could not reach"):
            await collect(client, make_request("Hi"), stream=stream)


@pytest.mark.parametrize(
    ("error_type", "error_class"),
    [
        ("overloaded_error", LLMOverloaded),
        ("rate_limit_error", LLMRateLimited),
        ("api_error", LLMError),
        ("invalid_request_error", LLMBadRequest),
        ("authentication_error", LLMAuthenticationError),
    ],
)
def test_an_error_event_inside_a_stream_is_classified_by_its_type(error_type: str, error_class: type[LLMError]) -> None:
    error = error_from_status("Anthropic", status=200, message="mid-stream", error_type=error_type)

    assert type(error) is error_class


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_from_seconds_milliseconds_or_a_date(headers: dict[str, str], seconds: float) -> None:
    assert parse_retry_after(headers) == seconds
