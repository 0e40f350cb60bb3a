"""Images in MCP results reach models that take images, asserted on what the fake model server received.

An agent calls the ``images`` server's tools (``tests/mcp_servers/servers.py``) on a real MCP server;
Anthropic gets the image inside the ``tool_result``, OpenAI in a ``user`` message after the tool
messages; an image left out, and a model that reads no images, get the text alone. The conversions of
``mcp_servers.results`` are tested on the SDK's own result types.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import pytest
from mcp.types import AudioContent, CallToolResult, ImageContent, TextContent

from agents import services
from agents.conversations.services import conversation_fork
from agents.llm.tokens import IMAGE_TOKENS
from agents.models import Agent, Message
from mcp_servers.results import result_content, result_text
from tests.fake_llm.script import Reply
from tests.mcp_servers.conftest import add_server
from tests.mcp_servers.servers import SVG_DRAWING, TINY_PNG
from tools.models import Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.test import APIClient

    from accounts.models import Organization
    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db

TINY_PNG_B64 = base64.b64encode(TINY_PNG).decode()
PNG_SIZE = len(TINY_PNG)
CHART_TEXT = f"Chart: sales [image image/png, {PNG_SIZE} bytes]"


@pytest.fixture
def models(settings: Any, fake_llm: Any) -> Any:
    """Anthropic and OpenAI handles answer from the fake model server."""
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.OPENAI_BASE_URL = fake_llm.base_url_openai
    settings.OPENAI_API_KEY = "sk-test"
    return fake_llm


def image_agent(organization: Organization, url: str, model: str, transport: str = "streamable_http") -> Agent:
    added = add_server(organization, url, name="images", server_type=transport)
    tool_ids = [tool.public_id for tool in Tool.objects.filter(metadata__mcp__server_id=added.public_id)]
    return services.agent_create(organization=organization, name="painter", model=model, tool_ids=tool_ids)


def call_then_answer(api: APIClient, fake_llm: Any, agent: Agent, tool: str, **arguments: Any) -> dict[str, Any]:
    """One turn: the model calls ``tool``, then answers; the API's body."""
    fake_llm.script(Reply(tool_calls=[(tool, arguments)]), Reply(text="Done."))
    body = {"messages": [{"role": "user", "content": f"use {tool}"}]}
    response = api.post(f"/v1/agents/{agent.public_id}/messages", body, format="json")
    assert response.status_code == 200, response.content
    answer: dict[str, Any] = response.json()
    return answer


def anthropic_tool_result(body: dict[str, Any]) -> dict[str, Any]:
    """The last ``tool_result`` block of a recorded Anthropic request."""
    blocks = [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert blocks, "no tool result in the request"
    last: dict[str, Any] = blocks[-1]
    return last


def tool_row(agent: Agent) -> Message:
    return Message.objects.filter(agent=agent, role="tool").latest("seq")


# --- through an agent -----------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["streamable_http", "sse"])
def test_an_anthropic_model_gets_the_mcp_image_inside_the_tool_result(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any, transport: str
) -> None:
    url = mcp_server("images", transport).url
    agent = image_agent(cast.org_a, url, "anthropic/claude-sonnet-4-5-20250929", transport)

    body = call_then_answer(alice_api, models, agent, "render_chart", title="sales")

    [returned] = [m for m in body["messages"] if m["message_type"] == "tool_return_message"]
    assert (returned["status"], returned["tool_return"]) == ("success", CHART_TEXT)
    content = anthropic_tool_result(models.requests[-1].body)["content"]
    assert [part["type"] for part in content] == ["text", "text", "image"]
    assert CHART_TEXT in content[0]["text"]
    assert content[1]["text"] == "[1 image returned by this tool call attached below]"
    assert content[2]["source"] == {"type": "base64", "media_type": "image/png", "data": TINY_PNG_B64}


def test_the_image_is_stored_with_the_tool_row_and_sent_again_on_the_next_turn(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any
) -> None:
    agent = image_agent(cast.org_a, mcp_server("images").url, "anthropic/claude-sonnet-4-5-20250929")
    call_then_answer(alice_api, models, agent, "render_chart", title="sales")
    models.script(Reply(text="Still the same chart."))

    response = alice_api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": "and?"}]}, format="json"
    )

    assert response.status_code == 200
    row = tool_row(agent)
    [call_id] = [item["tool_call_id"] for item in row.tool_returns]
    assert row.images == [{"tool_call_id": call_id, "mime_type": "image/png", "data": TINY_PNG_B64}]
    image = anthropic_tool_result(models.requests[-1].body)["content"][-1]
    assert image["source"]["data"] == TINY_PNG_B64
    listed = alice_api.get(f"/v1/agents/{agent.public_id}/messages").json()
    assert TINY_PNG_B64 not in str(listed), "the wire never shows the image data"


def test_the_context_overview_counts_an_image_at_its_estimate_not_its_base64(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any
) -> None:
    agent = image_agent(cast.org_a, mcp_server("images").url, "anthropic/claude-sonnet-4-5-20250929")
    before = alice_api.get(f"/v1/agents/{agent.public_id}/context").json()["num_tokens_messages"]

    call_then_answer(alice_api, models, agent, "render_chart", title="sales")

    after = alice_api.get(f"/v1/agents/{agent.public_id}/context").json()["num_tokens_messages"]
    assert IMAGE_TOKENS <= after - before < IMAGE_TOKENS + 400


def test_a_forked_conversation_keeps_the_images_of_the_rows_it_copies(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any
) -> None:
    agent = image_agent(cast.org_a, mcp_server("images").url, "anthropic/claude-sonnet-4-5-20250929")
    call_then_answer(alice_api, models, agent, "render_chart", title="sales")
    original = tool_row(agent)

    fork = conversation_fork(agent=agent, source=None, user=None, rows=[original])

    [copy] = Message.objects.filter(conversation=fork, role="tool")
    assert copy.images == original.images != []


def test_an_openai_model_gets_the_image_in_a_user_message_after_the_tool_message(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any
) -> None:
    agent = image_agent(cast.org_a, mcp_server("images").url, "openai/gpt-4o")

    call_then_answer(alice_api, models, agent, "render_chart", title="sales")

    messages = models.requests[-1].body["messages"]
    [at] = [i for i, message in enumerate(messages) if message["role"] == "tool"]
    call_id = messages[at]["tool_call_id"]
    assert CHART_TEXT in messages[at]["content"]
    assert messages[at + 1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": f"[1 image returned by tool call {call_id} (render_chart)]"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{TINY_PNG_B64}"}},
        ],
    }


def test_an_image_over_the_size_limit_stays_text_that_says_why(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any, settings: Any
) -> None:
    settings.MCP_MAX_IMAGE_BYTES = 50
    agent = image_agent(cast.org_a, mcp_server("images").url, "anthropic/claude-sonnet-4-5-20250929")

    body = call_then_answer(alice_api, models, agent, "render_chart", title="sales")

    reason = (
        f"[image image/png, {PNG_SIZE} bytes; not attached: image too large ({PNG_SIZE} bytes, the limit is 50 bytes)]"
    )
    [returned] = [m for m in body["messages"] if m["message_type"] == "tool_return_message"]
    assert returned["tool_return"] == f"Chart: sales {reason}"
    content = anthropic_tool_result(models.requests[-1].body)["content"]
    assert isinstance(content, str) and reason in content
    assert tool_row(agent).images == []


def test_an_svg_image_stays_text_that_names_the_accepted_types(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any
) -> None:
    agent = image_agent(cast.org_a, mcp_server("images").url, "anthropic/claude-sonnet-4-5-20250929")

    call_then_answer(alice_api, models, agent, "draw_vector", shape="box")

    content = anthropic_tool_result(models.requests[-1].body)["content"]
    assert isinstance(content, str)
    assert (
        f"Drawing: box [image image/svg+xml, {len(SVG_DRAWING)} bytes; not attached: unsupported image type "
        "(accepted: image/png, image/jpeg, image/gif, image/webp)]"
    ) in content


@pytest.mark.parametrize("model", ["openai/gpt-3.5-turbo", "demo/echo-1"])
def test_a_model_without_image_input_gets_only_the_text(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], models: Any, model: str
) -> None:
    agent = image_agent(cast.org_a, mcp_server("images").url, model)

    if model.startswith("demo/"):
        body = {"messages": [{"role": "user", "content": "call render_chart with title=sales"}]}
        alice_api.post(f"/v1/agents/{agent.public_id}/messages", body, format="json")
        assert [item["tool_return"] for item in tool_row(agent).tool_returns] == [CHART_TEXT]
        return
    call_then_answer(alice_api, models, agent, "render_chart", title="sales")

    messages = models.requests[-1].body["messages"]
    assert [m["role"] for m in messages[-2:]] == ["assistant", "tool"]
    assert CHART_TEXT in messages[-1]["content"]
    assert TINY_PNG_B64 not in str(messages)
    assert len(tool_row(agent).images) == 1, "kept for a model that takes images later"


# --- the conversions ------------------------------------------------------------------------------


def image(raw: bytes, mime_type: str = "image/png") -> ImageContent:
    return ImageContent(type="image", data=base64.b64encode(raw).decode(), mime_type=mime_type)


JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 12
GIF = b"GIF89a" + b"\x00" * 12
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 4


def test_a_result_keeps_each_supported_image_and_describes_it_in_the_text() -> None:
    result = CallToolResult(content=[TextContent(type="text", text="Two views"), image(TINY_PNG), image(WEBP)])

    content = result_content(result)

    assert content.ok
    assert content.text == f"Two views [image image/png, {PNG_SIZE} bytes] [image image/png, {len(WEBP)} bytes]"
    assert [(i.mime_type, i.data) for i in content.images] == [
        ("image/png", TINY_PNG_B64),
        ("image/webp", base64.b64encode(WEBP).decode()),
    ]
    assert result_text(result) == (True, content.text)


@pytest.mark.parametrize(("raw", "sniffed"), [(JPEG, "image/jpeg"), (GIF, "image/gif"), (TINY_PNG, "image/png")])
def test_an_images_type_is_read_from_its_bytes_not_from_the_servers_claim(raw: bytes, sniffed: str) -> None:
    [kept] = result_content(CallToolResult(content=[image(raw, "image/webp")])).images

    assert kept.mime_type == sniffed


def test_images_beyond_the_limit_per_result_stay_text(settings: Any) -> None:
    settings.MCP_MAX_IMAGES = 1

    content = result_content(CallToolResult(content=[image(TINY_PNG), image(GIF)]))

    assert len(content.images) == 1
    assert content.text == (
        f"[image image/png, {PNG_SIZE} bytes] [image image/png, {len(GIF)} bytes; "
        "not attached: more than 1 images in one result]"
    )


def test_an_image_whose_data_is_not_base64_stays_text() -> None:
    broken = ImageContent(type="image", data="not base64!", mime_type="image/png")

    content = result_content(CallToolResult(content=[broken]))

    assert content.images == ()
    assert content.text == "[image image/png, 11 bytes; not attached: the image data is not valid base64]"


def test_audio_and_errors_keep_todays_text() -> None:
    audio = AudioContent(type="audio", data=base64.b64encode(b"abc").decode(), mime_type="audio/wav")

    content = result_content(CallToolResult(content=[audio, image(TINY_PNG)], is_error=True))

    assert not content.ok
    assert content.text == f"[audio audio/wav, 3 bytes] [image image/png, {PNG_SIZE} bytes]"
