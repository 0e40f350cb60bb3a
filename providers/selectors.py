"""Reads on providers: an organization's providers, the models it can use, and a handle's endpoint.

A handle ``<name>/<model>`` names the organization's provider ``name`` if it has one, else
the server's provider of that name (``providers.endpoints``). Model lists are Letta's order:
by provider type (``TYPE_ORDER``), then provider name, then model name; models of an
unavailable provider after the others; the offline demo model always last.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict, Unpack

from accounts.scoping import page
from providers.endpoints import base_endpoint, base_endpoints, byok_endpoint
from providers.models import ModelKind, Provider, ProviderModel, ProviderStatus
from providers.types import DEMO, SPECS, TYPE_ORDER, ProviderCategory

if TYPE_CHECKING:
    import uuid
    from collections.abc import Iterable

    from accounts.models import Organization
    from accounts.scoping import Cursor
    from providers.endpoints import Endpoint

DEMO_MODEL = "echo-1"
DEMO_MODEL_LABEL = "Demo model (offline, no API key)"
DEMO_CONTEXT_WINDOW = 32_000
DEMO_MAX_OUTPUT_TOKENS = 4_096
DEMO_EMBEDDING = "hashed-256"
DEMO_EMBEDDING_DIM = 256


@dataclass(frozen=True)
class ListedModel:
    """One model as a picker or ``GET /v1/models/`` shows it."""

    provider_name: str
    provider_type: str
    provider_category: str
    name: str
    display_name: str
    kind: str
    context_window: int
    max_output_tokens: int | None
    embedding_dim: int | None
    endpoint_type: str
    embedding_endpoint_type: str
    endpoint: str | None
    limits_source: str
    available: bool = True
    unavailable_reason: str = ""

    @property
    def handle(self) -> str:
        return f"{self.provider_name}/{self.name}"

    @property
    def is_demo(self) -> bool:
        return self.provider_name == DEMO


DEMO_LLM = ListedModel(
    provider_name=DEMO,
    provider_type=DEMO,
    provider_category=ProviderCategory.BASE,
    name=DEMO_MODEL,
    display_name=DEMO_MODEL_LABEL,
    kind=ModelKind.LLM,
    context_window=DEMO_CONTEXT_WINDOW,
    max_output_tokens=DEMO_MAX_OUTPUT_TOKENS,
    embedding_dim=None,
    endpoint_type=DEMO,
    embedding_endpoint_type=DEMO,
    endpoint=None,
    limits_source="default",
)
# The demo provider's embedding model: the demo model's listing but for its name, kind and size.
DEMO_EMBEDDING_MODEL = replace(
    DEMO_LLM,
    name=DEMO_EMBEDDING,
    display_name="Demo embedding (offline hashed bag of words)",
    kind=ModelKind.EMBEDDING,
    max_output_tokens=None,
    embedding_dim=DEMO_EMBEDDING_DIM,
)


# --- providers ---------------------------------------------------------------------------


def provider_list(
    *,
    organization: Organization | None,
    name: str | None = None,
    provider_type: str | None = None,
    **cursor: Unpack[Cursor],
) -> list[Provider]:
    """The organization's own providers (never the server's), newest first by default."""
    rows = Provider.objects.for_org(organization).byok()
    if name:
        rows = rows.filter(name=name)
    if provider_type:
        rows = rows.filter(provider_type=provider_type)
    return page(rows, Provider, **cursor)


def provider_get(*, organization: Organization | None, provider_id: str) -> Provider:
    """The organization's provider ``provider_id`` (``provider-<uuid>``); another organization's is a ``NotFound``."""
    rows = Provider.objects.for_org(organization).byok()
    provider: Provider = rows.get_public(provider_id, missing=f"Provider {provider_id} not found")
    return provider


def provider_models(*, provider: Provider) -> list[ProviderModel]:
    return list(ProviderModel.objects.filter(provider=provider).order_by("kind", "name"))


def providers_for_page(*, organization: Organization) -> list[tuple[Provider, list[ProviderModel]]]:
    """The organization's providers, each with its models (the providers page)."""
    providers = list(Provider.objects.for_org(organization).byok().order_by("name"))
    models: dict[object, list[ProviderModel]] = {provider.pk: [] for provider in providers}
    for model in ProviderModel.objects.filter(provider__in=providers).order_by("kind", "name"):
        models[model.provider_id].append(model)
    return [(provider, models[provider.pk]) for provider in providers]


# --- endpoints ---------------------------------------------------------------------------


def endpoint_of(provider: Provider) -> Endpoint | None:
    """Where ``provider``'s calls go; ``None`` for a server provider no longer in the settings."""
    if provider.category == ProviderCategory.BYOK:
        return byok_endpoint(provider)
    return base_endpoint(provider.name)


def endpoint_for(*, organization: Organization | None, name: str) -> Endpoint | None:
    """The endpoint a handle's provider ``name`` names: the organization's own, else the server's."""
    own = Provider.objects.for_org(organization).byok().filter(name=name).first()
    if own is not None:
        return byok_endpoint(own)
    return base_endpoint(name)


def provider_names(*, organization: Organization | None) -> list[str]:
    """The names a handle may start with: the organization's providers and the server's."""
    own = list(Provider.objects.for_org(organization).byok().values_list("name", flat=True))
    return list(dict.fromkeys([*own, *(endpoint.name for endpoint in base_endpoints())]))


@dataclass(frozen=True)
class HandleProvider:
    """What an agent's state says of the provider its handle names (Letta's ``LLMConfig`` fields)."""

    name: str
    provider_type: str
    category: str
    endpoint_type: str
    embedding_endpoint_type: str
    endpoint: str | None


def handle_providers(
    *, organization: Organization | uuid.UUID | None, names: Iterable[str]
) -> dict[str, HandleProvider]:
    """The providers handles starting with ``names`` name (the organization's own, else the server's), in one query.

    A name that names no provider (a deleted one, the demo model) is left out."""
    wanted = {name for name in names if name and name != DEMO}
    own = {
        provider.name: byok_endpoint(provider)
        for provider in Provider.objects.for_org(organization).byok().filter(name__in=wanted)
    }
    base = {endpoint.name: endpoint for endpoint in base_endpoints() if endpoint.name in wanted - set(own)}
    found = {}
    for name, endpoint in {**base, **own}.items():
        spec = endpoint.spec
        found[name] = HandleProvider(
            name=name,
            provider_type=endpoint.provider_type,
            category=endpoint.category,
            endpoint_type=spec.endpoint_type,
            embedding_endpoint_type=spec.embedding_endpoint_type,
            endpoint=endpoint.public_endpoint if endpoint.category == ProviderCategory.BYOK else None,
        )
    return found


def provider_type_of(*, organization: Organization | None, name: str) -> str | None:
    """The type of the provider a handle's first part names (``demo`` for the demo model), if any."""
    if name == DEMO:
        return DEMO
    endpoint = endpoint_for(organization=organization, name=name)
    return endpoint.provider_type if endpoint is not None else None


# --- models ------------------------------------------------------------------------------


def _visible_providers(organization: Organization | None) -> list[Provider]:
    """The organization's providers and the server's, minus server providers its own shadow."""
    own = list(Provider.objects.for_org(organization).byok())
    configured = {endpoint.name for endpoint in base_endpoints()}
    shadowed = {provider.name for provider in own}
    base = [
        provider
        for provider in Provider.objects.base()
        if provider.name in configured and provider.name not in shadowed
    ]
    return [*own, *base]


def _listed(provider: Provider, model: ProviderModel) -> ListedModel:
    spec = SPECS[provider.provider_type]
    endpoint = endpoint_of(provider)
    available = provider.status != ProviderStatus.UNAVAILABLE
    return ListedModel(
        provider_name=provider.name,
        provider_type=provider.provider_type,
        provider_category=provider.category,
        name=model.name,
        display_name=model.display_name or model.name,
        kind=model.kind,
        context_window=model.context_window,
        max_output_tokens=model.max_output_tokens,
        embedding_dim=model.embedding_dim,
        endpoint_type=spec.endpoint_type,
        embedding_endpoint_type=spec.embedding_endpoint_type,
        endpoint=endpoint.public_endpoint if endpoint is not None else spec.default_base_url or None,
        limits_source=model.limits_source,
        available=available,
        unavailable_reason="" if available else provider.status_reason,
    )


def _sort_key(model: ListedModel) -> tuple[bool, bool, int, str, str]:
    rank = TYPE_ORDER.index(model.provider_type) if model.provider_type in TYPE_ORDER else len(TYPE_ORDER)
    return (model.is_demo, not model.available, rank, model.provider_name, model.name)


def _models(organization: Organization | None, kind: str) -> list[ListedModel]:
    providers = {provider.pk: provider for provider in _visible_providers(organization)}
    rows = ProviderModel.objects.filter(provider_id__in=list(providers), kind=kind)
    return [_listed(providers[row.provider_id], row) for row in rows]


class ModelFilters(TypedDict, total=False):
    """Letta's filters of ``GET /v1/models``: any of ``categories`` (``base``, ``byok``), a provider name or type."""

    categories: tuple[str, ...]
    provider_name: str | None
    provider_type: str | None


def model_list(*, organization: Organization | None, **filters: Unpack[ModelFilters]) -> list[ListedModel]:
    """The chat models ``organization`` can use, as last discovered, with Letta's filters; the demo model last."""
    listed = [*_models(organization, ModelKind.LLM), DEMO_LLM]
    if categories := filters.get("categories"):
        listed = [model for model in listed if model.provider_category in categories]
    if provider_name := filters.get("provider_name"):
        listed = [model for model in listed if model.provider_name == provider_name]
    if provider_type := filters.get("provider_type"):
        listed = [model for model in listed if model.provider_type == provider_type]
    return sorted(listed, key=_sort_key)


def embedding_model_list(*, organization: Organization | None) -> list[ListedModel]:
    """The embedding models ``organization`` can use, as last discovered; the demo embedding last."""
    return sorted([*_models(organization, ModelKind.EMBEDDING), DEMO_EMBEDDING_MODEL], key=_sort_key)


def model_get(*, organization: Organization | None, handle: str) -> ListedModel | None:
    """The listed model a handle names (the demo model for any ``demo/…``), or ``None``."""
    name, _, model = handle.partition("/")
    if name == DEMO:
        return DEMO_LLM
    for listed in _models(organization, ModelKind.LLM):
        if listed.provider_name == name and listed.name == model:
            return listed
    return None
