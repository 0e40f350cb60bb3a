"""``/v1/models/`` and ``/v1/models/embedding``: the models an organization can use, in Letta's item shapes.

The organization's providers and the server's, as they last listed their models (stale
ones are asked again first, ``providers.services``); real models first, the demo model
last (Letta Code takes the first handle). Both answer bare arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.errors import ValidationFailed
from providers import services as provider_services
from providers.types import ProviderCategory
from providers.wire import embedding_model_json, model_json

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


class ModelOutput(serializers.Serializer):
    """Letta's ``Model`` (documentation only): every ``LLMConfig`` field plus the new names."""

    handle = serializers.CharField()
    name = serializers.CharField()
    display_name = serializers.CharField()
    provider_type = serializers.CharField()
    provider_name = serializers.CharField()
    provider_category = serializers.ChoiceField(choices=ProviderCategory.values)
    model_type = serializers.CharField()
    model = serializers.CharField()
    model_endpoint_type = serializers.CharField()
    model_endpoint = serializers.CharField(allow_null=True)
    context_window = serializers.IntegerField()
    max_context_window = serializers.IntegerField()
    max_tokens = serializers.IntegerField(allow_null=True)
    temperature = serializers.FloatField()
    enable_reasoner = serializers.BooleanField()
    parallel_tool_calls = serializers.BooleanField()
    available = serializers.BooleanField(help_text="Whether its provider answered the last time it was asked.")
    unavailable_reason = serializers.CharField(allow_null=True, help_text="Why its provider did not answer.")
    limits_source = serializers.CharField(help_text="provider, models.dev or default.")


class EmbeddingModelOutput(serializers.Serializer):
    """Letta's ``EmbeddingModel`` (documentation only)."""

    handle = serializers.CharField()
    name = serializers.CharField()
    display_name = serializers.CharField()
    provider_type = serializers.CharField()
    provider_name = serializers.CharField()
    model_type = serializers.CharField()
    embedding_dim = serializers.IntegerField()
    embedding_model = serializers.CharField()
    embedding_endpoint_type = serializers.CharField()
    embedding_endpoint = serializers.CharField(allow_null=True)
    embedding_chunk_size = serializers.IntegerField()
    batch_size = serializers.IntegerField()


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
        responses={200: ModelOutput(many=True)},
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
        responses={200: EmbeddingModelOutput(many=True)},
    )
    def get(self, request: Request) -> Response:
        models = provider_services.embedding_model_list_fresh(organization=self.organization)
        return Response([embedding_model_json(model) for model in models])
