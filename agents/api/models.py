"""``/v1/models/`` and ``/v1/models/embedding``: the models an organization can use, in Letta's item shapes.

The organization's providers and the server's, as they last listed their models (stale
ones are asked again first, ``providers.services``); real models first, the demo model
last (Letta Code takes the first handle). Both answer bare arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.errors import ValidationFailed
from providers import services as provider_services
from providers.types import ProviderCategory
from providers.wire import EmbeddingModel, Model, embedding_model_json, model_json

if TYPE_CHECKING:
    from rest_framework.request import Request

# Letta 0.16.8's ``ProviderType`` (``letta/schemas/enums.py``), plus SDK 1.12's and our demo model's.
LETTA_PROVIDER_TYPES = (
    "anthropic",
    "azure",
    "baseten",
    "bedrock",
    "cerebras",
    "chatgpt_oauth",
    "deepseek",
    "fireworks",
    "google_ai",
    "google_vertex",
    "groq",
    "hugging-face",
    "letta",
    "lmstudio_openai",
    "minimax",
    "mistral",
    "ollama",
    "openai",
    "together",
    "vllm",
    "sglang",
    "openrouter",
    "xai",
    "zai",
    "zai_coding",
    "moonshot",
    "moonshot_coding",
    "demo",
)


class ModelListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="models_list",
        description="The chat models of the organization's providers and the server's; the demo model last.",
        parameters=[
            OpenApiParameter(
                "provider_category",
                str,
                many=True,
                enum=ProviderCategory.values,
                description="Only models of these categories (base: the server's, byok: the organization's).",
            ),
            OpenApiParameter("provider_name", str, description="Only models of the provider with this name."),
            OpenApiParameter(
                "provider_type", str, enum=list(LETTA_PROVIDER_TYPES), description="Only models of this type."
            ),
        ],
        responses={200: list[Model]},
    )
    def get(self, request: Request) -> Response:
        categories = self.query_list("provider_category")
        wrong = [value for value in categories if value not in ProviderCategory.values]
        if wrong:
            raise ValidationFailed(
                [
                    {
                        "loc": ["query", "provider_category", categories.index(value)],
                        "msg": "Input should be 'base' or 'byok'",
                        "type": "enum",
                    }
                    for value in wrong
                ]
            )
        provider_type = self.query_str("provider_type")
        if provider_type is not None:
            self.query_choice("provider_type", LETTA_PROVIDER_TYPES, default="")
        models = provider_services.model_list_fresh(
            organization=self.organization,
            categories=tuple(categories),
            provider_name=self.query_str("provider_name"),
            provider_type=provider_type,
        )
        return Response([model_json(model) for model in models])


class EmbeddingModelListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="models_list_embedding_models",
        description="The embedding models of the organization's providers and the server's; the demo one last.",
        responses={200: list[EmbeddingModel]},
    )
    def get(self, request: Request) -> Response:
        models = provider_services.embedding_model_list_fresh(organization=self.organization)
        return Response([embedding_model_json(model) for model in models])
