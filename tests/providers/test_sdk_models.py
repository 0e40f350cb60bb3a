"""Both SDK lines over HTTP: ``models.list()`` shows every model of an organization's OpenAI, Ollama and
Anthropic providers, and an agent on each answers, streams and calls a tool through its provider's wire.

One live server; the providers are added as Letta Code's ``/connect`` does (raw ``POST /v1/providers``,
no trailing slash), pointing at the fake LLM server. letta-client 0.1.324 runs in this process,
1.12.1 in its own virtualenv (``tests.sdk.conftest.sdk_python``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from letta_client import Letta, MessageCreate

from tests.providers.conftest import ALL_LLM_HANDLES, ANTHROPIC_KEY, OPENAI_KEY
from tests.sdk.conftest import sdk_python
from tests.support.live_server import start_live_server
from tests.support.scripts import json_report

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

EMBEDDINGS = ["my-openai/text-embedding-3-small", "my-ollama/nomic-embed-text:latest", "demo/hashed-256"]
SDK_1X = "1.12.1"
SCRIPT_1X = """
import json, sys
from letta_client import Letta
client = Letta(base_url=sys.argv[1], api_key=sys.argv[2])
models = client.models.list()
embeddings = client.models.embeddings.list()
print(json.dumps({
    "handles": [m.handle for m in models],
    "windows": {m.handle: m.max_context_window for m in models},
    "types": {m.handle: m.provider_type for m in models},
    "embeddings": [m.handle for m in embeddings],
    "dims": {m.handle: m.embedding_dim for m in embeddings},
}))
"""

# handle → (the path the fake LLM saw, the credential header it saw, Letta's endpoint type of the model,
# the type of its 1.x ``model_settings``: OpenAI's for an OpenAI-compatible server, which 1.12 has no class for)
AGENT_HANDLES = {
    "my-openai/gpt-4.1-mini": ("/v1/chat/completions", ("authorization", f"Bearer {OPENAI_KEY}"), "openai", "openai"),
    "my-ollama/llama3.2:latest": ("/v1/chat/completions", ("authorization", "Bearer not-needed"), "ollama", "openai"),
    "my-claude/claude-sonnet-4-6": (
        "/v1/messages",
        ("authorization", f"Bearer {ANTHROPIC_KEY}"),
        "anthropic",
        "anthropic",
    ),
}
DICE_TOOL = '''
def roll_dice(num_sides: int) -> str:
    """
    Roll a die.
    Args:
        num_sides (int): The number of sides on the die.
    Returns:
        str: The number rolled.
    """
    return str(num_sides)
'''
# One agent on ``argv[3]``: a blocking answer, a token stream, and a turn that calls the tool.
AGENT_SCRIPT_1X = """
import json, sys
from letta_client import Letta
client = Letta(base_url=sys.argv[1], api_key=sys.argv[2])
tool = client.tools.upsert(source_code=sys.argv[4])
agent = client.agents.create(
    name="on-" + sys.argv[3].split("/")[0], model=sys.argv[3], embedding="demo/hashed-256",
    tool_ids=[tool.id], include_base_tools=False,
)
answered = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hello"}])
chunks = list(client.agents.messages.create(
    agent.id, messages=[{"role": "user", "content": "hello again"}], streaming=True, stream_tokens=True
))
tool_turn = client.agents.messages.create(
    agent.id, messages=[{"role": "user", "content": "call roll_dice with num_sides=6"}]
)
print(json.dumps({
    "endpoint_type": agent.llm_config.model_endpoint_type,
    "provider_type": dict(agent.model_settings).get("provider_type"),
    "answered": [m.message_type for m in answered.messages],
    "streamed": [c.message_type for c in chunks],
    "stop": [c.stop_reason for c in chunks if c.message_type == "stop_reason"],
    "tool_turn": [m.message_type for m in tool_turn.messages],
    "returned": [m.status for m in tool_turn.messages if m.message_type == "tool_return_message"],
}))
"""

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    env = {"PROVIDER_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"}
    with start_live_server(tmp_path_factory.mktemp("providers-sdk"), extra_env=env) as live:
        headers = {"Authorization": f"Bearer {live.api_key}"}
        bodies = [
            {
                "name": "my-openai",
                "provider_type": "openai",
                "api_key": OPENAI_KEY,
                "base_url": fake_llm_server.base_url_openai,
            },
            {"name": "my-ollama", "provider_type": "ollama", "api_key": "", "base_url": fake_llm_server.url},
            {
                "name": "my-claude",
                "provider_type": "anthropic",
                "api_key": ANTHROPIC_KEY,
                "base_url": fake_llm_server.base_url_anthropic,
            },
        ]
        for body in bodies:
            created = httpx.post(f"{live.url}/v1/providers", json=body, headers=headers, timeout=30)
            assert created.status_code == 200, created.text
            assert created.json()["status"] == "available"
        yield live


def test_letta_client_0_1_324_lists_every_providers_models(server: LiveServer) -> None:
    client = Letta(base_url=server.url, token=server.api_key)

    models = client.models.list()
    providers = client.providers.list()

    assert [model.handle for model in models] == ALL_LLM_HANDLES
    assert {model.handle: model.context_window for model in models}["my-ollama/llama3.2:latest"] == 131_072
    assert sorted(provider.name for provider in providers) == ["my-claude", "my-ollama", "my-openai"]
    assert all(provider.api_key is None for provider in providers)


def test_letta_client_1_12_lists_every_providers_models_and_embeddings(server: LiveServer) -> None:
    argv = [str(sdk_python(SDK_1X)), "-c", SCRIPT_1X, server.url, server.api_key]
    report = json_report(argv, timeout=120, failure="letta-client 1.12 failed")

    assert report["handles"] == ALL_LLM_HANDLES
    assert report["windows"]["my-claude/claude-sonnet-4-6"] == 1_000_000
    assert report["types"]["my-ollama/llama3.2:latest"] == "ollama"
    assert report["embeddings"] == EMBEDDINGS
    assert report["dims"]["my-ollama/nomic-embed-text:latest"] == 768


def _seen_by_the_fake(fake_llm: FakeLLMServer, handle: str) -> None:
    path, (header, credential), _, _ = AGENT_HANDLES[handle]
    calls = fake_llm.requests
    assert calls, "the agent's provider was never called"
    assert {request.path for request in calls} == {path}
    assert {request.headers[header] for request in calls} == {credential}
    assert {request.body["model"] for request in calls} == {handle.split("/", 1)[1]}
    assert any(request.body.get("stream") for request in calls)


@pytest.mark.parametrize("handle", list(AGENT_HANDLES))
def test_letta_client_0_1_324_runs_an_agent_on_each_provider(
    server: LiveServer, fake_llm: FakeLLMServer, handle: str
) -> None:
    client = Letta(base_url=server.url, token=server.api_key)
    tool = client.tools.upsert(source_code=DICE_TOOL)
    agent = client.agents.create(
        name=f"on-{handle.split('/')[0]}",
        model=handle,
        embedding="demo/hashed-256",
        tool_ids=[tool.id],
        include_base_tools=False,
    )

    answered = client.agents.messages.create(agent_id=agent.id, messages=[MessageCreate(role="user", content="hello")])
    chunks = list(
        client.agents.messages.create_stream(
            agent_id=agent.id, messages=[MessageCreate(role="user", content="hello again")], stream_tokens=True
        )
    )
    tool_turn = client.agents.messages.create(
        agent_id=agent.id, messages=[MessageCreate(role="user", content="call roll_dice with num_sides=6")]
    )

    assert agent.llm_config.model_endpoint_type == AGENT_HANDLES[handle][2]
    assert agent.llm_config.handle == handle
    assert "assistant_message" in [message.message_type for message in answered.messages]
    kinds = [chunk.message_type for chunk in chunks]
    assert kinds.count("assistant_message") > 1 and kinds[-2:] == ["stop_reason", "usage_statistics"]
    returned = [m for m in tool_turn.messages if m.message_type == "tool_return_message"]
    assert "tool_call_message" in [m.message_type for m in tool_turn.messages]
    assert [m.status for m in returned] == ["success"]
    _seen_by_the_fake(fake_llm, handle)


@pytest.mark.parametrize("handle", list(AGENT_HANDLES))
def test_letta_client_1_12_runs_an_agent_on_each_provider(
    server: LiveServer, fake_llm: FakeLLMServer, handle: str
) -> None:
    argv = [str(sdk_python(SDK_1X)), "-c", AGENT_SCRIPT_1X, server.url, server.api_key, handle, DICE_TOOL]
    report = json_report(argv, timeout=120, failure="letta-client 1.12 failed")

    assert (report["endpoint_type"], report["provider_type"]) == AGENT_HANDLES[handle][2:]
    assert "assistant_message" in report["answered"]
    assert report["streamed"].count("assistant_message") > 1
    assert report["stop"] == ["end_turn"]
    assert "tool_call_message" in report["tool_turn"] and report["returned"] == ["success"]
    _seen_by_the_fake(fake_llm, handle)
