"""The offline demo model: deterministic, streams token by token, calls tools when asked."""

from __future__ import annotations

import asyncio
import json

from agents.llm.base import (
    AssistantTurn,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolResult,
    ToolResultsTurn,
)
from agents.llm.demo import DEMO_LABEL, DemoClient
from tests.llm.helpers import ROLL_DICE_TOOL, SECRET_CODE_TOOL, collect, make_request

TOOLS = (SECRET_CODE_TOOL, ROLL_DICE_TOOL)
DENIAL = (
    "Error: request to call tool denied. User reason: "
    "You don't need to call the tool, the secret code is 740845635798344975"
)


def after_a_call(result: ToolResult) -> tuple[AssistantTurn, ToolResultsTurn]:
    call = ToolCall(result.tool_call_id, result.name, '{"input_text": "hello world"}')
    return AssistantTurn(tool_calls=(call,)), ToolResultsTurn((result,))


async def test_it_streams_a_short_reasoning_then_its_reply_token_by_token() -> None:
    client = DemoClient(token_delay=0.001)

    answer = await collect(client, make_request("Hello demo"), stream=True)

    kinds = [type(event).__name__ for event in answer.events]
    assert kinds.index("ReasoningDelta") < kinds.index("TextDelta")
    assert len(answer.of(ReasoningDelta)) > 3
    assert len(answer.of(TextDelta)) > 5
    assert answer.completed.finish_reason == "stop"


async def test_without_streaming_it_answers_at_once_and_never_sleeps() -> None:
    client = DemoClient(token_delay=60)

    answer = await asyncio.wait_for(collect(client, make_request("Hello demo"), stream=False), timeout=5)

    assert len(answer.of(TextDelta)) == 1
    assert len(answer.of(ReasoningDelta)) == 1


async def test_it_says_it_is_the_demo_and_suggests_a_tool_call() -> None:
    answer = await collect(DemoClient(token_delay=0), make_request("Hello demo", tools=TOOLS), stream=False)

    assert "demo model" in answer.text
    assert "Hello demo" in answer.text
    assert "Try: call get_secret_code_tool with input_text='hello world'." in answer.text


async def test_the_suggested_call_works_when_sent_back() -> None:
    client = DemoClient(token_delay=0)
    suggestion = await collect(client, make_request("hi", tools=(ROLL_DICE_TOOL,)), stream=False)
    sentence = suggestion.text.split("Try: ")[1]

    answer = await collect(client, make_request(sentence, tools=(ROLL_DICE_TOOL,)), stream=False)

    assert answer.tool_arguments == [("roll_dice_tool", {"num_sides": 6})]


async def test_it_calls_a_named_tool_with_arguments_coerced_to_the_schema() -> None:
    answer = await collect(
        DemoClient(token_delay=0), make_request("call roll_dice with num_sides=6", tools=TOOLS), stream=True
    )

    assert answer.tool_arguments == [("roll_dice_tool", {"num_sides": 6})]
    assert answer.completed.finish_reason == "tool_calls"
    assert len(answer.of(ToolCallArgumentsDelta)) > 1


async def test_it_makes_several_calls_from_one_message() -> None:
    text = "call roll_dice with num_sides=6 and call get_secret_code with input_text=hi"

    answer = await collect(DemoClient(token_delay=0), make_request(text, tools=TOOLS), stream=False)

    assert answer.tool_arguments == [
        ("roll_dice_tool", {"num_sides": 6}),
        ("get_secret_code_tool", {"input_text": "hi"}),
    ]
    assert answer.text == "Calling roll_dice_tool, get_secret_code_tool."


async def test_a_quoted_argument_keeps_its_spaces() -> None:
    text = "call get_secret_code with input_text='hello world'"

    answer = await collect(DemoClient(token_delay=0), make_request(text, tools=TOOLS), stream=True)

    assert answer.tool_arguments == [("get_secret_code_tool", {"input_text": "hello world"})]


async def test_a_tool_that_is_not_attached_is_not_called() -> None:
    answer = await collect(DemoClient(token_delay=0), make_request("call roll_dice with num_sides=6"), stream=False)

    assert answer.tool_calls == []
    assert answer.completed.finish_reason == "stop"


async def test_after_tool_results_it_reports_them_and_stops() -> None:
    result = ToolResult("toolu_1", "get_secret_code_tool", '{"status": "OK", "message": "740845635798344975"}')

    answer = await collect(
        DemoClient(token_delay=0), make_request("code?", *after_a_call(result), tools=TOOLS), stream=True
    )

    assert "the secret code is 740845635798344975." in answer.text
    assert answer.tool_calls == []
    assert answer.completed.finish_reason == "stop"


async def test_a_denied_call_is_reported_with_the_reason() -> None:
    result = ToolResult("toolu_1", "get_secret_code_tool", DENIAL, is_error=True)

    answer = await collect(
        DemoClient(token_delay=0), make_request("code?", *after_a_call(result), tools=TOOLS), stream=False
    )

    assert "was denied" in answer.text
    assert "the secret code is 740845635798344975" in answer.text


async def test_the_same_request_gets_the_same_answer() -> None:
    client = DemoClient(token_delay=0)
    request = make_request("call roll_dice with num_sides=20", tools=TOOLS)

    first, second = await collect(client, request, stream=True), await collect(client, request, stream=True)

    assert (first.reasoning, first.text, first.tool_arguments) == (second.reasoning, second.text, second.tool_arguments)


async def test_its_usage_is_marked_as_estimated() -> None:
    answer = await collect(DemoClient(token_delay=0), make_request("Hello"), stream=False)

    usage = answer.completed.usage
    assert usage.estimated
    assert usage.prompt_tokens > 0
    assert usage.completion_tokens > 0


def test_its_payload_describes_what_it_reads_and_is_labelled_a_demo() -> None:
    payload = DemoClient().build_payload(make_request("Hello", tools=TOOLS, model="echo-1"), stream=True)

    assert payload["label"] == DEMO_LABEL
    assert payload["tools"] == ["get_secret_code_tool", "roll_dice_tool"]
    assert payload["last_turn"] == "user"
    assert json.loads(json.dumps(payload)) == payload
