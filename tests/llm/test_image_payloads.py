"""Images of tool results in the provider payloads, in the context sizing, and which models get them."""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING

import pytest

from agents.engine.compaction import row_tokens
from agents.engine.context import ModelSettings, build_request
from agents.engine.store import MessageSnapshot
from agents.llm import anthropic_payload, openai_payload
from agents.llm.base import AssistantTurn, ImagePart, LLMRequest, ToolCall, ToolResult, ToolResultsTurn, UserTurn
from agents.llm.registry import takes_images
from agents.llm.tokens import IMAGE_TOKENS, estimate_prompt_tokens, request_tokens

if TYPE_CHECKING:
    from agents.engine.types import StoredToolImage, StoredToolReturn

BIG_DATA = "A" * 1_000_000
CHART = ImagePart("image/png", "iVBORw0KGgo=")


def stored_return(call_id: str, name: str, text: str) -> StoredToolReturn:
    return {
        "tool_call_id": call_id,
        "name": name,
        "status": "success",
        "tool_return": text,
        "func_response": text,
        "stdout": None,
        "stderr": None,
    }


def request_with(*results: ToolResult) -> LLMRequest:
    calls = tuple(ToolCall(result.tool_call_id, result.name, "{}") for result in results)
    return LLMRequest(
        model="m", system="s", turns=(UserTurn("draw"), AssistantTurn((), calls), ToolResultsTurn(results))
    )


def test_an_anthropic_tool_result_with_images_sends_its_text_a_note_and_image_blocks() -> None:
    request = request_with(ToolResult("call-1", "render_chart", "the chart", images=(CHART, CHART)))

    [block] = anthropic_payload.build_body(request, stream=False)["messages"][-1]["content"]

    assert block["tool_use_id"] == "call-1"
    assert block["content"][:2] == [
        {"type": "text", "text": "the chart"},
        {"type": "text", "text": "[2 images returned by this tool call attached below]"},
    ]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert block["content"][2:] == [image, image]
    assert block["cache_control"] == {"type": "ephemeral"}


def test_an_anthropic_tool_result_without_images_stays_a_string() -> None:
    request = request_with(ToolResult("call-1", "lookup", "sunny"))

    [block] = anthropic_payload.build_body(request, stream=False)["messages"][-1]["content"]

    assert block["content"] == "sunny"


def test_openai_gets_one_user_message_with_the_images_of_the_steps_results_after_its_tool_messages() -> None:
    request = request_with(
        ToolResult("call-1", "render_chart", "the chart", images=(CHART,)),
        ToolResult("call-2", "lookup", "sunny"),
    )

    messages = openai_payload.to_messages(request)

    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[3] == {"role": "tool", "tool_call_id": "call-1", "content": "the chart"}
    assert messages[-1]["content"] == [
        {"type": "text", "text": "[1 image returned by tool call call-1 (render_chart)]"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


def test_sizing_a_request_counts_an_image_as_a_fixed_estimate_not_its_base64() -> None:
    plain = request_with(ToolResult("call-1", "render_chart", "the chart"))
    with_image = request_with(
        ToolResult("call-1", "render_chart", "the chart", images=(ImagePart("image/png", BIG_DATA),))
    )

    framing = 50  # the image's repr without its data: its type and mime type
    assert IMAGE_TOKENS <= request_tokens(with_image) - request_tokens(plain) < IMAGE_TOKENS + framing
    assert estimate_prompt_tokens(with_image) - estimate_prompt_tokens(plain) == IMAGE_TOKENS


def test_a_tool_row_with_an_image_counts_a_fixed_estimate_for_compaction() -> None:
    returns = [stored_return("c", "n", "x")]
    images: list[StoredToolImage] = [{"tool_call_id": "c", "mime_type": "image/png", "data": BIG_DATA}]
    plain = MessageSnapshot(id=uuid.uuid4(), agent_id=None, seq=1, role="tool", tool_returns=returns)
    with_image = dataclasses.replace(plain, images=images)

    assert row_tokens(with_image) - row_tokens(plain) == IMAGE_TOKENS


def test_only_a_model_that_takes_images_gets_the_images_of_the_tool_rows() -> None:
    assistant = MessageSnapshot(
        id=1,
        agent_id=None,
        seq=1,
        role="assistant",
        tool_calls=[{"id": "c", "name": "render_chart", "arguments": "{}", "requires_approval": False}],
    )
    tool = MessageSnapshot(
        id=2,
        agent_id=None,
        seq=2,
        role="tool",
        tool_returns=[stored_return("c", "render_chart", "t")],
        images=[{"tool_call_id": "c", "mime_type": "image/png", "data": "iVBORw0KGgo="}],
    )
    reads_images = ModelSettings(handle="anthropic/claude-sonnet-4-5", model="claude-sonnet-4-5", image_input=True)
    text_only = ModelSettings(handle="openai/gpt-3.5-turbo", model="gpt-3.5-turbo")

    [seen] = build_request([assistant, tool], [], reads_images).turns[-1].results  # type: ignore[union-attr]
    [unseen] = build_request([assistant, tool], [], text_only).turns[-1].results  # type: ignore[union-attr]

    assert seen.images == (CHART,)
    assert unseen.images == ()


@pytest.mark.parametrize(
    ("handle", "expected"),
    [
        ("anthropic/claude-sonnet-4-5-20250929", True),
        ("anthropic/claude-3-haiku-20240307", True),
        ("openai/gpt-4o", True),
        ("openai/gpt-4.1-mini", True),
        ("openai/gpt-5", True),
        ("openai/gpt-3.5-turbo", False),
        ("demo/echo-1", False),
        ("anthropic/claude-sonnet-9-future", True),
    ],
)
def test_which_models_take_images(handle: str, expected: bool) -> None:
    assert takes_images(handle) is expected
