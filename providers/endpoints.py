"""Where a provider's calls go, with which key: the one place credentials are resolved.

The server's own providers (``base``) come from the settings, read on every use
(``BASE_PROVIDERS``: Letta's fixed names, e.g. ``anthropic`` from ``ANTHROPIC_API_KEY``).
An organization's provider of the same name wins over it.

The server's own key is never sent to a base URL an organization chose: an organization's
provider with its own base URL uses its own key only (or none: a local server); one
without a base URL of its own (or with the operator's) goes to the operator's URL and may
fall back to the operator's key for that type, as before providers were rows. A URL an
organization chose must pass ``core.egress.check_provider_url`` before every call.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from core.egress import UnsafeProviderURL, check_provider_url
from providers.types import DEFAULT_AZURE_API_VERSION, SPECS, ProviderCategory, TypeSpec

if TYPE_CHECKING:
    from providers.models import Provider

# Compatible servers ignore the key, but the SDK insists on one.
NO_KEY_PLACEHOLDER = "not-needed"


@dataclass(frozen=True)
class BaseProviderSettings:
    """One environment provider: its fixed name and type, and the settings holding its key and URL."""

    name: str
    provider_type: str
    key_setting: str = ""
    url_setting: str = ""


BASE_PROVIDERS: tuple[BaseProviderSettings, ...] = (
    BaseProviderSettings("anthropic", "anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    BaseProviderSettings("openai", "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    BaseProviderSettings("google_ai", "google_ai", "GEMINI_API_KEY", "GEMINI_BASE_URL"),
    BaseProviderSettings("azure", "azure", "AZURE_API_KEY", "AZURE_BASE_URL"),
    BaseProviderSettings("groq", "groq", "GROQ_API_KEY"),
    BaseProviderSettings("together", "together", "TOGETHER_API_KEY"),
    BaseProviderSettings("deepseek", "deepseek", "DEEPSEEK_API_KEY"),
    BaseProviderSettings("xai", "xai", "XAI_API_KEY"),
    BaseProviderSettings("openrouter", "openrouter", "OPENROUTER_API_KEY"),
    BaseProviderSettings("ollama", "ollama", url_setting="OLLAMA_BASE_URL"),
    BaseProviderSettings("vllm", "vllm", url_setting="VLLM_API_BASE"),
    BaseProviderSettings("lmstudio_openai", "lmstudio_openai", url_setting="LMSTUDIO_BASE_URL"),
)
_BY_TYPE = {base.provider_type: base for base in BASE_PROVIDERS}


class EndpointNotAllowed(ValueError):
    """The organization's base URL points where the server may not connect (the message says why)."""


@dataclass(frozen=True)
class Endpoint:
    """A provider ready to call: its name and type, the base URL (empty: the type's public one) and the key."""

    name: str
    provider_type: str
    category: str
    base_url: str
    api_key: str
    api_version: str = ""
    chosen_by_organization: bool = False

    @property
    def spec(self) -> TypeSpec:
        return SPECS[self.provider_type]

    @property
    def url(self) -> str:
        """The base URL calls go to."""
        return (self.base_url or self.spec.default_base_url).rstrip("/")

    @property
    def public_endpoint(self) -> str | None:
        """The endpoint shown to tenants: never the server's own base URL (issue 14, item 16)."""
        if self.category == ProviderCategory.BYOK and self.base_url:
            return self.base_url
        return self.spec.default_base_url or None

    @property
    def fingerprint(self) -> str:
        """A digest of the configuration (the key hashed): models are listed again when it changes."""
        key_digest = hashlib.sha256(self.api_key.encode()).hexdigest()
        text = "\n".join((self.provider_type, self.base_url, self.api_version, key_digest))
        return hashlib.sha256(text.encode()).hexdigest()

    def check_egress(self) -> None:
        """Refuse an organization's base URL on a private, loopback or link-local address."""
        if not self.chosen_by_organization:
            return
        try:
            check_provider_url(self.url)
        except UnsafeProviderURL as exc:
            raise EndpointNotAllowed(f"The base URL of provider {self.name} is not allowed: {exc}") from exc


def _setting(name: str) -> str:
    return str(getattr(settings, name, "") or "") if name else ""


def base_endpoints() -> list[Endpoint]:
    """The server's own providers whose settings are there, in ``BASE_PROVIDERS`` order."""
    found = []
    for base in BASE_PROVIDERS:
        spec = SPECS[base.provider_type]
        key, url = _setting(base.key_setting), _setting(base.url_setting)
        if spec.needs_base_url and not url:
            continue
        if spec.needs_key and not key and not (base.provider_type == "openai" and url):
            continue  # an OPENAI_BASE_URL alone is a local compatible server
        api_version = (
            (_setting("AZURE_API_VERSION") or DEFAULT_AZURE_API_VERSION) if base.provider_type == "azure" else ""
        )
        found.append(
            Endpoint(
                name=base.name,
                provider_type=base.provider_type,
                category=ProviderCategory.BASE,
                base_url=url,
                api_key=key or NO_KEY_PLACEHOLDER,
                api_version=api_version,
            )
        )
    return found


def base_endpoint(name: str) -> Endpoint | None:
    return next((endpoint for endpoint in base_endpoints() if endpoint.name == name), None)


def byok_endpoint(provider: Provider) -> Endpoint:
    """The endpoint of an organization's provider (its key, or, at the operator's URL, the operator's)."""
    spec = SPECS[provider.provider_type]
    base = _BY_TYPE.get(provider.provider_type)
    env_key = _setting(base.key_setting) if base else ""
    env_url = _setting(base.url_setting) if base else ""
    chosen = bool(provider.base_url) and provider.base_url.rstrip("/") != env_url.rstrip("/")
    if chosen:
        key, url = provider.api_key, provider.base_url  # never the server's key to a URL the organization picked
    else:
        key, url = provider.api_key or env_key, env_url
    if not key and spec.protocol == "openai" and (not spec.needs_key or url):
        key = NO_KEY_PLACEHOLDER  # a local compatible server
    api_version = provider.api_version or (DEFAULT_AZURE_API_VERSION if provider.provider_type == "azure" else "")
    return Endpoint(
        name=provider.name,
        provider_type=provider.provider_type,
        category=ProviderCategory.BYOK,
        base_url=url,
        api_key=key,
        api_version=api_version,
        chosen_by_organization=chosen,
    )


def candidate_endpoint(*, provider_type: str, api_key: str, base_url: str, api_version: str = "") -> Endpoint:
    """Credentials an organization is about to save (``check``): treated as its own choice."""
    spec = SPECS[provider_type]
    keyless = spec.protocol == "openai" and (not spec.needs_key or bool(base_url))
    key = api_key or (NO_KEY_PLACEHOLDER if keyless else "")
    return Endpoint(
        name=provider_type,
        provider_type=provider_type,
        category=ProviderCategory.BYOK,
        base_url=base_url,
        api_key=key,
        api_version=api_version or (DEFAULT_AZURE_API_VERSION if provider_type == "azure" else ""),
        chosen_by_organization=bool(base_url),
    )
