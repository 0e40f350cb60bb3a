"""Discovery: each provider's models come from its own listing API, with the limits it reports or models.dev's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from providers import selectors, services
from providers.models import ModelKind, Provider, ProviderModel, ProviderStatus
from tests.fake_llm.listings import ListingFault

if TYPE_CHECKING:
    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db


def _models(provider: Provider) -> dict[tuple[str, str], ProviderModel]:
    return {(row.kind, row.name): row for row in ProviderModel.objects.filter(provider=provider)}


def test_an_openai_provider_lists_its_models_with_the_catalogues_limits(org_providers: OrgProviders) -> None:
    models = _models(org_providers.openai)

    assert set(models) == {
        ("llm", "gpt-4.1-mini"),
        ("llm", "gpt-4o-mini"),
        ("embedding", "text-embedding-3-small"),
    }
    mini = models[("llm", "gpt-4.1-mini")]
    assert (mini.context_window, mini.max_output_tokens, mini.limits_source) == (1_047_576, 32_768, "models.dev")
    assert models[("embedding", "text-embedding-3-small")].embedding_dim == 1536
    assert org_providers.openai.status == ProviderStatus.AVAILABLE
    assert org_providers.openai.last_synced is not None


def test_an_anthropic_provider_reports_its_own_limits_where_it_has_them(org_providers: OrgProviders) -> None:
    models = _models(org_providers.anthropic)

    sonnet = models[("llm", "claude-sonnet-4-6")]
    assert (sonnet.context_window, sonnet.max_output_tokens, sonnet.limits_source) == (1_000_000, 64_000, "provider")
    assert sonnet.display_name == "Claude Sonnet 4.6"
    haiku = models[("llm", "claude-haiku-4-5-20251001")]
    assert haiku.limits_source == "models.dev"
    assert haiku.context_window == 200_000


def test_an_ollama_provider_reads_context_lengths_and_embedding_sizes_from_api_show(
    org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    models = _models(org_providers.ollama)

    llama = models[("llm", "llama3.2:latest")]
    assert (llama.context_window, llama.limits_source) == (131_072, "provider")
    nomic = models[("embedding", "nomic-embed-text:latest")]
    assert (nomic.embedding_dim, nomic.context_window) == (768, 2048)
    paths = [request.path for request in fake_llm.listing_requests]
    assert paths.count("/api/tags") == 1
    assert paths.count("/api/show") == 2


def test_a_refresh_adds_new_models_and_removes_gone_ones(org_providers: OrgProviders, fake_llm: FakeLLMServer) -> None:
    fake_llm.set_listing("openai", [{"id": "gpt-5", "object": "model", "context_window": 400_000}])

    services.provider_refresh(provider=org_providers.openai)

    assert set(_models(org_providers.openai)) == {("llm", "gpt-5")}
    assert _models(org_providers.openai)[("llm", "gpt-5")].context_window == 400_000


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("timeout", "did not answer in time"),
        ("401", "refused the credentials (HTTP 401)"),
        ("garbage", "not JSON"),
        ("malformed", "malformed"),
    ],
)
def test_a_provider_that_fails_keeps_its_models_marked_unavailable_with_the_reason(
    org_providers: OrgProviders, fake_llm: FakeLLMServer, kind: str, reason: str
) -> None:
    fake_llm.fail_listings("openai", ListingFault(kind, stall=2.0))  # type: ignore[arg-type]

    provider = services.provider_refresh(provider=org_providers.openai)

    assert provider.status == ProviderStatus.UNAVAILABLE
    assert reason in provider.status_reason
    assert len(_models(provider)) == 3
    listed = {model.handle: model for model in selectors.model_list(organization=provider.organization)}
    assert not listed["my-openai/gpt-4.1-mini"].available
    assert reason in listed["my-openai/gpt-4.1-mini"].unavailable_reason
    assert listed["my-claude/claude-sonnet-4-6"].available


def test_a_provider_that_cannot_be_reached_is_unavailable_and_saved(cast: Cast, no_env_providers) -> None:
    provider = services.provider_create(
        organization=cast.org_a, name="gone", provider_type="vllm", base_url="http://127.0.0.1:9/v1"
    )

    assert provider.status == ProviderStatus.UNAVAILABLE
    assert provider.status_reason == "Could not reach the provider."
    assert not ProviderModel.objects.filter(provider=provider).exists()


def test_the_embedding_list_holds_the_embedding_models_and_the_demo_last(org_providers: OrgProviders) -> None:
    handles = [model.handle for model in selectors.embedding_model_list(organization=org_providers.openai.organization)]

    assert handles == ["my-openai/text-embedding-3-small", "my-ollama/nomic-embed-text:latest", "demo/hashed-256"]
    assert all(model.kind == ModelKind.EMBEDDING for model in selectors.embedding_model_list(organization=None))
