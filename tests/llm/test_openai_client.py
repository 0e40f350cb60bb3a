"""OpenAIClient through the real ``openai`` SDK against the fake server (a compatible base URL)."""

from __future__ import annotations

from agents.llm.base import (
    AssistantTurn,
    ReasoningDelta,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsTurn,
)
from agents.llm.openai import OpenAIClient
from tests.fake_llm import FakeLLMServer, Reply
from tests.llm.helpers import ROLL_DICE_TOOL, SECRET_CODE_TOOL, collect, make_request


async def test_a_stream_asks_for_usage(fake_llm: FakeLLMServer, openai_client: OpenAIClient) -> None:
    await collect(openai_client, make_request("Hi"), stream=True)

    assert fake_llm.last_request.body["stream_options"] == {"include_usage": True}


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


async def test_parallel_tool_calls_are_asked_for_in_the_sent_body(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    request = make_request("Go", tools=(SECRET_CODE_TOOL, ROLL_DICE_TOOL), parallel_tool_calls=True)

    await collect(openai_client, request, stream=True)

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
