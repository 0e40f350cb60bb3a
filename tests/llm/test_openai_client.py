"""OpenAIClient through the real ``openai`` SDK against the fake server (a compatible base URL)."""

from __future__ import annotations

import pytest

from agents.llm.base import (
    AssistantTurn,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolResult,
    ToolResultsTurn,
)
from agents.llm.openai import OpenAIClient
from tests.fake_llm import FakeLLMServer, Reply
from tests.llm.helpers import ROLL_DICE_TOOL, SECRET_CODE_TOOL, collect, make_request


async def test_it_streams_text_in_several_deltas_and_asks_for_usage(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    fake_llm.script(Reply(text="Hello there, how can I help you today?"))

    answer = await collect(openai_client, make_request("Hi"), stream=True)

    assert len(answer.of(TextDelta)) > 3
    assert answer.text == "Hello there, how can I help you today?"
    assert answer.completed.finish_reason == "stop"
    assert fake_llm.last_request.body["stream_options"] == {"include_usage": True}


async def test_it_gives_the_same_answer_without_streaming(fake_llm: FakeLLMServer, openai_client: OpenAIClient) -> None:
    fake_llm.script(Reply(text="Hello there."))

    answer = await collect(openai_client, make_request("Hi"), stream=False)

    assert answer.of(TextDelta) == [TextDelta("Hello there.")]
    assert "stream" not in fake_llm.last_request.body


async def test_the_sent_body_is_exactly_build_payload(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient, stream: bool
) -> None:
    request = make_request(
        "Hi", tools=(SECRET_CODE_TOOL,), temperature=0.2, max_tokens=500, reasoning=True, reasoning_effort="low"
    )

    await collect(openai_client, request, stream=stream)

    sent = fake_llm.last_request
    assert sent.path == "/v1/chat/completions"
    assert sent.body == openai_client.build_payload(request, stream=stream)
    assert sent.headers["authorization"] == "Bearer test-openai-key"


def test_parallel_tool_calls_is_only_sent_with_tools() -> None:
    client = OpenAIClient(api_key="unused", base_url="http://127.0.0.1:1/v1")

    without_tools = client.build_payload(make_request("Hi", parallel_tool_calls=True), stream=False)
    with_tools = client.build_payload(make_request("Hi", tools=(ROLL_DICE_TOOL,)), stream=False)

    assert "parallel_tool_calls" not in without_tools
    assert "tools" not in without_tools
    assert with_tools["parallel_tool_calls"] is False
    assert with_tools["tool_choice"] == "auto"


def test_openai_itself_gets_max_completion_tokens_and_compatible_servers_max_tokens() -> None:
    request = make_request("Hi", max_tokens=256)

    official = OpenAIClient(api_key="unused").build_payload(request, stream=False)
    local = OpenAIClient(api_key="unused", base_url="http://localhost:8000/v1").build_payload(request, stream=False)

    assert official["max_completion_tokens"] == 256
    assert "max_tokens" not in official
    assert local["max_tokens"] == 256


async def test_reasoning_content_from_a_compatible_server_becomes_reasoning_deltas(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient, stream: bool
) -> None:
    fake_llm.script(Reply(reasoning="Let me think this through.", text="Done."))

    answer = await collect(openai_client, make_request("Hi"), stream=stream)

    assert answer.reasoning == "Let me think this through."
    assert answer.of(ReasoningDelta)
    assert answer.text == "Done."


async def test_parallel_tool_calls_arrive_with_argument_fragments_by_index(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    calls = [
        ("get_secret_code_tool", {"input_text": "hello world"}),
        ("get_secret_code_tool", {"input_text": "hello letta"}),
        ("roll_dice_tool", {"num_sides": 16}),
    ]
    fake_llm.script(Reply(text="Calling.", tool_calls=calls))
    request = make_request("Go", tools=(SECRET_CODE_TOOL, ROLL_DICE_TOOL), parallel_tool_calls=True)

    answer = await collect(openai_client, request, stream=True)

    assert answer.tool_arguments == calls
    assert len(answer.of(ToolCallArgumentsDelta)) > len(calls)
    assert answer.completed.finish_reason == "tool_calls"
    assert fake_llm.last_request.body["parallel_tool_calls"] is True


async def test_tool_calls_and_results_round_trip_as_tool_messages(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    assistant = AssistantTurn(
        parts=(ReasoningPart("private", signature="sig"), TextPart("Rolling.")),
        tool_calls=(ToolCall("call_1", "roll_dice_tool", '{"num_sides": 6}'),),
    )
    results = ToolResultsTurn((ToolResult("call_1", "roll_dice_tool", "4"),))

    await collect(openai_client, make_request("Roll", assistant, results, tools=(ROLL_DICE_TOOL,)), stream=False)

    assert fake_llm.last_request.body["messages"][1:] == [
        {"role": "user", "content": "Roll"},
        {
            "role": "assistant",
            "content": "Rolling.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "roll_dice_tool", "arguments": '{"num_sides": 6}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "4"},
    ]


async def test_usage_comes_from_the_api(fake_llm: FakeLLMServer, openai_client: OpenAIClient, stream: bool) -> None:
    fake_llm.script(Reply(text="Hi.", usage=(90, 3)))

    answer = await collect(openai_client, make_request("Hi"), stream=stream)

    usage = answer.completed.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (90, 3, False)


async def test_usage_is_estimated_and_marked_when_the_server_sends_none(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient, stream: bool
) -> None:
    fake_llm.script(Reply(text="y" * 80, usage=None))

    answer = await collect(openai_client, make_request("Hi"), stream=stream)

    usage = answer.completed.usage
    assert usage.estimated
    assert usage.completion_tokens == 20
    assert usage.prompt_tokens > 0


@pytest.mark.parametrize("finish_reason", ["stop", "tool_calls", "length", "content_filter"])
async def test_each_finish_reason_is_passed_on(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient, stream: bool, finish_reason: str
) -> None:
    calls = [("roll_dice_tool", {"num_sides": 6})] if finish_reason == "tool_calls" else []
    fake_llm.script(Reply(text="Some text.", tool_calls=calls, finish_reason=finish_reason))  # type: ignore[arg-type]

    answer = await collect(openai_client, make_request("Hi", tools=(ROLL_DICE_TOOL,)), stream=stream)

    assert answer.completed.finish_reason == finish_reason


async def test_content_without_a_finish_reason_completes_with_none(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient, stream: bool
) -> None:
    fake_llm.script(Reply(text="ok", finish_reason=None))

    answer = await collect(openai_client, make_request("Hi"), stream=stream)

    assert answer.text == "ok"
    assert answer.completed.finish_reason is None
