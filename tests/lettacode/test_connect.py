"""Letta Code's ``connect`` (``letta connect …``, ``/connect`` in the TUI) on our ``/v1/providers`` routes.

``letta connect <provider> --api-key … [--base-url …]`` checks the key (``POST /v1/providers/check``),
looks for a provider of its name (``GET /v1/providers``, names ``lc-<provider>``), then creates it
(``POST /v1/providers``) or updates it (``PATCH /v1/providers/{id}``). Its models then appear in
``GET /v1/models/`` as ``lc-<provider>/<model>``, and an agent on one of them answers through it.
The fake LLM's address is loopback, so the server allows it (``PROVIDER_ALLOWED_PRIVATE_HOSTS``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.fake_llm.listings import ListingFault
from tests.fake_llm.script import Reply
from tests.lettacode.client import LettaCode, ask
from tests.support.live_server import start_inprocess_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(300)]

COMPATIBLE = "lc-openai-compatible"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    """A server with no model provider of its own (only the demo model): the user brings one."""
    no_vendor = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    env = no_vendor | {"PROVIDER_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"}
    with start_inprocess_server(tmp_path_factory.mktemp("letta-code-connect"), extra_env=env) as live:
        yield live


@pytest.fixture
def letta_code(server: LiveServer, tmp_path: Path) -> Iterator[LettaCode]:
    """A new user of a fresh organization's server; the providers it connected are removed afterwards."""
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    yield LettaCode(server=server, home=tmp_path / "home", project=tmp_path / "project")
    with LettaCode(server=server, home=tmp_path, project=tmp_path).api() as api:
        for provider in api.get("/v1/providers/").json():
            api.delete(f"/v1/providers/{provider['id']}")


def connect_compatible(letta_code: LettaCode, fake_llm: FakeLLMServer, key: str) -> Any:
    return letta_code.command("connect", "openai-compatible", "--base-url", fake_llm.base_url_openai, "--api-key", key)


def test_connect_saves_a_provider_whose_models_are_listed_and_whose_key_never_shows(
    letta_code: LettaCode, fake_llm: FakeLLMServer
) -> None:
    done = connect_compatible(letta_code, fake_llm, "sk-compat-secret")

    assert done.returncode == 0, done.stderr
    assert f"Connected OpenAI-compatible API ({COMPATIBLE})" in done.stdout
    with letta_code.api() as api:
        providers = api.get("/v1/providers/")
        models = api.get("/v1/models/").json()
    [provider] = providers.json()
    assert (provider["name"], provider["provider_type"]) == (COMPATIBLE, "openai")
    assert provider["provider_category"] == "byok"
    assert provider["base_url"] == fake_llm.base_url_openai
    assert "sk-compat-secret" not in providers.text
    handles = [model["handle"] for model in models]
    assert f"{COMPATIBLE}/gpt-4o-mini" in handles
    assert handles[-1] == "demo/echo-1"  # Letta Code takes the first handle: real models first


def test_connecting_again_updates_the_provider_in_place(letta_code: LettaCode, fake_llm: FakeLLMServer) -> None:
    assert connect_compatible(letta_code, fake_llm, "sk-first").returncode == 0
    with letta_code.api() as api:
        [first] = api.get("/v1/providers/").json()

    again = connect_compatible(letta_code, fake_llm, "sk-second")

    assert again.returncode == 0, again.stderr
    with letta_code.api() as api:
        [second] = api.get("/v1/providers/").json()
    assert second["id"] == first["id"]
    fake_llm.reset()
    with letta_code.api() as api:
        assert api.patch(f"/v1/providers/{second['id']}/refresh").status_code == 200
    assert fake_llm.listing_requests[-1].headers.get("authorization") == "Bearer sk-second"


def test_connect_reports_a_key_the_provider_refuses_and_saves_nothing(
    letta_code: LettaCode, fake_llm: FakeLLMServer
) -> None:
    fake_llm.fail_listings("openai", ListingFault("401"))

    done = connect_compatible(letta_code, fake_llm, "sk-wrong")

    assert done.returncode == 1
    assert "Failed to connect OpenAI-compatible API" in done.stderr
    with letta_code.api() as api:
        assert api.get("/v1/providers/").json() == []


def test_a_new_agent_on_a_connected_model_answers_through_that_provider(
    letta_code: LettaCode, fake_llm: FakeLLMServer
) -> None:
    assert connect_compatible(letta_code, fake_llm, "sk-compat-secret").returncode == 0
    fake_llm.script(Reply(text="Answered through the connected provider."))

    with letta_code.open_session("--new-agent", "-m", f"{COMPATIBLE}/gpt-4o-mini") as screen:
        ask(screen, "Hello")
        screen.expect("Answered through the connected provider.", timeout=60)

    with letta_code.api() as api:
        agent = api.get(f"/v1/agents/{letta_code.settings()['lastAgent']}").json()
    assert agent["model"] == f"{COMPATIBLE}/gpt-4o-mini"
    answered = fake_llm.requests[-1]
    assert answered.path.endswith("/chat/completions")
    assert answered.headers.get("authorization") == "Bearer sk-compat-secret"
