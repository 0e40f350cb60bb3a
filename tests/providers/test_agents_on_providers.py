"""An agent on each of an organization's providers answers, streams and calls a tool, through that provider's wire."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from agents import services
from agents.errors import InvalidArgument
from agents.memory.archival import passage_insert, passage_search
from agents.models import Message
from tests.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.tool_sources import DICE_SOURCE
from tools.services import tool_upsert_from_source

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from agents.models import Agent
    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db

# handle → (the path the fake saw, the credential header it saw)
PROVIDERS = {
    "my-openai/gpt-4.1-mini": ("/v1/chat/completions", ("authorization", f"Bearer {OPENAI_KEY}")),
    "my-ollama/llama3.2:latest": ("/v1/chat/completions", ("authorization", "Bearer not-needed")),
    "my-claude/claude-sonnet-4-6": ("/v1/messages", ("authorization", f"Bearer {ANTHROPIC_KEY}")),
}


def _agent(cast: Cast, handle: str) -> Agent:
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    return services.agent_create(organization=cast.org_a, name="on-a-provider", model=handle, tool_ids=[dice.public_id])


def _sse(response: Any) -> list[dict[str, Any]]:
    body = b"".join(response).decode()
    frames = [frame.removeprefix("data: ") for frame in body.split("\n\n") if frame.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    return [json.loads(frame) for frame in frames[:-1]]


@pytest.mark.parametrize("handle", list(PROVIDERS))
def test_an_agent_on_each_provider_answers_streams_and_calls_a_tool(
    alice_api: APIClient, cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer, handle: str
) -> None:
    agent = _agent(cast, handle)
    path, (header, credential) = PROVIDERS[handle]
    model = handle.split("/", 1)[1]

    answered = alice_api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": "hello"}]}, format="json"
    )
    tool_turn = alice_api.post(
        f"/v1/agents/{agent.public_id}/messages",
        {"messages": [{"role": "user", "content": "call roll_dice with num_sides=6"}]},
        format="json",
    )
    streamed = alice_api.post(
        f"/v1/agents/{agent.public_id}/messages/stream",
        {"messages": [{"role": "user", "content": "hello again"}], "stream_tokens": True},
        format="json",
    )

    assert answered.status_code == 200, answered.content
    assert "assistant_message" in [m["message_type"] for m in answered.json()["messages"]]
    chunks = _sse(streamed)
    assert len([c for c in chunks if c["message_type"] == "assistant_message"]) > 1
    assert chunks[-2]["stop_reason"] == "end_turn"
    kinds = [m["message_type"] for m in tool_turn.json()["messages"]]
    assert "tool_call_message" in kinds and "tool_return_message" in kinds
    returned = next(m for m in tool_turn.json()["messages"] if m["message_type"] == "tool_return_message")
    assert returned["status"] == "success"
    calls = fake_llm.requests
    assert {request.path for request in calls} == {path}
    assert {request.headers[header] for request in calls} == {credential}
    assert {request.body["model"] for request in calls} == {model}
    assert any(request.body.get("stream") for request in calls)
    assert Message.objects.filter(agent=agent, role="tool").count() == 1


def test_an_agents_own_embedding_handle_embeds_archival_memory_through_its_provider(
    cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    agent = services.agent_create(
        organization=cast.org_a, name="archivist", model="demo/echo-1", embedding="my-ollama/nomic-embed-text:latest"
    )

    stored = passage_insert(agent=agent, text="Alice drinks green tea")[0]
    passage_insert(agent=agent, text="quarterly revenue report")
    found = passage_search(agent=agent, query="green tea")

    assert stored.embedding is not None and len(stored.embedding) == 16
    assert stored.embedding_model == "my-ollama/nomic-embed-text:latest"
    assert found[0].pk == stored.pk
    embedded = [request for request in fake_llm.listing_requests if request.path == "/v1/embeddings"]
    assert [request.body["input"] for request in embedded] == [
        ["Alice drinks green tea"],
        ["quarterly revenue report"],
        ["green tea"],
    ]
    assert {request.body["model"] for request in embedded} == {"nomic-embed-text:latest"}


def test_an_embedding_handle_of_a_provider_that_does_not_embed_is_refused(
    cast: Cast, org_providers: OrgProviders
) -> None:
    with pytest.raises(InvalidArgument, match="not supported by my-claude"):
        services.agent_create(organization=cast.org_a, name="x", embedding="my-claude/claude-sonnet-4-6")


def test_a_handle_of_a_provider_the_organization_does_not_have_is_refused(
    cast: Cast, org_providers: OrgProviders
) -> None:
    with pytest.raises(InvalidArgument, match="not supported"):
        services.agent_create(organization=cast.org_b, name="x", model="my-claude/claude-sonnet-4-6")


@pytest.mark.parametrize(
    ("handle", "endpoint_type", "settings_type"),
    [
        ("my-openai/gpt-4.1-mini", "openai", "openai"),
        ("my-ollama/llama3.2:latest", "ollama", "openai"),
        ("my-claude/claude-sonnet-4-6", "anthropic", "anthropic"),
    ],
)
def test_an_agent_on_an_organizations_provider_shows_that_providers_type_and_category(
    alice_api: APIClient,
    cast: Cast,
    org_providers: OrgProviders,
    fake_llm: FakeLLMServer,
    handle: str,
    endpoint_type: str,
    settings_type: str,
) -> None:
    agent = services.agent_create(
        organization=cast.org_a, name="typed", model=handle, embedding="my-ollama/nomic-embed-text:latest"
    )

    state = alice_api.get(f"/v1/agents/{agent.public_id}").json()
    listed = alice_api.get("/v1/agents/").json()

    config = state["llm_config"]
    assert (config["handle"], config["provider_name"]) == (handle, handle.split("/")[0])
    assert (config["model_endpoint_type"], config["provider_category"]) == (endpoint_type, "byok")
    assert config["model_endpoint"].startswith(fake_llm.url)
    assert state["model_settings"]["provider_type"] == settings_type
    assert state["embedding_config"]["embedding_endpoint_type"] == "ollama"
    assert [item["llm_config"] for item in listed] == [config]
