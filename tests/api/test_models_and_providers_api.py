"""``/v1/models/``, ``/v1/models/embedding`` and ``/v1/providers`` through the DRF client, in Letta's shapes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from providers.models import Provider, ProviderModel
from tests.fake_llm.listings import ListingFault
from tests.providers.conftest import (
    ALL_LLM_HANDLES,
    ANTHROPIC_KEY,
    OPENAI_KEY,
    add_three_providers,
    without_env_providers,
)

if TYPE_CHECKING:
    from pytest_django.fixtures import SettingsWrapper
    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db

# What SDK 1.12's ``Model`` and ``EmbeddingModel`` require (letta_client/types/model.py, embedding_model.py).
MODEL_REQUIRED = {"context_window", "max_context_window", "model", "model_endpoint_type", "name", "provider_type"}
EMBEDDING_REQUIRED = {
    "display_name",
    "embedding_dim",
    "embedding_endpoint_type",
    "embedding_model",
    "name",
    "provider_name",
    "provider_type",
}


@pytest.fixture
def no_env_providers(settings: SettingsWrapper) -> SettingsWrapper:
    return without_env_providers(settings)


@pytest.fixture
def org_providers(cast: Cast, fake_llm: FakeLLMServer, no_env_providers) -> OrgProviders:
    return add_three_providers(cast, fake_llm)


def _handles(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["handle"] for item in response.json()]


def test_the_model_list_holds_every_providers_models_in_lettas_order_the_demo_last(
    alice_api: APIClient, org_providers: OrgProviders
) -> None:
    response = alice_api.get("/v1/models/")

    assert _handles(response) == ALL_LLM_HANDLES
    items = {item["handle"]: item for item in response.json()}
    for item in items.values():
        assert set(item) >= MODEL_REQUIRED
        assert item["name"] == item["model"]
        assert item["max_context_window"] == item["context_window"]
    sonnet = items["my-claude/claude-sonnet-4-6"]
    assert sonnet["provider_type"] == sonnet["model_endpoint_type"] == "anthropic"
    assert (sonnet["provider_name"], sonnet["provider_category"]) == ("my-claude", "byok")
    assert (sonnet["context_window"], sonnet["max_tokens"], sonnet["display_name"]) == (
        1_000_000,
        64_000,
        "Claude Sonnet 4.6",
    )
    assert items["my-ollama/llama3.2:latest"]["model_endpoint_type"] == "ollama"
    assert items["my-ollama/llama3.2:latest"]["context_window"] == 131_072
    assert items["demo/echo-1"]["provider_category"] == "base"


def test_the_model_list_answers_without_the_trailing_slash_and_filters_as_letta_does(
    alice_api: APIClient, org_providers: OrgProviders
) -> None:
    assert _handles(alice_api.get("/v1/models")) == ALL_LLM_HANDLES
    assert _handles(alice_api.get("/v1/models/?provider_category=byok")) == ALL_LLM_HANDLES[:-1]
    assert _handles(alice_api.get("/v1/models/?provider_category=base")) == ["demo/echo-1"]
    assert _handles(alice_api.get("/v1/models/?provider_category=base&provider_category=byok")) == ALL_LLM_HANDLES
    assert _handles(alice_api.get("/v1/models/?provider_name=my-claude")) == ALL_LLM_HANDLES[2:4]
    assert _handles(alice_api.get("/v1/models/?provider_type=ollama")) == ["my-ollama/llama3.2:latest"]
    assert _handles(alice_api.get("/v1/models/?provider_type=bedrock")) == []


@pytest.mark.parametrize("query", ["provider_type=nonsense", "provider_category=everything"])
def test_an_unknown_filter_value_is_a_422_naming_the_parameter(
    alice_api: APIClient,
    no_env_providers,
    query: str,
) -> None:
    response = alice_api.get(f"/v1/models/?{query}")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][:2] == ["query", query.split("=")[0]]


def test_the_embedding_list_holds_the_embedding_models(alice_api: APIClient, org_providers: OrgProviders) -> None:
    response = alice_api.get("/v1/models/embedding")

    assert _handles(response) == [
        "my-openai/text-embedding-3-small",
        "my-ollama/nomic-embed-text:latest",
        "demo/hashed-256",
    ]
    items = {item["handle"]: item for item in response.json()}
    for item in items.values():
        assert set(item) >= EMBEDDING_REQUIRED
    nomic = items["my-ollama/nomic-embed-text:latest"]
    assert (nomic["embedding_dim"], nomic["provider_type"], nomic["provider_name"]) == (768, "ollama", "ollama")
    assert items["my-openai/text-embedding-3-small"]["embedding_dim"] == 1536


def test_the_servers_own_providers_are_listed_as_base_and_their_url_is_never_shown(
    alice_api: APIClient,
    fake_llm: FakeLLMServer,
    no_env_providers,
) -> None:
    no_env_providers.ANTHROPIC_BASE_URL = fake_llm.url
    no_env_providers.ANTHROPIC_API_KEY = "sk-ant-server-secret"

    response = alice_api.get("/v1/models/")

    assert _handles(response) == ["anthropic/claude-haiku-4-5-20251001", "anthropic/claude-sonnet-4-6", "demo/echo-1"]
    assert {item["provider_category"] for item in response.json()[:2]} == {"base"}
    assert {item["model_endpoint"] for item in response.json()[:2]} == {"https://api.anthropic.com"}
    assert "127.0.0.1" not in response.content.decode()
    assert "sk-ant-server-secret" not in response.content.decode()
    assert alice_api.get("/v1/providers").json() == []


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("timeout", "did not answer in time"), ("401", "HTTP 401"), ("garbage", "not JSON"), ("malformed", "malformed")],
)
def test_a_provider_that_fails_leaves_the_list_at_200_with_its_models_unavailable_and_why(
    alice_api: APIClient, org_providers: OrgProviders, fake_llm: FakeLLMServer, kind: str, reason: str
) -> None:
    fake_llm.fail_listings("ollama", ListingFault(kind, stall=2.0))  # type: ignore[arg-type]
    refreshed = alice_api.patch(f"/v1/providers/{org_providers.ollama.public_id}/refresh")
    assert refreshed.status_code == 200
    assert refreshed.json()["status"] == "unavailable"
    assert reason in refreshed.json()["status_reason"]

    response = alice_api.get("/v1/models/")

    assert _handles(response) == [*ALL_LLM_HANDLES[:4], "my-ollama/llama3.2:latest", "demo/echo-1"]
    items = {item["handle"]: item for item in response.json()}
    assert items["my-ollama/llama3.2:latest"]["available"] is False
    assert reason in items["my-ollama/llama3.2:latest"]["unavailable_reason"]
    assert items["my-openai/gpt-4.1-mini"]["available"] is True
    assert items["my-openai/gpt-4.1-mini"]["unavailable_reason"] is None


def test_a_new_provider_that_fails_at_once_is_saved_unavailable_and_the_list_still_answers(
    alice_api: APIClient,
    fake_llm: FakeLLMServer,
    no_env_providers,
) -> None:
    fake_llm.fail_listings("openai", ListingFault("401"))

    created = alice_api.post(
        "/v1/providers",
        {"name": "vllm-box", "provider_type": "vllm", "api_key": "", "base_url": fake_llm.base_url_openai},
        format="json",
    )

    assert created.status_code == 200
    assert (created.json()["status"], created.json()["status_reason"]) == (
        "unavailable",
        "The provider refused the credentials (HTTP 401).",
    )
    assert _handles(alice_api.get("/v1/models/")) == ["demo/echo-1"]


def test_providers_are_created_listed_retrieved_modified_refreshed_and_deleted_as_letta_code_does(
    alice_api: APIClient,
    fake_llm: FakeLLMServer,
    cast: Cast,
    no_env_providers,
) -> None:
    created = alice_api.post(
        "/v1/providers",
        {
            "name": "lab-openai",
            "provider_type": "openai",
            "api_key": OPENAI_KEY,
            "base_url": fake_llm.base_url_openai,
            "profile": "ignored",
        },
        format="json",
    )
    assert created.status_code == 200, created.content
    provider = created.json()
    assert provider["id"].startswith("provider-")
    assert (provider["name"], provider["provider_type"], provider["provider_category"]) == (
        "lab-openai",
        "openai",
        "byok",
    )
    assert (provider["api_key"], provider["api_key_enc"], provider["has_api_key"]) == (None, None, True)
    assert provider["organization_id"] == cast.org_a.public_id
    assert provider["last_synced"] is not None and provider["status"] == "available"
    assert fake_llm.listing_requests[-1].headers["authorization"] == f"Bearer {OPENAI_KEY}"

    listed = alice_api.get("/v1/providers", {"name": "lab-openai"}).json()
    assert [item["id"] for item in listed] == [provider["id"]]
    assert alice_api.get(f"/v1/providers/{provider['id']}").json()["base_url"] == fake_llm.base_url_openai

    fake_llm.set_listing("openai", [{"id": "qwen3-coder", "object": "model", "max_model_len": 262_144}])
    modified = alice_api.patch(f"/v1/providers/{provider['id']}", {"api_key": "sk-rotated"}, format="json")
    assert modified.status_code == 200
    assert Provider.objects.get(name="lab-openai").api_key == "sk-rotated"
    assert _handles(alice_api.get("/v1/models/?provider_name=lab-openai")) == ["lab-openai/qwen3-coder"]

    fake_llm.set_listing("openai", [{"id": "qwen3-coder", "object": "model"}, {"id": "qwen3-8b", "object": "model"}])
    refreshed = alice_api.patch(f"/v1/providers/{provider['id']}/refresh")
    assert refreshed.status_code == 200
    assert _handles(alice_api.get("/v1/models/?provider_name=lab-openai")) == [
        "lab-openai/qwen3-8b",
        "lab-openai/qwen3-coder",
    ]

    deleted = alice_api.delete(f"/v1/providers/{provider['id']}")
    assert deleted.json() == {"message": f"Provider id={provider['id']} successfully deleted"}
    assert not Provider.objects.exists() and not ProviderModel.objects.exists()
    assert alice_api.get(f"/v1/providers/{provider['id']}").status_code == 404


def test_check_answers_lettas_message_or_its_authentication_error(
    alice_api: APIClient, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    body = {"provider_type": "anthropic", "api_key": "sk-ant-new", "base_url": fake_llm.base_url_anthropic}

    valid = alice_api.post("/v1/providers/check", body, format="json")
    stored = alice_api.post(f"/v1/providers/{org_providers.anthropic.public_id}/check")
    fake_llm.fail_listings("anthropic", ListingFault("401"))
    refused = alice_api.post("/v1/providers/check", body, format="json")

    assert (valid.status_code, valid.json()) == (200, {"message": "Valid api key for provider_type=anthropic"})
    assert (stored.status_code, stored.json()) == (200, {"message": "Valid api key for provider_type=anthropic"})
    assert refused.status_code == 401
    assert refused.json() == {
        "error": {
            "type": "llm_authentication",
            "message": "Authentication failed with the LLM model provider.",
            "detail": "UNAUTHENTICATED: The provider refused the credentials (HTTP 401).",
        }
    }
    assert Provider.objects.filter(organization=org_providers.anthropic.organization).count() == 3


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        ({"name": "anthropic", "provider_type": "anthropic", "api_key": "k"}, 400, "conflicts with an existing base"),
        ({"name": "demo", "provider_type": "openai", "api_key": "k"}, 400, "conflicts with an existing base"),
        ({"name": "my-claude", "provider_type": "anthropic", "api_key": "k"}, 409, "already exists"),
        ({"name": "a/b", "provider_type": "openai", "api_key": "k"}, 400, "no '/'"),
        ({"name": "local", "provider_type": "ollama", "api_key": ""}, 400, "needs its base URL"),
        ({"name": "claude2", "provider_type": "anthropic", "api_key": ""}, 400, "needs an API key"),
        ({"name": "x", "provider_type": "bedrock", "api_key": "k"}, 422, "provider_type"),
        ({"name": "odd-key", "provider_type": "openai", "api_key": "sk-\u00e9t\u00e9"}, 400, "printable ASCII"),
        (
            {"name": "lan", "provider_type": "vllm", "api_key": "", "base_url": "http://10.0.0.5:8000/v1"},
            400,
            "PROVIDER_ALLOWED_PRIVATE_HOSTS",
        ),
    ],
)
def test_a_provider_that_cannot_be_added_is_refused_with_the_reason(
    alice_api: APIClient,
    org_providers: OrgProviders,
    fake_llm: FakeLLMServer,
    settings: SettingsWrapper,
    body: dict[str, Any],
    status: int,
    text: str,
) -> None:
    settings.ANTHROPIC_API_KEY = "sk-ant-server"  # the server's own "anthropic" provider
    fake_llm.reset()

    response = alice_api.post("/v1/providers", body, format="json")

    assert response.status_code == status
    assert text in json.dumps(response.json())
    assert Provider.objects.filter(organization=org_providers.anthropic.organization).count() == 3
    assert fake_llm.listing_requests == []


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/v1/providers", {"name": "local", "provider_type": "ollama", "base_url": "http://127.0.0.1:1"}),
        ("post", "/v1/providers/", {"name": "claude2", "provider_type": "anthropic"}),
        ("post", "/v1/providers/check", {"provider_type": "openai"}),
        ("patch", "/v1/providers/{provider}", {"base_url": "https://example.com/v1"}),
    ],
)
def test_a_body_without_an_api_key_is_lettas_422_even_where_no_key_is_needed(
    alice_api: APIClient,
    org_providers: OrgProviders,
    fake_llm: FakeLLMServer,
    method: str,
    path: str,
    body: dict[str, Any],
) -> None:
    fake_llm.reset()

    response = getattr(alice_api, method)(path.format(provider=org_providers.openai.public_id), body, format="json")

    assert response.status_code == 422
    assert response.json() == {"detail": [{"loc": ["body", "api_key"], "msg": "Field required", "type": "missing"}]}
    assert Provider.objects.filter(organization=org_providers.openai.organization).count() == 3
    assert Provider.objects.get(pk=org_providers.openai.pk).base_url == org_providers.openai.base_url
    assert fake_llm.listing_requests == []


def test_one_organizations_providers_and_keys_never_show_to_another_and_keys_never_at_all(
    alice_api: APIClient, charlie_api: APIClient, org_providers: OrgProviders
) -> None:
    answers = [
        alice_api.get("/v1/providers"),
        alice_api.get(f"/v1/providers/{org_providers.openai.public_id}"),
        alice_api.get("/v1/models/"),
        alice_api.get("/v1/models/embedding"),
        alice_api.patch(f"/v1/providers/{org_providers.anthropic.public_id}/refresh"),
    ]
    theirs = [
        charlie_api.get("/v1/providers"),
        charlie_api.get("/v1/models/"),
        charlie_api.get("/v1/models/embedding"),
        charlie_api.get(f"/v1/providers/{org_providers.openai.public_id}"),
    ]

    for answer in [*answers, *theirs]:
        text = answer.content.decode()
        assert OPENAI_KEY not in text and ANTHROPIC_KEY not in text
    assert theirs[0].json() == []
    assert _handles(theirs[1]) == ["demo/echo-1"]
    assert _handles(theirs[2]) == ["demo/hashed-256"]
    assert theirs[3].status_code == 404
    assert {item["name"] for item in answers[0].json()} == {"my-openai", "my-ollama", "my-claude"}
