"""Embeddings from the same providers as the chat models: ``/embeddings`` through the ``openai`` SDK.

OpenAI and the compatible types (Ollama and vLLM under their OpenAI-compatible paths,
Together, LM Studio, Gemini's OpenAI-compatible endpoint) and Azure OpenAI embed; Anthropic
has no embedding API. A handle resolves as a chat handle does (``agents.llm.registry``:
the organization's provider first, then the server's; the same key and egress rules).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import openai

from agents.llm.sdk import Timeouts
from providers import selectors as provider_selectors
from providers.endpoints import EndpointNotAllowed
from providers.types import openai_base_url

if TYPE_CHECKING:
    from accounts.models import Organization
    from providers.endpoints import Endpoint

logger = logging.getLogger(__name__)

EmbedMany = Callable[[Sequence[str]], list[list[float]]]


class EmbeddingFailed(Exception):
    """The provider did not embed the text; the message is safe to show."""


def embedding_function(handle: str, *, organization: Organization | None) -> EmbedMany | None:
    """A function embedding texts, in one call, with ``handle``'s model; ``None`` when no provider of ours embeds it."""
    name, _, model = (handle or "").partition("/")
    if not name or not model:
        return None
    endpoint = provider_selectors.endpoint_for(organization=organization, name=name)
    if endpoint is None or not endpoint.spec.embeddings or not endpoint.api_key:
        return None
    return lambda texts: embed_many(endpoint, model, texts)


def embed_many(endpoint: Endpoint, model: str, texts: Sequence[str]) -> list[list[float]]:
    """``texts`` embedded by ``model`` at ``endpoint`` in one request, in their order; ``EmbeddingFailed``
    when the provider does not answer, or answers with another number of vectors than it was sent texts."""
    if not texts:
        return []
    try:
        endpoint.check_egress()
    except EndpointNotAllowed as exc:
        raise EmbeddingFailed(str(exc)) from exc
    bounds = Timeouts.from_settings()
    # A blocking call has no deadline of its own: its answer is one small body, so the read
    # timeout, capped by the total, bounds it.
    timeout = openai.Timeout(bounds.total, connect=bounds.connect, read=min(bounds.first_byte, bounds.total))
    http_client = openai.DefaultHttpxClient(follow_redirects=False)  # a redirect could leave a checked URL
    client: openai.OpenAI
    if endpoint.spec.protocol == "azure":
        client = openai.AzureOpenAI(
            azure_endpoint=endpoint.url,
            api_version=endpoint.api_version,
            api_key=endpoint.api_key,
            max_retries=0,
            timeout=timeout,
            http_client=http_client,
        )
    else:
        client = openai.OpenAI(
            base_url=openai_base_url(endpoint.provider_type, endpoint.base_url),
            api_key=endpoint.api_key,
            max_retries=0,
            timeout=timeout,
            http_client=http_client,
        )
    try:
        with client:
            answer = client.embeddings.create(model=model, input=list(texts))
    except openai.OpenAIError as exc:
        logger.warning("Embedding with %s/%s failed: %s", endpoint.name, model, exc)
        raise EmbeddingFailed(f"The provider {endpoint.name} did not embed the text.") from exc
    # Vectors come back with the index of their input; a provider may list them in any order.
    items = sorted(answer.data, key=lambda item: item.index)
    vectors = [[float(value) for value in item.embedding] for item in items]
    if len(vectors) != len(texts) or not all(vectors):
        raise EmbeddingFailed(f"The provider {endpoint.name} sent {len(vectors)} embeddings for {len(texts)} texts.")
    return vectors
