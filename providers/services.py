"""Writes on providers: create, update, delete, check credentials, and refresh the models they list.

Keyword-only. A refresh asks the provider (``providers.discovery``) and replaces its stored
models with what it answered; a provider that fails keeps the models it listed before, marked
unavailable with the reason, and never makes a listing fail. The server's own providers
(``base``) get rows here too, made from the settings (``base_providers_sync``), so their
models are stored and refreshed the same way.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Unpack

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.egress import UnsafeProviderURL, check_provider_url
from core.errors import ApplicationError, Conflict, InvalidArgument
from providers import selectors
from providers.discovery import DiscoveredModel, DiscoveryFailed, discover
from providers.endpoints import base_endpoints, byok_endpoint, candidate_endpoint
from providers.models import Provider, ProviderModel, ProviderStatus
from providers.types import DEMO, SPECS, ProviderCategory

if TYPE_CHECKING:
    from accounts.models import Organization
    from providers.endpoints import Endpoint
    from providers.selectors import ListedModel, ModelFilters

logger = logging.getLogger(__name__)

#: A provider that failed is asked again after this long, even when its models are not yet stale.
RETRY_FAILED_SECONDS = 60
#: How many providers a model list asks at once.
MAX_PARALLEL_LISTINGS = 8
MAX_NAME_LENGTH = 100
# Names no organization may take: the demo model's, and Letta's free models'.
RESERVED_NAMES = frozenset({DEMO, "letta"})


class ProviderCheckFailed(ApplicationError):
    """Credentials that do not list models; ``kind`` says why (``auth`` is Letta's 401)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.status_code = 401 if kind == "auth" else 400


def _max_age() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "PROVIDER_MODELS_MAX_AGE_SECONDS", 3600)))


# --- validation --------------------------------------------------------------------------


def provider_name_checked(organization: Organization, name: str, *, exclude: Provider | None = None) -> str:
    """``name`` stripped, if an organization's new provider may take it (``InvalidArgument`` or ``Conflict``)."""
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME_LENGTH or "/" in name or any(ch.isspace() for ch in name):
        raise InvalidArgument(
            f"Provider name {name!r} is not valid: 1 to {MAX_NAME_LENGTH} characters, no '/' and no spaces.",
            field="name",
        )
    if name in RESERVED_NAMES or name in {endpoint.name for endpoint in base_endpoints()}:
        raise InvalidArgument(
            f"Provider name '{name}' conflicts with an existing base provider. Please choose a different name.",
            field="name",
        )
    taken = Provider.objects.for_org(organization).filter(name=name)
    if exclude is not None:
        taken = taken.exclude(pk=exclude.pk)
    if taken.exists():
        raise Conflict(f"A provider named {name!r} already exists in this organization.")
    return name


def _check_type(provider_type: str) -> str:
    if provider_type not in SPECS:
        raise InvalidArgument(
            f"Provider type {provider_type!r} is not supported: one of {', '.join(SPECS)}.", field="provider_type"
        )
    return provider_type


def _check_base_url(provider_type: str, base_url: str) -> str:
    base_url = (base_url or "").strip().rstrip("/")
    spec = SPECS[provider_type]
    if spec.needs_base_url and not base_url:
        raise InvalidArgument(f"A {spec.label} provider needs its base URL.", field="base_url")
    if base_url:
        try:
            check_provider_url(base_url)
        except UnsafeProviderURL as exc:
            raise InvalidArgument(str(exc), field="base_url") from exc
    return base_url


def _check_key_text(api_key: str) -> None:
    """A key travels in an HTTP header: printable ASCII without spaces."""
    if api_key and not (api_key.isascii() and api_key.isprintable() and " " not in api_key):
        raise InvalidArgument("An API key is printable ASCII without spaces.", field="api_key")


def _check_key(provider_type: str, api_key: str, base_url: str) -> None:
    _check_key_text(api_key)
    spec = SPECS[provider_type]
    if spec.needs_key and not api_key and (spec.protocol != "openai" or not base_url):
        raise InvalidArgument(f"A {spec.label} provider needs an API key.", field="api_key")


# --- writes ------------------------------------------------------------------------------


def provider_create(
    *,
    organization: Organization,
    name: str,
    provider_type: str,
    api_key: str = "",
    base_url: str = "",
    api_version: str = "",
    region: str = "",
    refresh: bool = True,
) -> Provider:
    """Add an organization's provider and list its models at once (a failure leaves it unavailable, saved)."""
    provider_type = _check_type(provider_type)
    name = provider_name_checked(organization, name)
    base_url = _check_base_url(provider_type, base_url)
    _check_key(provider_type, api_key, base_url)
    provider = Provider(
        organization=organization,
        name=name,
        provider_type=provider_type,
        category=ProviderCategory.BYOK,
        base_url=base_url,
        api_version=(api_version or "").strip(),
        region=(region or "").strip(),
    )
    provider.api_key = api_key or ""
    try:
        with transaction.atomic():
            provider.save()
    except IntegrityError as exc:
        raise Conflict(f"A provider named {name!r} already exists in this organization.") from exc
    return provider_refresh(provider=provider) if refresh else provider


def provider_update(
    *,
    provider: Provider,
    api_key: str | None = None,
    base_url: str | None = None,
    api_version: str | None = None,
    region: str | None = None,
    refresh: bool = True,
) -> Provider:
    """Change the given fields (``None`` or an empty key keeps it); a new base URL drops the old key."""
    if base_url is not None:
        provider.base_url = _check_base_url(provider.provider_type, base_url)
    if api_key:
        _check_key_text(api_key)
        provider.api_key = api_key
    if api_version is not None:
        provider.api_version = api_version.strip()
    if region is not None:
        provider.region = region.strip()
    provider.checked_at = None
    provider.save()
    return provider_refresh(provider=provider) if refresh else provider


def provider_delete(*, provider: Provider) -> None:
    provider.delete()


def provider_check(*, provider_type: str, api_key: str = "", base_url: str = "", api_version: str = "") -> None:
    """Whether these credentials list models; ``ProviderCheckFailed`` with the reason otherwise."""
    provider_type = _check_type(provider_type)
    base_url = _check_base_url(provider_type, base_url)
    _check_key(provider_type, api_key, base_url)
    endpoint = candidate_endpoint(
        provider_type=provider_type, api_key=api_key, base_url=base_url, api_version=api_version
    )
    _check_endpoint(endpoint)


def provider_check_stored(*, provider: Provider) -> None:
    """Whether the stored credentials of ``provider`` list models (``ProviderCheckFailed`` otherwise)."""
    _check_endpoint(byok_endpoint(provider))


def _check_endpoint(endpoint: Endpoint) -> None:
    try:
        discover(endpoint)
    except DiscoveryFailed as exc:
        raise ProviderCheckFailed(exc.kind, exc.reason) from exc


@dataclass(frozen=True)
class _Listing:
    """What one ask of a provider gave: its models, or why it failed (``None``: nothing to ask)."""

    found: list[DiscoveredModel] | None = None
    failure: DiscoveryFailed | None = None


def _ask(endpoint: Endpoint | None) -> _Listing:
    """One provider's models (HTTP only, no database: safe in a worker thread)."""
    if endpoint is None:
        return _Listing()
    try:
        return _Listing(found=discover(endpoint))
    except DiscoveryFailed as exc:
        return _Listing(failure=exc)


def provider_refresh(*, provider: Provider) -> Provider:
    """List ``provider``'s models again: new ones are added, gone ones removed; a failure keeps them, unavailable."""
    return _store_listing(provider, _ask(selectors.endpoint_of(provider)))


def _store_listing(provider: Provider, listing: _Listing) -> Provider:
    now = timezone.now()
    if listing.failure is not None:
        reason = listing.failure.reason
        logger.info("Provider %s (%s) is unavailable: %s", provider.name, provider.pk, reason)
        Provider.objects.filter(pk=provider.pk).update(
            status=ProviderStatus.UNAVAILABLE, status_reason=reason, checked_at=now
        )
        provider.refresh_from_db()
        return provider
    if listing.found is None:
        return provider
    with transaction.atomic():
        kept = {(model.kind, model.name) for model in listing.found}
        stored = {(row.kind, row.name): row for row in ProviderModel.objects.filter(provider=provider)}
        gone = [row.pk for key, row in stored.items() if key not in kept]
        ProviderModel.objects.filter(pk__in=gone).delete()
        for model in listing.found:
            ProviderModel.objects.update_or_create(
                provider=provider,
                kind=model.kind,
                name=model.name,
                defaults={
                    "display_name": model.display_name,
                    "context_window": model.context_window,
                    "max_output_tokens": model.max_output_tokens,
                    "embedding_dim": model.embedding_dim,
                    "limits_source": model.limits_source,
                },
            )
        Provider.objects.filter(pk=provider.pk).update(
            status=ProviderStatus.AVAILABLE, status_reason="", checked_at=now, last_synced=now
        )
    provider.refresh_from_db()
    return provider


def providers_refresh(providers: list[Provider]) -> None:
    """Refresh ``providers``, asking them at once (threads doing HTTP only), then storing what each gave:
    a list waits for its slowest provider, not for the sum of their timeouts."""
    endpoints = [selectors.endpoint_of(provider) for provider in providers]
    if len(providers) < 2:
        listings = [_ask(endpoint) for endpoint in endpoints]
    else:
        with ThreadPoolExecutor(max_workers=min(len(providers), MAX_PARALLEL_LISTINGS)) as pool:
            listings = list(pool.map(_ask, endpoints))
    for provider, listing in zip(providers, listings, strict=True):
        _store_listing(provider, listing)


def base_providers_sync() -> list[Provider]:
    """Rows for the server's own providers as the settings configure them now; rows of removed ones go."""
    endpoints = base_endpoints()
    rows = []
    for endpoint in endpoints:
        row = Provider.objects.base().filter(name=endpoint.name).first()
        if row is None:
            try:
                with transaction.atomic():
                    row = Provider.objects.create(
                        organization=None,
                        name=endpoint.name,
                        provider_type=endpoint.provider_type,
                        category=ProviderCategory.BASE,
                        fingerprint=endpoint.fingerprint,
                    )
            except IntegrityError:  # another request made it first
                row = Provider.objects.base().get(name=endpoint.name)
        elif row.fingerprint != endpoint.fingerprint or row.provider_type != endpoint.provider_type:
            ProviderModel.objects.filter(provider=row).delete()
            Provider.objects.filter(pk=row.pk).update(
                provider_type=endpoint.provider_type,
                fingerprint=endpoint.fingerprint,
                status=ProviderStatus.UNKNOWN,
                status_reason="",
                checked_at=None,
                last_synced=None,
            )
            row.refresh_from_db()
        rows.append(row)
    Provider.objects.base().exclude(name__in=[endpoint.name for endpoint in endpoints]).delete()
    return rows


def _stale(provider: Provider, now: datetime) -> bool:
    checked: datetime | None = provider.checked_at
    if checked is None:
        return True
    if provider.status == ProviderStatus.UNAVAILABLE:
        return checked < now - min(_max_age(), timedelta(seconds=RETRY_FAILED_SECONDS))
    return checked < now - _max_age()


def providers_refresh_stale(*, organization: Organization | None) -> None:
    """Refresh the organization's and the server's providers that were never listed or are stale."""
    now = timezone.now()
    base = base_providers_sync()
    own = list(Provider.objects.for_org(organization).byok())
    providers_refresh([provider for provider in [*own, *base] if _stale(provider, now)])


def providers_refresh_all() -> int:
    """Refresh every provider (Celery beat); how many were asked."""
    providers = [*base_providers_sync(), *Provider.objects.byok().filter(organization__isnull=False)]
    for provider in providers:
        provider_refresh(provider=provider)
    return len(providers)


def model_list_fresh(*, organization: Organization | None, **filters: Unpack[ModelFilters]) -> list[ListedModel]:
    """The chat models ``organization`` can use (``selectors.model_list``), its stale providers refreshed first."""
    providers_refresh_stale(organization=organization)
    return selectors.model_list(organization=organization, **filters)


def embedding_model_list_fresh(*, organization: Organization | None) -> list[ListedModel]:
    """The embedding models ``organization`` can use, its stale providers refreshed first."""
    providers_refresh_stale(organization=organization)
    return selectors.embedding_model_list(organization=organization)
