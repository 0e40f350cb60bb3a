"""``models.list()`` in both SDK lines shows every model of an organization's OpenAI, Ollama and Anthropic providers.

One live server; the providers are added as Letta Code's ``/connect`` does (raw ``POST /v1/providers``,
no trailing slash), pointing at the fake LLM server. letta-client 0.1.324 runs in this process,
1.12.1 in its own virtualenv (``tests.sdk.conftest.sdk_python``).
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import httpx
import pytest
from letta_client import Letta

from tests.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.sdk.conftest import sdk_python
from tests.support.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

HANDLES = [
    "my-openai/gpt-4.1-mini",
    "my-openai/gpt-4o-mini",
    "my-claude/claude-haiku-4-5-20251001",
    "my-claude/claude-sonnet-4-6",
    "my-ollama/llama3.2:latest",
    "demo/echo-1",
]
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

    assert [model.handle for model in models] == HANDLES
    assert {model.handle: model.context_window for model in models}["my-ollama/llama3.2:latest"] == 131_072
    assert sorted(provider.name for provider in providers) == ["my-claude", "my-ollama", "my-openai"]
    assert all(provider.api_key is None for provider in providers)


def test_letta_client_1_12_lists_every_providers_models_and_embeddings(server: LiveServer) -> None:
    result = subprocess.run(
        [str(sdk_python(SDK_1X)), "-c", SCRIPT_1X, server.url, server.api_key],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])

    assert report["handles"] == HANDLES
    assert report["windows"]["my-claude/claude-sonnet-4-6"] == 1_000_000
    assert report["types"]["my-ollama/llama3.2:latest"] == "ollama"
    assert report["embeddings"] == EMBEDDINGS
    assert report["dims"]["my-ollama/nomic-embed-text:latest"] == 768
