"""AnthropicClient through the real ``anthropic`` SDK against the fake server."""

from __future__ import annotations

import json

import pytest

from agents.llm.anthropic import AnthropicClient, encode_body
from agents.llm.base import (
    AssistantTurn,
    LLMBadRequest,
    ReasoningPart,
    RedactedReasoning,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsTurn,
    UserTurn,
)
from tests.fake_llm import FakeLLMServer, Reply
from tests.fake_llm.anthropic_wire import sign
from tests.llm.helpers import ROLL_DICE_TOOL, SECRET_CODE_TOOL, collect, make_request


async def test_the_sent_body_is_exactly_build_payload(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient, stream: bool
) -> None:
    request = make_request("Hi", tools=(SECRET_CODE_TOOL,), reasoning=True, reasoning_budget_tokens=1024)

    await collect(anthropic_client, request, stream=stream)

    assert fake_llm.last_request.body == anthropic_client.build_payload(request, stream=stream)


async def test_a_long_conversation_goes_out_exactly_as_build_payload_made_it(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient, stream: bool
) -> None:
    turns: list[UserTurn | AssistantTurn | ToolResultsTurn] = []
    for i in range(300):
        call = ToolCall(f"toolu_{i}", "roll_dice_tool", '{"num_sides": 6}')
        turns.append(
            UserTurn(f"Question {i}: café ✓")
            if i % 2 == 0
            else ToolResultsTurn((ToolResult(f"toolu_{i - 1}", "roll_dice_tool", "4"),))
        )
        turns.append(AssistantTurn(parts=(TextPart(f"Answer {i}."),), tool_calls=(call,) if i % 2 == 0 else ()))
    turns.append(UserTurn("And now?"))
    request = make_request(*turns, tools=(SECRET_CODE_TOOL, ROLL_DICE_TOOL), temperature=0.25, system="Be brief.")
    expected = anthropic_client.build_payload(request, stream=stream)
    assert len(expected["messages"]) == 601

    await collect(anthropic_client, request, stream=stream)

    sent = fake_llm.last_request
    assert sent.body == expected
    assert list(sent.body) == list(expected)
    assert sent.body["temperature"] == 0.25
    assert ("stream" in sent.body) is stream
    assert sent.headers["content-type"] == "application/json"
    assert "anthropic-beta" not in sent.headers


async def test_it_requests_thinking_the_way_letta_does(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient, stream: bool
) -> None:
    request = make_request(
        "Hi", tools=(SECRET_CODE_TOOL,), reasoning=True, reasoning_budget_tokens=1024, max_tokens=8192, temperature=0.7
    )

    await collect(anthropic_client, request, stream=stream)

    sent = fake_llm.last_request
    assert sent.body["system"] == [
        {"type": "text", "text": "You are a helpful test assistant.", "cache_control": {"type": "ephemeral"}}
    ]
    assert sent.body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert sent.body["temperature"] == 1.0
    assert sent.body["max_tokens"] == 8192
    assert sent.body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    expected_beta = (
        "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
        if stream
        else "interleaved-thinking-2025-05-14"
    )
    assert sent.headers["anthropic-beta"] == expected_beta
    assert sent.headers["authorization"] == "Bearer test-anthropic-key"


async def test_without_thinking_it_sends_the_requested_temperature_and_no_beta_header(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    await collect(anthropic_client, make_request("Hi", temperature=0.3), stream=True)

    sent = fake_llm.last_request
    assert sent.body["temperature"] == 0.3
    assert "thinking" not in sent.body
    assert "tool_choice" not in sent.body
    assert "anthropic-beta" not in sent.headers


async def test_it_yields_signed_reasoning_and_sends_it_back_on_the_next_call(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient, stream: bool
) -> None:
    fake_llm.script(
        Reply(reasoning="I should look the code up.", text="Looking it up.", tool_calls=[("get_secret_code_tool", {})]),
        Reply(reasoning="Now I can answer.", text="The code is 42."),
    )
    first_request = make_request("What is the code?", tools=(SECRET_CODE_TOOL,), reasoning=True)

    first = await collect(anthropic_client, first_request, stream=stream)
    assert first.reasoning == "I should look the code up."
    assert first.signatures == [sign("I should look the code up.")]

    call = first.tool_calls[0]
    follow_up = make_request(
        "What is the code?",
        first.as_turn(),
        ToolResultsTurn((ToolResult(call.id, call.name, '{"status": "OK", "message": "42"}'),)),
        "Thanks!",
        tools=(SECRET_CODE_TOOL,),
        reasoning=True,
    )
    second = await collect(anthropic_client, follow_up, stream=stream)

    assert second.text == "The code is 42."
    sent = fake_llm.last_request.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][0] == {
        "type": "thinking",
        "thinking": "I should look the code up.",
        "signature": sign("I should look the code up."),
    }
    assert [block["type"] for block in sent[2]["content"]] == ["tool_result", "text"]
    assert sent[2]["content"][1] == {"type": "text", "text": "Thanks!", "cache_control": {"type": "ephemeral"}}


async def test_a_tampered_signature_is_refused_by_the_fake_as_by_anthropic(
    anthropic_client: AnthropicClient, caplog: pytest.LogCaptureFixture
) -> None:
    turn = AssistantTurn(parts=(ReasoningPart("I thought this.", signature="forged"), TextPart("Hi.")))

    with pytest.raises(LLMBadRequest, match=r"Anthropic API error \(400\)"):
        await collect(anthropic_client, make_request("Hi", turn, "Again"), stream=False)
    assert "Invalid `signature`" in caplog.text  # the vendor's words stay in the server log


async def test_reasoning_without_a_signature_is_not_sent_back(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    turn = AssistantTurn(parts=(ReasoningPart("From another provider."), TextPart("Hello.")))

    await collect(anthropic_client, make_request("Hi", turn, "Again"), stream=False)

    assert fake_llm.last_request.body["messages"][1]["content"] == [{"type": "text", "text": "Hello."}]


async def test_redacted_thinking_is_passed_on_and_sent_back(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient, stream: bool
) -> None:
    fake_llm.script(Reply(reasoning="Visible.", redacted_reasoning="ENCRYPTED", text="Done."))

    answer = await collect(anthropic_client, make_request("Hi", reasoning=True), stream=stream)
    assert answer.of(RedactedReasoning) == [RedactedReasoning("ENCRYPTED")]

    await collect(anthropic_client, make_request("Hi", answer.as_turn(), "More", reasoning=True), stream=stream)
    assistant = fake_llm.last_request.body["messages"][1]["content"]
    assert {"type": "redacted_thinking", "data": "ENCRYPTED"} in assistant
    assert assistant[0]["type"] == "thinking"


async def test_parallel_tool_calls_are_allowed_in_the_sent_tool_choice(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    request = make_request("Go", tools=(SECRET_CODE_TOOL, ROLL_DICE_TOOL), parallel_tool_calls=True)

    await collect(anthropic_client, request, stream=True)

    assert fake_llm.last_request.body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": False}


async def test_tool_calls_and_results_round_trip_as_tool_use_and_tool_result(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    calls = (
        ToolCall("toolu_1", "roll_dice_tool", '{"num_sides": 6}'),
        ToolCall("toolu_2", "roll_dice_tool", '{"num_sides": 20'),  # cut off mid-write
    )
    results = ToolResultsTurn(
        (ToolResult("toolu_1", "roll_dice_tool", "4"), ToolResult("toolu_2", "roll_dice_tool", "bad", is_error=True))
    )
    request = make_request("Roll", AssistantTurn(tool_calls=calls), results, tools=(ROLL_DICE_TOOL,))

    await collect(anthropic_client, request, stream=False)

    sent = fake_llm.last_request.body["messages"]
    assert sent[1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "roll_dice_tool", "input": {"num_sides": 6}},
        {"type": "tool_use", "id": "toolu_2", "name": "roll_dice_tool", "input": {}},
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "4"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": "bad",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]


async def test_consecutive_user_turns_become_one_user_message(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    request = make_request(UserTurn('{"type": "login"}'), UserTurn("Hello"))

    await collect(anthropic_client, request, stream=False)

    assert fake_llm.last_request.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": '{"type": "login"}'},
                {"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}},
            ],
        }
    ]


def test_a_tool_choice_of_required_forces_a_tool_only_without_thinking() -> None:
    client = AnthropicClient(api_key="unused")
    request = make_request("Hi", tools=(ROLL_DICE_TOOL,), tool_choice="required")

    assert client.build_payload(request, stream=False)["tool_choice"]["type"] == "any"
    with_thinking = make_request("Hi", tools=(ROLL_DICE_TOOL,), tool_choice="required", reasoning=True)
    assert client.build_payload(with_thinking, stream=False)["tool_choice"]["type"] == "auto"


def test_max_tokens_leaves_room_for_the_answer_beyond_the_thinking_budget() -> None:
    client = AnthropicClient(api_key="unused")
    request = make_request("Hi", reasoning=True, reasoning_budget_tokens=2000, max_tokens=1000)

    payload = client.build_payload(request, stream=True)

    assert payload["thinking"]["budget_tokens"] == 2000
    assert payload["max_tokens"] == 3000
    assert json.loads(json.dumps(payload)) == payload


async def test_the_system_prompt_and_the_conversation_so_far_are_marked_for_prompt_caching(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    fake_llm.script(Reply(text="Hi.", usage=(120, 7)))

    await collect(anthropic_client, make_request("Hi", tools=(ROLL_DICE_TOOL,)), stream=False)

    body = fake_llm.last_request.body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum(1 for m in body["messages"] for block in m["content"] if "cache_control" in block) == 1


async def test_a_window_that_opens_with_the_assistant_gets_letta_s_bootup_user_message_first(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    greeting = AssistantTurn(tool_calls=(ToolCall("toolu_1", "send_message", '{"message": "Hi, I am Loop."}'),))
    results = ToolResultsTurn((ToolResult("toolu_1", "send_message", '{"status": "OK"}'),))
    request = make_request(greeting, results, UserTurn("hello"))

    answer = await collect(anthropic_client, request, stream=False)

    sent = fake_llm.last_request.body["messages"]
    assert sent[0] == {"role": "user", "content": [{"type": "text", "text": "User initializing bootup sequence."}]}
    assert [message["role"] for message in sent] == ["user", "assistant", "user"]
    assert answer.completed.finish_reason is not None


async def test_with_thinking_on_a_step_answering_a_tool_call_made_without_thinking_goes_without_it(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    greeting = AssistantTurn(tool_calls=(ToolCall("toolu_1", "send_message", '{"message": "Hi, I am Loop."}'),))
    results = ToolResultsTurn((ToolResult("toolu_1", "send_message", '{"status": "OK"}'),))
    request = make_request(greeting, results, UserTurn("hello"), reasoning=True, reasoning_budget_tokens=1024)

    answer = await collect(anthropic_client, request, stream=True)

    assert "thinking" not in fake_llm.last_request.body  # Anthropic would refuse it: the greeting has none
    assert answer.text


def test_the_request_body_is_the_bytes_the_sdk_would_send() -> None:
    payload = {"model": "claude", "system": [{"type": "text", "text": 'Tea ☕ and "quotes"\n'}], "max_tokens": 1.5}

    body = encode_body(payload)

    assert body == json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def test_a_body_orjson_refuses_is_encoded_as_json_encodes_it() -> None:
    payload = {"metadata": {"big": 2**70}}

    assert encode_body(payload) == b'{"metadata":{"big":1180591620717411303424}}'
