"""Model handles (``provider/model``): a leaf module, so projections need not import the services."""

from __future__ import annotations

DEFAULT_EMBEDDING_HANDLE = "openai/text-embedding-3-small"


def split_handle(handle: str) -> tuple[str, str]:
    """``("anthropic", "claude-sonnet-4-5-20250929")`` for ``anthropic/claude-sonnet-4-5-20250929``."""
    provider, _, model = handle.partition("/")
    return provider, model
