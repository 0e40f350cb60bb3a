"""The provider types we speak, with what each one needs and how its models are found.

One row per type (``SPECS``): the wire protocol its model calls use (Anthropic's
Messages API, OpenAI's chat completions, or Azure OpenAI through the ``openai`` SDK),
its public base URL, whether it needs a key or a base URL, how its models are listed
(``discovery``), which of its models embed, and its name in the models.dev catalogue
(``providers.catalog``) for the limits its listing does not report.

Google Gemini is called through its OpenAI-compatible endpoint with the ``openai`` SDK:
chat completions with tools and streaming, ``/models`` and ``/embeddings`` are all there
(README, "Models and providers").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.db import models

Protocol = Literal["anthropic", "openai", "azure"]
Discovery = Literal["anthropic", "openai", "ollama", "azure"]


class ProviderType(models.TextChoices):
    """Letta's ``provider_type`` names for the types we support."""

    ANTHROPIC = "anthropic", "Anthropic"
    OPENAI = "openai", "OpenAI (or any OpenAI-compatible base URL)"
    OLLAMA = "ollama", "Ollama"
    VLLM = "vllm", "vLLM"
    LMSTUDIO = "lmstudio_openai", "LM Studio"
    OPENROUTER = "openrouter", "OpenRouter"
    GROQ = "groq", "Groq"
    TOGETHER = "together", "Together AI"
    DEEPSEEK = "deepseek", "DeepSeek"
    XAI = "xai", "xAI"
    GOOGLE_AI = "google_ai", "Google Gemini"
    AZURE = "azure", "Azure OpenAI"


class ProviderCategory(models.TextChoices):
    BASE = "base", "Server (environment)"
    BYOK = "byok", "Organization"


@dataclass(frozen=True)
class TypeSpec:
    type: str
    protocol: Protocol
    discovery: Discovery
    default_base_url: str = ""
    needs_key: bool = True
    needs_base_url: bool = False
    embeddings: bool = True
    # Letta's ``model_endpoint_type`` / ``embedding_endpoint_type`` for this type's models.
    endpoint_type: str = "openai"
    embedding_endpoint_type: str = "openai"
    # The provider's id in models.dev (``providers.catalog``); empty: look the model up anywhere.
    catalog_id: str = ""
    # Ollama serves OpenAI's API under ``/v1`` beside its own under ``/api``.
    openai_path: str = ""

    @property
    def label(self) -> str:
        return str(ProviderType(self.type).label)


SPECS: dict[str, TypeSpec] = {
    spec.type: spec
    for spec in (
        TypeSpec(
            "anthropic",
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            embeddings=False,
            endpoint_type="anthropic",
            embedding_endpoint_type="anthropic",
            catalog_id="anthropic",
        ),
        TypeSpec("openai", "openai", "openai", "https://api.openai.com/v1", catalog_id="openai"),
        TypeSpec(
            "ollama",
            "openai",
            "ollama",
            needs_key=False,
            needs_base_url=True,
            endpoint_type="ollama",
            embedding_endpoint_type="ollama",
            openai_path="/v1",
        ),
        TypeSpec(
            "vllm",
            "openai",
            "openai",
            needs_key=False,
            needs_base_url=True,
            endpoint_type="vllm",
            embedding_endpoint_type="vllm",
        ),
        TypeSpec("lmstudio_openai", "openai", "openai", needs_key=False, needs_base_url=True, catalog_id="lmstudio"),
        TypeSpec(
            "openrouter",
            "openai",
            "openai",
            "https://openrouter.ai/api/v1",
            embeddings=False,
            endpoint_type="openrouter",
            catalog_id="openrouter",
        ),
        TypeSpec(
            "groq",
            "openai",
            "openai",
            "https://api.groq.com/openai/v1",
            embeddings=False,
            endpoint_type="groq",
            catalog_id="groq",
        ),
        TypeSpec(
            "together",
            "openai",
            "openai",
            "https://api.together.xyz/v1",
            endpoint_type="together",
            embedding_endpoint_type="together",
            catalog_id="togetherai",
        ),
        TypeSpec(
            "deepseek",
            "openai",
            "openai",
            "https://api.deepseek.com/v1",
            embeddings=False,
            endpoint_type="deepseek",
            catalog_id="deepseek",
        ),
        TypeSpec(
            "xai", "openai", "openai", "https://api.x.ai/v1", embeddings=False, endpoint_type="xai", catalog_id="xai"
        ),
        TypeSpec(
            "google_ai",
            "openai",
            "openai",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            endpoint_type="google_ai",
            embedding_endpoint_type="google_ai",
            catalog_id="google",
        ),
        TypeSpec(
            "azure",
            "azure",
            "azure",
            needs_base_url=True,
            endpoint_type="azure",
            embedding_endpoint_type="azure",
            catalog_id="azure",
        ),
    )
}

#: Letta's order of providers in a model list (``constants.PROVIDER_ORDER``, ours): by type, then name.
TYPE_ORDER: tuple[str, ...] = (
    "openai",
    "anthropic",
    "google_ai",
    "azure",
    "groq",
    "together",
    "deepseek",
    "xai",
    "openrouter",
    "ollama",
    "vllm",
    "lmstudio_openai",
)

#: The offline demo model's provider: always there, listed last.
DEMO = "demo"
DEFAULT_AZURE_API_VERSION = "2024-10-21"


def spec_for(provider_type: str) -> TypeSpec:
    return SPECS[provider_type]


def openai_base_url(provider_type: str, base_url: str) -> str:
    """Where the ``openai`` SDK's paths start for a provider at ``base_url`` (Ollama's ``/v1``)."""
    spec = SPECS[provider_type]
    url = (base_url or spec.default_base_url).rstrip("/")
    if spec.openai_path and url and not url.endswith(spec.openai_path):
        url += spec.openai_path
    return url
