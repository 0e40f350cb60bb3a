"""What AnthropicClient and OpenAIClient do alike, each through its real SDK against the fake server:
text in deltas, the same answer whole, parallel calls in fragments, usage, and the finish reasons.

What only one vendor does (its payload, its headers, its reasoning) is in that vendor's module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agents.llm.base import TextDelta, ToolCallArgumentsDelta
from tests.fake_llm import FakeLLMServer, Reply
from tests.llm.helpers import ROLL_DICE_TOOL, SECRET_CODE_TOOL, collect, make_request

if TYPE_CHECKING:
    from agents.llm.anthropic import AnthropicClient
    from agents.llm.openai import OpenAIClient

    VendorClient = AnthropicClient | OpenAIClient


async def test_it_streams_text_in_several_deltas_and_finishes_with_stop(
    fake_llm: FakeLLMServer, vendor_client: VendorClient
) -> None:
    fake_llm.script(Reply(text="Hello there, how can I help you today?"))

    answer = await collect(vendor_client, make_request("Hi"), stream=True)

    assert len(answer.of(TextDelta)) > 3
    assert answer.text == "Hello there, how can I help you today?"
    assert answer.completed.finish_reason == "stop"


async def test_it_gives_the_same_answer_without_streaming(fake_llm: FakeLLMServer, vendor_client: VendorClient) -> None:
    fake_llm.script(Reply(text="Hello there, how can I help you today?"))

    answer = await collect(vendor_client, make_request("Hi"), stream=False)

    assert answer.of(TextDelta) == [TextDelta("Hello there, how can I help you today?")]
    assert answer.completed.finish_reason == "stop"
    assert "stream" not in fake_llm.last_request.body


async def test_parallel_tool_calls_arrive_with_streamed_argument_fragments(
    fake_llm: FakeLLMServer, vendor_client: VendorClient
) -> None:
    calls = [
        ("get_secret_code_tool", {"input_text": "hello world"}),
        ("get_secret_code_tool", {"input_text": "hello letta"}),
        ("roll_dice_tool", {"num_sides": 16}),
    ]
    fake_llm.script(Reply(text="Calling.", tool_calls=calls))
    request = make_request("Go", tools=(SECRET_CODE_TOOL, ROLL_DICE_TOOL), parallel_tool_calls=True)

    answer = await collect(vendor_client, request, stream=True)

    assert answer.tool_arguments == calls
    assert len(answer.of(ToolCallArgumentsDelta)) > len(calls)
    assert len({call.id for call in answer.tool_calls}) == 3
    assert answer.completed.finish_reason == "tool_calls"


async def test_usage_comes_from_the_api(fake_llm: FakeLLMServer, vendor_client: VendorClient, stream: bool) -> None:
    fake_llm.script(Reply(text="Hi.", usage=(120, 7)))

    answer = await collect(vendor_client, make_request("Hi"), stream=stream)

    usage = answer.completed.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (120, 7, False)


async def test_usage_is_estimated_and_marked_when_the_api_sends_none(
    fake_llm: FakeLLMServer, vendor_client: VendorClient, stream: bool
) -> None:
    fake_llm.script(Reply(text="x" * 40, usage=None))

    answer = await collect(vendor_client, make_request("Hi"), stream=stream)

    usage = answer.completed.usage
    assert usage.estimated
    assert usage.completion_tokens == 10
    assert usage.prompt_tokens > 0


@pytest.mark.parametrize("finish_reason", ["stop", "tool_calls", "length", "content_filter"])
async def test_each_stop_reason_maps_to_its_finish_reason(
    fake_llm: FakeLLMServer, vendor_client: VendorClient, stream: bool, finish_reason: str
) -> None:
    calls = [("roll_dice_tool", {"num_sides": 6})] if finish_reason == "tool_calls" else []
    fake_llm.script(Reply(text="Some text.", tool_calls=calls, finish_reason=finish_reason))  # type: ignore[arg-type]

    answer = await collect(vendor_client, make_request("Hi", tools=(ROLL_DICE_TOOL,)), stream=stream)

    assert answer.completed.finish_reason == finish_reason


async def test_content_without_a_stop_reason_completes_with_no_finish_reason(
    fake_llm: FakeLLMServer, vendor_client: VendorClient, stream: bool
) -> None:
    fake_llm.script(Reply(text="Partial but usable.", finish_reason=None))

    answer = await collect(vendor_client, make_request("Hi"), stream=stream)

    assert answer.text == "Partial but usable."
    assert answer.completed.finish_reason is None
