"""Model listings and embeddings as each vendor sends them, and the ways a listing can go wrong.

- OpenAI (and compatible servers): ``GET /v1/models`` → ``{"object": "list", "data": [...]}``;
- Anthropic: ``GET /v1/models`` with ``x-api-key`` → ``{"data": [...], "has_more", "first_id", "last_id"}``;
- Ollama: ``GET /api/tags`` → ``{"models": [...]}`` and ``POST /api/show`` → ``model_info`` and ``capabilities``;
- ``POST /v1/embeddings``: OpenAI's answer, with a deterministic vector per text.

A listing fault (``ListingFault``) is set per protocol: ``timeout`` (answers after
``stall`` seconds), ``401``, ``garbage`` (not JSON) or ``malformed`` (JSON without a list).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

ListingProtocol = Literal["openai", "anthropic", "ollama"]
ListingFaultKind = Literal["timeout", "401", "garbage", "malformed"]

EMBEDDING_DIMENSIONS = 16
_WORD = re.compile(r"\w+")

OPENAI_MODELS: list[dict[str, Any]] = [
    {"id": "gpt-4.1-mini", "object": "model", "created": 1744316542, "owned_by": "system"},
    {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
    {"id": "text-embedding-3-small", "object": "model", "created": 1705948997, "owned_by": "system"},
]
ANTHROPIC_MODELS: list[dict[str, Any]] = [
    {
        "type": "model",
        "id": "claude-sonnet-4-6",
        "display_name": "Claude Sonnet 4.6",
        "created_at": "2026-02-17T00:00:00Z",
        "max_input_tokens": 1_000_000,
        "max_tokens": 64_000,
    },
    {
        "type": "model",
        "id": "claude-haiku-4-5-20251001",
        "display_name": "Claude Haiku 4.5",
        "created_at": "2025-10-15T00:00:00Z",
    },
]
OLLAMA_MODELS: list[dict[str, Any]] = [
    {
        "name": "llama3.2:latest",
        "model": "llama3.2:latest",
        "modified_at": "2026-01-01T00:00:00Z",
        "size": 2019393189,
        "digest": "a80c4f17acd5",
        "details": {"format": "gguf", "family": "llama", "families": ["llama"], "parameter_size": "3.2B"},
        "show": {
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
            "capabilities": ["completion", "tools"],
        },
    },
    {
        "name": "nomic-embed-text:latest",
        "model": "nomic-embed-text:latest",
        "modified_at": "2026-01-01T00:00:00Z",
        "size": 274302450,
        "digest": "0a109f422b47",
        "details": {"format": "gguf", "family": "nomic-bert", "families": ["nomic-bert"]},
        "show": {
            "model_info": {
                "general.architecture": "nomic-bert",
                "nomic-bert.context_length": 2048,
                "nomic-bert.embedding_length": 768,
            },
            "capabilities": ["embedding"],
        },
    },
]


@dataclass(frozen=True)
class ListingFault:
    kind: ListingFaultKind
    stall: float = 3.0


def openai_listing(models: list[dict[str, Any]]) -> dict[str, Any]:
    return {"object": "list", "data": models}


def anthropic_listing(models: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "data": models,
        "has_more": False,
        "first_id": models[0]["id"] if models else None,
        "last_id": models[-1]["id"] if models else None,
    }


def ollama_tags(models: list[dict[str, Any]]) -> dict[str, Any]:
    return {"models": [{key: value for key, value in model.items() if key != "show"} for model in models]}


def ollama_show(models: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for model in models:
        if name in (model["name"], model["name"].split(":", 1)[0]):
            return {"modelfile": "", "parameters": "", "template": "", "details": model["details"], **model["show"]}
    return None


def fake_embedding(text: str) -> list[float]:
    """A deterministic unit vector: words hashed into ``EMBEDDING_DIMENSIONS`` signed buckets."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in _WORD.findall(text.casefold()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % EMBEDDING_DIMENSIONS] += 1.0 if digest[1] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


def embeddings_answer(body: dict[str, Any]) -> dict[str, Any]:
    texts = body.get("input")
    items = [texts] if isinstance(texts, str) else list(texts or [])
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": fake_embedding(str(text))}
            for index, text in enumerate(items)
        ],
        "model": body.get("model"),
        "usage": {"prompt_tokens": len(items), "total_tokens": len(items)},
    }
