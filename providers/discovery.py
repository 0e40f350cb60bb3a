"""Ask a provider which models it serves: its own listing API, nothing kept by hand.

- OpenAI and compatible servers (vLLM, LM Studio, OpenRouter, Groq, Together, DeepSeek,
  xAI, Gemini's OpenAI-compatible endpoint): ``GET /models``; context windows where the
  server reports them (``context_length``, ``context_window``, ``max_model_len``, …);
- Anthropic: ``GET /v1/models`` (paged), with ``max_input_tokens`` / ``max_tokens``;
- Ollama: ``GET /api/tags``, then ``POST /api/show`` per model for its context length,
  embedding size and capabilities;
- Azure OpenAI: ``GET /openai/models?api-version=…`` (handles name deployments by model).

Limits a listing leaves out come from ``providers.catalog``. Listings are plain HTTP GETs
read strictly (an SDK's lenient page parsing would turn a malformed answer into an empty
list), with the connect and read timeouts of ``PROVIDER_DISCOVERY_CONNECT_TIMEOUT`` /
``PROVIDER_DISCOVERY_READ_TIMEOUT``, no redirects and a size cap. Any failure is a
``DiscoveryFailed`` whose reason is safe to show the provider's organization.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings

from providers import catalog
from providers.endpoints import NO_KEY_PLACEHOLDER, EndpointNotAllowed
from providers.models import ModelKind
from providers.types import openai_base_url

if TYPE_CHECKING:
    from providers.endpoints import Endpoint

logger = logging.getLogger(__name__)

MAX_LISTING_BYTES = 16 * 1024 * 1024
ANTHROPIC_VERSION = "2023-06-01"
_ANTHROPIC_PAGES = 20
_CONTEXT_KEYS = ("context_length", "context_window", "max_model_len", "max_context_length", "max_input_tokens")
_OUTPUT_KEYS = ("max_completion_tokens", "max_output_tokens", "max_tokens")


@dataclass(frozen=True)
class DiscoveredModel:
    name: str
    kind: str
    display_name: str
    context_window: int
    max_output_tokens: int | None
    embedding_dim: int | None
    limits_source: str


class DiscoveryFailed(Exception):
    """The provider could not list its models. ``kind``: ``auth``, ``timeout``, ``unreachable``,
    ``http``, ``malformed`` or ``refused`` (an address the server may not reach)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def discover(endpoint: Endpoint) -> list[DiscoveredModel]:
    """Every model ``endpoint`` serves, chat and embedding, sorted by name; ``DiscoveryFailed`` otherwise."""
    try:
        endpoint.check_egress()
    except EndpointNotAllowed as exc:
        raise DiscoveryFailed("refused", str(exc)) from exc
    with httpx.Client(timeout=_timeout(), follow_redirects=False) as client:
        listing = {
            "openai": _openai_models,
            "anthropic": _anthropic_models,
            "ollama": _ollama_models,
            "azure": _azure_models,
        }[endpoint.spec.discovery]
        found = listing(client, endpoint)
    unique = {(model.kind, model.name): model for model in found}
    return sorted(unique.values(), key=lambda model: (model.kind, model.name))


def _timeout() -> httpx.Timeout:
    read = float(getattr(settings, "PROVIDER_DISCOVERY_READ_TIMEOUT", 10.0))
    connect = float(getattr(settings, "PROVIDER_DISCOVERY_CONNECT_TIMEOUT", 5.0))
    return httpx.Timeout(read, connect=connect)


def _request(client: httpx.Client, method: str, url: str, *, headers: dict[str, str], body: Any = None) -> Any:
    """The JSON answer of one call, or ``DiscoveryFailed`` saying what went wrong (no internals)."""
    try:
        with client.stream(method, url, headers=headers, json=body) as response:
            if response.status_code in (401, 403):
                raise DiscoveryFailed("auth", f"The provider refused the credentials (HTTP {response.status_code}).")
            if response.status_code >= 400:
                raise DiscoveryFailed("http", f"The provider answered HTTP {response.status_code} to the model list.")
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_LISTING_BYTES:
                    raise DiscoveryFailed("malformed", "The provider's model list is too large.")
    except UnicodeEncodeError as exc:  # a stored key or URL an HTTP request cannot carry
        raise DiscoveryFailed("auth", "The credentials have characters an HTTP request cannot carry.") from exc
    except httpx.TimeoutException as exc:
        logger.warning("Listing models at %s timed out: %s", url, exc)
        raise DiscoveryFailed("timeout", "The provider did not answer in time.") from exc
    except httpx.HTTPError as exc:
        logger.warning("Listing models at %s failed: %s", url, exc)
        raise DiscoveryFailed("unreachable", "Could not reach the provider.") from exc
    try:
        return json.loads(bytes(data))
    except ValueError as exc:
        raise DiscoveryFailed("malformed", "The provider's model list is not JSON.") from exc


def _malformed(what: str) -> DiscoveryFailed:
    return DiscoveryFailed("malformed", f"The provider's model list is malformed: {what}.")


def _items(answer: Any, key: str) -> list[dict[str, Any]]:
    items = answer.get(key) if isinstance(answer, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise _malformed(f"no list of models under {key!r}")
    return items


def _model_id(item: dict[str, Any], key: str = "id") -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > 300:
        raise _malformed(f"a model without a valid {key!r}")
    return value.strip()


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _positive_int(*values: Any) -> int | None:
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _bearer(endpoint: Endpoint) -> dict[str, str]:
    has_key = endpoint.api_key and endpoint.api_key != NO_KEY_PLACEHOLDER
    return {"Authorization": f"Bearer {endpoint.api_key}"} if has_key else {}


def _model(
    endpoint: Endpoint,
    name: str,
    *,
    display_name: str = "",
    context_window: int | None = None,
    max_output: int | None = None,
    embedding: bool | None = None,
    embedding_dim: int | None = None,
) -> DiscoveredModel:
    catalog_id = endpoint.spec.catalog_id
    is_embedding = catalog.is_embedding_model(catalog_id, name) if embedding is None else embedding
    if is_embedding:
        found = catalog.limits(catalog_id, name, context_window=context_window)
        return DiscoveredModel(
            name=name,
            kind=ModelKind.EMBEDDING,
            display_name=display_name or name,
            context_window=found.context_window,
            max_output_tokens=None,
            embedding_dim=embedding_dim or catalog.embedding_dim(catalog_id, name),
            limits_source=found.source,
        )
    found = catalog.limits(catalog_id, name, context_window=context_window, max_output=max_output)
    return DiscoveredModel(
        name=name,
        kind=ModelKind.LLM,
        display_name=display_name or name,
        context_window=found.context_window,
        max_output_tokens=found.max_output_tokens,
        embedding_dim=None,
        limits_source=found.source,
    )


def _openai_models(client: httpx.Client, endpoint: Endpoint) -> list[DiscoveredModel]:
    url = openai_base_url(endpoint.provider_type, endpoint.base_url)
    answer = _request(client, "GET", f"{url}/models", headers=_bearer(endpoint))
    found = []
    for item in _items(answer, "data"):
        name = _model_id(item).removeprefix("models/")  # Gemini names its models "models/gemini-…"
        top = _mapping(item.get("top_provider"))
        context = _positive_int(*(item.get(key) for key in _CONTEXT_KEYS), top.get("context_length"))
        output = _positive_int(*(item.get(key) for key in _OUTPUT_KEYS), top.get("max_completion_tokens"))
        label = item.get("display_name") or item.get("name")
        found.append(
            _model(
                endpoint,
                name,
                display_name=label if isinstance(label, str) else "",
                context_window=context,
                max_output=output,
            )
        )
    return found


def _anthropic_models(client: httpx.Client, endpoint: Endpoint) -> list[DiscoveredModel]:
    headers = {"x-api-key": endpoint.api_key, "anthropic-version": ANTHROPIC_VERSION}
    found: list[DiscoveredModel] = []
    after = ""
    for _ in range(_ANTHROPIC_PAGES):
        query = f"?limit=1000&after_id={after}" if after else "?limit=1000"
        answer = _request(client, "GET", f"{endpoint.url}/v1/models{query}", headers=headers)
        items = _items(answer, "data")
        for item in items:
            label = item.get("display_name")
            found.append(
                _model(
                    endpoint,
                    _model_id(item),
                    display_name=label if isinstance(label, str) else "",
                    context_window=_positive_int(item.get("max_input_tokens")),
                    max_output=_positive_int(item.get("max_tokens")),
                    embedding=False,
                )
            )
        last = answer.get("last_id")
        if not answer.get("has_more") or not isinstance(last, str) or not items:
            break
        after = last
    return found


def _azure_models(client: httpx.Client, endpoint: Endpoint) -> list[DiscoveredModel]:
    url = f"{endpoint.url}/openai/models?api-version={endpoint.api_version}"
    answer = _request(client, "GET", url, headers={"api-key": endpoint.api_key})
    found = []
    for item in _items(answer, "data"):
        capabilities = _mapping(item.get("capabilities"))
        embedding = bool(capabilities.get("embeddings")) and not capabilities.get("chat_completion")
        found.append(_model(endpoint, _model_id(item), embedding=embedding or None))
    return found


def _ollama_models(client: httpx.Client, endpoint: Endpoint) -> list[DiscoveredModel]:
    root = endpoint.url.removesuffix("/v1")  # its own API, beside the OpenAI-compatible one under /v1
    answer = _request(client, "GET", f"{root}/api/tags", headers={})
    found = []
    for item in _items(answer, "models"):
        name = _model_id(item, "name")
        found.append(_ollama_model(client, endpoint, root, name, item))
    return found


def _ollama_model(
    client: httpx.Client, endpoint: Endpoint, root: str, name: str, item: dict[str, Any]
) -> DiscoveredModel:
    """One Ollama model, described by ``/api/show`` (a model it cannot describe gets the catalogue's limits)."""
    try:
        shown = _request(client, "POST", f"{root}/api/show", headers={}, body={"model": name})
    except DiscoveryFailed as exc:
        logger.info("Ollama could not describe %s: %s", name, exc.reason)
        shown = {}
    shown = _mapping(shown)
    info = _mapping(shown.get("model_info"))
    architecture = info.get("general.architecture")
    prefix = f"{architecture}." if isinstance(architecture, str) else ""
    capabilities = shown.get("capabilities")
    details = _mapping(item.get("details"))
    families = " ".join(str(family) for family in (details.get("families") or [details.get("family") or ""]))
    if isinstance(capabilities, list):
        embedding = "embedding" in capabilities and "completion" not in capabilities
    else:
        embedding = "bert" in families.lower() or catalog.is_embedding_model("", name)
    return _model(
        endpoint,
        name,
        context_window=_positive_int(info.get(f"{prefix}context_length")) if prefix else None,
        embedding=embedding,
        embedding_dim=_positive_int(info.get(f"{prefix}embedding_length")) if prefix else None,
    )
