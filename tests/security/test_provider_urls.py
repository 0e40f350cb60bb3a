"""Issue 14, items 4 and 16: an organization's provider base URL cannot reach the server's neighbours,
and tenants see generic provider errors while the detail stays in the server log."""

from __future__ import annotations

import http.server
import logging
import threading
from typing import TYPE_CHECKING

import pytest
from asgiref.sync import sync_to_async
from django.core.exceptions import ValidationError
from django.urls import reverse

from agents import services
from agents.api.states import agent_state_of
from agents.llm.anthropic import AnthropicClient
from agents.llm.base import LLMBadRequest, LLMConnectionError, LLMError
from agents.llm.connections import close_shared_clients
from agents.llm.openai import OpenAIClient
from agents.llm.registry import ProviderURLNotAllowed, get_llm_client
from providers.models import Provider
from tests.factories import OrganizationFactory, UserFactory
from tests.fake_llm.script import Fault, Reply
from tests.llm.helpers import make_request

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer

PUBLIC_URL = "https://93.184.215.14/v1"
INTERNAL_DETAIL = "upstream 10.9.8.7:5432 refused: password authentication failed for user agentserver"


@pytest.fixture(autouse=True)
async def _close_sdk_clients() -> AsyncIterator[None]:
    yield
    await close_shared_clients()


@pytest.fixture
def no_env_providers(settings):
    settings.ANTHROPIC_API_KEY = settings.OPENAI_API_KEY = ""
    settings.ANTHROPIC_BASE_URL = settings.OPENAI_BASE_URL = ""
    settings.PROVIDER_ALLOWED_PRIVATE_HOSTS = []
    return settings


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/v1",
        "http://localhost:5432",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.5/v1",
        "http://192.168.1.1/v1",
        "http://[::1]:8000/v1",
        "http://[::ffff:127.0.0.1]/v1",
        "http://0.0.0.0:8000/v1",
        "file:///etc/passwd",
    ],
)
def test_an_organization_base_url_on_a_private_loopback_or_link_local_address_is_refused(
    db: None, no_env_providers, url: str
):
    row = Provider(organization=OrganizationFactory(), name="openai", provider_type="openai", base_url=url)
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert "base_url" in refused.value.message_dict


def test_the_admin_refuses_a_private_base_url_and_saves_nothing(client, cast: Cast, no_env_providers):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.post(
        reverse("admin:providers_provider_add"),
        {
            "organization": cast.org_a.pk,
            "name": "openai",
            "provider_type": "openai",
            "api_key": "",
            "base_url": "http://169.254.169.254/",
            "models-TOTAL_FORMS": "0",
            "models-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "private, loopback or link-local" in response.content.decode()
    assert not Provider.objects.exists()


def test_the_operator_may_allow_a_private_host_by_name_address_or_network(db: None, no_env_providers):
    org = OrganizationFactory()
    no_env_providers.PROVIDER_ALLOWED_PRIVATE_HOSTS = ["localhost", "10.0.0.0/8", "127.0.0.1"]
    for url in ("http://localhost:8000/v1", "http://10.1.2.3/v1", "http://127.0.0.1:9/v1", PUBLIC_URL):
        Provider(organization=org, name="openai", provider_type="openai", base_url=url).full_clean(
            validate_unique=False
        )


async def test_a_model_call_to_a_private_base_url_stored_earlier_is_refused_before_connecting(
    transactional_db: None, fake_llm: FakeLLMServer, no_env_providers
):
    org = await OrganizationFactory._meta.model.objects.acreate(name="Acme", slug="acme")
    row = Provider(organization=org, name="openai", provider_type="openai", base_url=fake_llm.base_url_openai)
    row.api_key = "org-key"
    await row.asave()  # stored before the check existed, or the address changed since

    with pytest.raises(ProviderURLNotAllowed, match="private, loopback or link-local"):
        await sync_to_async(get_llm_client)("openai/gpt-4.1", organization=org)
    assert fake_llm.requests == []

    no_env_providers.PROVIDER_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    fake_llm.script(Reply(text="allowed"))
    client, model = await sync_to_async(get_llm_client)("openai/gpt-4.1", organization=org)
    events = [event async for event in client.generate(make_request("Hi", model=model), stream=False)]
    assert events


def test_the_operators_own_base_url_is_trusted(db: None, fake_llm: FakeLLMServer, no_env_providers):
    no_env_providers.OPENAI_BASE_URL = fake_llm.base_url_openai
    no_env_providers.OPENAI_API_KEY = "server-key"
    client, _ = get_llm_client("openai/gpt-4.1", organization=OrganizationFactory(), max_attempts=1)
    assert client.base_url == fake_llm.base_url_openai  # type: ignore[attr-defined]


@pytest.fixture
def redirecting_server(fake_llm: FakeLLMServer) -> Iterator[str]:
    """A public-looking endpoint that answers every POST with a redirect to the fake model server."""
    target = fake_llm.base_url_openai

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(307)
            self.send_header("Location", f"{target}/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("client_class", [OpenAIClient, AnthropicClient])
async def test_a_provider_redirect_is_not_followed(redirecting_server: str, fake_llm: FakeLLMServer, client_class):
    fake_llm.script(Reply(text="reached through a redirect"))
    client = client_class(api_key="org-key", base_url=redirecting_server)
    with pytest.raises(LLMError):
        async for _ in client.generate(make_request("Hi", model="m"), stream=False):
            pass
    assert fake_llm.requests == []


def test_changing_the_base_url_drops_the_stored_key(db: None, no_env_providers):
    row = Provider(organization=OrganizationFactory(), name="openai", provider_type="openai", base_url=PUBLIC_URL)
    row.api_key = "sk-org-secret"
    row.save()

    row = Provider.objects.get(pk=row.pk)
    row.base_url = "https://93.184.215.15/v1"
    row.save()
    assert Provider.objects.get(pk=row.pk).api_key == ""

    row = Provider.objects.get(pk=row.pk)
    row.base_url = PUBLIC_URL
    row.api_key = "sk-new-key-for-the-new-url"
    row.save()
    assert Provider.objects.get(pk=row.pk).api_key == "sk-new-key-for-the-new-url"


@pytest.mark.parametrize("client_class", [OpenAIClient, AnthropicClient])
async def test_tenants_see_a_generic_provider_error_and_the_detail_stays_in_the_log(
    fake_llm: FakeLLMServer, client_class, caplog
):
    base_url = fake_llm.base_url_openai if client_class is OpenAIClient else fake_llm.base_url_anthropic
    client = client_class(api_key="server-key", base_url=base_url)
    fake_llm.script(Fault.http(400, INTERNAL_DETAIL))
    with caplog.at_level(logging.WARNING, logger="agents.llm.errors"), pytest.raises(LLMBadRequest) as refused:
        async for _ in client.generate(make_request("Hi", model="m"), stream=False):
            pass
    shown = str(refused.value)
    assert "10.9.8.7" not in shown
    assert "password" not in shown
    assert "the provider refused the request" in shown
    assert INTERNAL_DETAIL in caplog.text


async def test_a_connection_failure_names_neither_the_address_nor_the_exception(caplog):
    client = OpenAIClient(api_key="server-key", base_url="http://127.0.0.1:9/internal-llm/v1")
    with caplog.at_level(logging.WARNING, logger="agents.llm.errors"), pytest.raises(LLMConnectionError) as failed:
        async for _ in client.generate(make_request("Hi", model="m"), stream=False):
            pass
    assert str(failed.value) == "Could not reach OpenAI"
    assert "Connection to OpenAI failed" in caplog.text


def test_agents_never_show_the_servers_own_provider_base_url(cast, settings):
    settings.ANTHROPIC_BASE_URL = "http://10.0.0.7:8080/internal-anthropic"
    agent = services.agent_create(organization=cast.org_a, name="a", model="anthropic/claude-sonnet-4-5-20250929")

    state = agent_state_of(agent)

    assert state["llm_config"]["model_endpoint"] == "https://api.anthropic.com/v1"
    assert "10.0.0.7" not in str(state)
