"""The fake server itself: its automatic replies for the seed flows, its HTTP control API, its process mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agents.llm.anthropic import AnthropicClient
from agents.llm.base import AssistantTurn, LLMBadRequest, ToolCall, ToolResult, ToolResultsTurn
from agents.llm.openai import OpenAIClient
from tests.fake_llm import FakeLLMServer, Fault, Reply
from tests.fake_llm.script import item_from_json
from tests.llm.helpers import (
    ROLL_DICE_TOOL,
    SECRET_CODE_TOOL,
    SEED_PARALLEL_CALLS,
    SEED_SINGLE_CALL,
    collect,
    make_request,
)

TOOLS = (SECRET_CODE_TOOL, ROLL_DICE_TOOL)
SECRET_CODE = "740845635798344975"
REPO_ROOT = Path(__file__).resolve().parents[2]


async def test_unscripted_it_calls_the_tool_the_seed_message_names(
    vendor_client: AnthropicClient | OpenAIClient, stream: bool
) -> None:
    request = make_request(SEED_SINGLE_CALL, tools=TOOLS, reasoning=True, parallel_tool_calls=True)

    answer = await collect(vendor_client, request, stream=stream)

    assert answer.reasoning
    assert answer.text
    assert answer.tool_arguments == [("get_secret_code_tool", {"input_text": "hello world"})]


async def test_unscripted_it_makes_the_seed_parallel_calls_in_one_answer(
    vendor_client: AnthropicClient | OpenAIClient, stream: bool
) -> None:
    request = make_request(SEED_PARALLEL_CALLS, tools=TOOLS, reasoning=True, parallel_tool_calls=True)

    answer = await collect(vendor_client, request, stream=stream)

    assert answer.tool_arguments == [
        ("get_secret_code_tool", {"input_text": "hello world"}),
        ("get_secret_code_tool", {"input_text": "hello letta"}),
        ("get_secret_code_tool", {"input_text": "hello test"}),
        ("roll_dice_tool", {"num_sides": 16}),
    ]


async def test_unscripted_it_makes_one_call_when_parallel_calls_are_off(
    vendor_client: AnthropicClient | OpenAIClient,
) -> None:
    request = make_request(SEED_PARALLEL_CALLS, tools=TOOLS, parallel_tool_calls=False)

    answer = await collect(vendor_client, request, stream=False)

    assert answer.tool_arguments == [("get_secret_code_tool", {"input_text": "hello world"})]


async def test_unscripted_it_quotes_the_tool_result(
    vendor_client: AnthropicClient | OpenAIClient, stream: bool
) -> None:
    first = await collect(vendor_client, make_request(SEED_SINGLE_CALL, tools=TOOLS, reasoning=True), stream=stream)
    call = first.tool_calls[0]
    packaged = f'{{"status": "OK", "message": "{SECRET_CODE}", "time": "2025-01-01 00:00:00 AM UTC+0000"}}'
    results = ToolResultsTurn((ToolResult(call.id, call.name, packaged),))

    answer = await collect(
        vendor_client,
        make_request(SEED_SINGLE_CALL, first.as_turn(), results, tools=TOOLS, reasoning=True),
        stream=stream,
    )

    assert answer.reasoning
    assert f"the secret code is {SECRET_CODE}" in answer.text
    assert answer.completed.finish_reason == "stop"


async def test_unscripted_it_quotes_a_denial_reason(vendor_client: AnthropicClient | OpenAIClient) -> None:
    call_turn = AssistantTurn(
        tool_calls=(ToolCall("toolu_x", "get_secret_code_tool", '{"input_text": "hello world"}'),)
    )
    denial = (
        "Error: request to call tool denied. User reason: "
        f"You don't need to call the tool, the secret code is {SECRET_CODE}"
    )
    results = ToolResultsTurn((ToolResult("toolu_x", "get_secret_code_tool", denial, is_error=True),))

    answer = await collect(vendor_client, make_request(SEED_SINGLE_CALL, call_turn, results, tools=TOOLS), stream=True)

    assert SECRET_CODE in answer.text
    assert "denied" in answer.text


async def test_unscripted_a_follow_up_after_tool_results_gets_a_plain_answer(
    anthropic_client: AnthropicClient,
) -> None:
    first = await collect(anthropic_client, make_request(SEED_SINGLE_CALL, tools=TOOLS), stream=False)
    call = first.tool_calls[0]
    results = ToolResultsTurn((ToolResult(call.id, call.name, "Error: denied", is_error=True),))

    answer = await collect(
        anthropic_client,
        make_request(SEED_SINGLE_CALL, first.as_turn(), results, "Thank you for the secret code.", tools=TOOLS),
        stream=False,
    )

    assert answer.tool_calls == []
    assert "Thank you for the secret code." in answer.text


async def test_it_can_be_scripted_reset_and_inspected_over_http(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    with httpx.Client(base_url=fake_llm.url) as control:
        control.post("/__script__", json=[Reply(text="ignored").to_json()]).raise_for_status()
        control.post("/__reset__").raise_for_status()
        queued = control.post(
            "/__script__",
            json={"items": [Reply(text="From HTTP.", usage=[3, 4]).to_json(), Fault.overloaded().to_json()]},
        )
        assert queued.json() == {"queued": 2, "pending": 2}

        answer = await collect(openai_client, make_request("Hi"), stream=True)
        recorded = control.get("/__requests__").json()

    assert answer.text == "From HTTP."
    assert answer.completed.usage.completion_tokens == 4
    assert fake_llm.pending == 1
    assert [r["path"] for r in recorded] == ["/v1/chat/completions"]
    assert recorded[0]["body"]["messages"][-1] == {"role": "user", "content": "Hi"}


def test_script_items_survive_a_json_round_trip() -> None:
    reply = Reply(
        text="t", reasoning="r", tool_calls=[("roll_dice_tool", {"num_sides": 6})], finish_reason=None, usage=(1, 2)
    )
    fault = Fault.rate_limited(retry_after=3)

    assert item_from_json(reply.to_json()) == Reply(
        text="t", reasoning="r", tool_calls=(("roll_dice_tool", {"num_sides": 6}),), finish_reason=None, usage=(1, 2)
    )
    assert item_from_json(fault.to_json()) == fault


async def test_a_request_without_an_api_key_is_refused(fake_llm: FakeLLMServer) -> None:
    with httpx.Client(base_url=fake_llm.url) as raw:
        response = raw.post("/v1/messages", json={"model": "m", "max_tokens": 10, "messages": []})

    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


async def test_tool_results_that_answer_no_call_are_refused_like_the_vendor_does(
    anthropic_client: AnthropicClient, openai_client: OpenAIClient, caplog: pytest.LogCaptureFixture
) -> None:
    orphan = ToolResultsTurn((ToolResult("toolu_missing", "roll_dice_tool", "4"),))
    request = make_request("Roll", AssistantTurn(), orphan, tools=TOOLS)

    for client in (anthropic_client, openai_client):
        caplog.clear()
        with pytest.raises(LLMBadRequest, match=r"API error \(400\)"):
            await collect(client, request, stream=False)
        assert "tool" in caplog.text  # the vendor's explanation is in the server log


async def test_it_runs_as_a_separate_process() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_llm", "--port", "0"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline().strip()
        url = banner.rsplit(" ", 1)[-1]
        assert banner.startswith("fake LLM listening on http://127.0.0.1:")
        with httpx.Client(base_url=url) as control:
            control.post("/__script__", json=[Reply(text="From another process.").to_json()]).raise_for_status()

        client = OpenAIClient(api_key="k", base_url=f"{url}/v1")
        answer = await collect(client, make_request("Hi"), stream=True)

        assert answer.text == "From another process."
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


async def test_told_not_to_record_it_answers_and_keeps_no_requests() -> None:
    with FakeLLMServer(record=False) as fake:
        client = OpenAIClient(api_key="k", base_url=fake.base_url_openai)
        fake.script(Reply(text="Not kept."))

        answer = await collect(client, make_request("Hi"), stream=False)

        assert answer.text == "Not kept."
        assert fake.requests == []
        assert httpx.get(f"{fake.url}/__requests__").json() == []
