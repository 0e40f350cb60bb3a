"""``/v1/providers``: an organization's own providers (Letta's BYOK), as Letta Code's ``/connect`` drives them.

List (the organization's only, never the server's), create (its models listed at once),
retrieve, modify, delete, check credentials (given, or stored), refresh its models. The key
is never in an answer. Another organization's provider is a 404, before any call to it.
The rules live in ``providers.services``; these views parse, call and render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.api.fields import validated
from agents.api.openapi import cursor_parameters, errors
from providers import selectors as provider_selectors
from providers import services as provider_services
from providers.services import ProviderCheckFailed
from providers.types import ProviderType
from providers.wire import CheckRefused, Provider, ProviderMessage, check_refused, provider_json

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.request import Request

    from providers.models import Provider as ProviderRow

ERRORS = errors(400, 404, 409, 422)


def _text(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(required=False, allow_null=True, allow_blank=True, **kwargs)


CREDENTIALS = ("api_key", "base_url", "api_version", "region")


def _sent(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """The fields of ``data`` among ``names`` that the client sent, null or not (the service reads a null)."""
    return {name: data[name] for name in names if name in data}


class RequiredKey(serializers.CharField):
    """Letta's ``api_key``: required in the body (FastAPI's 422 ``missing``), though ``""`` or null may be given
    (a local server without a key; on a change, the stored key stays)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, allow_blank=True, max_length=4000, **kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is empty:
            raise serializers.ValidationError("Field required", code="missing")
        return super().validate_empty_values(data)


class ProviderCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    provider_type = serializers.ChoiceField(choices=ProviderType.choices)
    api_key = RequiredKey(help_text='Required; "" for local servers that need none (Ollama, vLLM, LM Studio).')
    access_key = _text(max_length=4000, help_text="Ignored (Bedrock only).")
    region = _text(max_length=60)
    base_url = _text(max_length=500)
    api_version = _text(max_length=40, help_text="Azure OpenAI only.")


class ProviderUpdateInput(serializers.Serializer):
    api_key = RequiredKey(help_text='Required; "" keeps the stored key (unless base_url changes).')
    access_key = _text(max_length=4000)
    region = _text(max_length=60)
    base_url = _text(max_length=500)
    api_version = _text(max_length=40)


class ProviderCheckInput(serializers.Serializer):
    provider_type = serializers.ChoiceField(choices=ProviderType.choices)
    api_key = RequiredKey(help_text='Required; "" for local servers that need none.')
    access_key = _text(max_length=4000)
    region = _text(max_length=60)
    base_url = _text(max_length=500)
    api_version = _text(max_length=40)


def _body(request: Request, serializer: type[serializers.Serializer]) -> dict[str, Any]:
    """The validated body, Letta's way: an empty string is no value."""
    return {key: value for key, value in validated(serializer, request.data).items() if value not in (None, "")}


def _checked(provider_type: str, check: Callable[[], None]) -> Response:
    """Letta's answers to a check: 200 with a message, 401 ``{"error": …}`` for a refused key, else 400."""
    try:
        check()
    except ProviderCheckFailed as exc:
        if exc.kind == "auth":
            return Response(check_refused(exc.reason), status=401)
        return Response({"detail": exc.reason}, status=400)
    return Response({"message": f"Valid api key for provider_type={provider_type}"})


class ProviderListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="providers_list",
        description="The organization's own providers (the server's are never listed here).",
        parameters=[
            OpenApiParameter("name", str, description="Only the provider with this name."),
            OpenApiParameter(
                "provider_type", str, enum=ProviderType.values, description="Only providers of this type."
            ),
            *cursor_parameters("provider", limit=50, order="desc"),
        ],
        responses={200: list[Provider], **errors(404)},
    )
    def get(self, request: Request) -> Response:
        providers = provider_selectors.provider_list(
            organization=self.organization,
            name=self.query_str("name"),
            provider_type=self.query_str("provider_type"),
            **self.cursor(limit=50, order="desc"),
        )
        return Response([provider_json(provider) for provider in providers])

    @extend_schema(
        operation_id="providers_create",
        description="Add a provider of the organization; its models are listed at once.",
        request=ProviderCreateInput,
        responses={200: Provider, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        data = _body(request, ProviderCreateInput)
        provider = provider_services.provider_create(
            organization=self.organization,  # type: ignore[arg-type]  # never None: HasOrganization
            name=data["name"],
            provider_type=data["provider_type"],
            **_sent(data, *CREDENTIALS),
        )
        return Response(provider_json(provider))


class ProviderCheckView(OrgScopedAPIView):
    @extend_schema(
        operation_id="providers_check",
        description="Whether these credentials list models (nothing is saved).",
        request=ProviderCheckInput,
        responses={200: ProviderMessage, 401: CheckRefused, **errors(400, 422)},
    )
    def post(self, request: Request) -> Response:
        data = _body(request, ProviderCheckInput)
        return _checked(
            data["provider_type"],
            lambda: provider_services.provider_check(
                provider_type=data["provider_type"],
                **_sent(data, "api_key", "base_url", "api_version"),
            ),
        )


class ProviderDetailView(OrgScopedAPIView):
    def _provider(self, provider_id: str) -> ProviderRow:
        return provider_selectors.provider_get(organization=self.organization, provider_id=provider_id)

    @extend_schema(operation_id="providers_retrieve", responses={200: Provider, **errors(404)})
    def get(self, request: Request, provider_id: str) -> Response:
        return Response(provider_json(self._provider(provider_id)))

    @extend_schema(
        operation_id="providers_modify",
        description="Change its key, base URL, region or API version; its models are listed again.",
        request=ProviderUpdateInput,
        responses={200: Provider, **ERRORS},
    )
    def patch(self, request: Request, provider_id: str) -> Response:
        provider = self._provider(provider_id)
        data = _body(request, ProviderUpdateInput)
        provider = provider_services.provider_update(
            provider=provider,
            **_sent(data, *CREDENTIALS),
        )
        return Response(provider_json(provider))

    @extend_schema(operation_id="providers_delete", responses={200: ProviderMessage, **errors(404)})
    def delete(self, request: Request, provider_id: str) -> Response:
        provider = self._provider(provider_id)
        public_id = provider.public_id
        provider_services.provider_delete(provider=provider)
        return Response({"message": f"Provider id={public_id} successfully deleted"})


class ProviderStoredCheckView(OrgScopedAPIView):
    @extend_schema(
        operation_id="providers_check_existing",
        description="Whether the provider's stored credentials list models.",
        request=None,
        responses={200: ProviderMessage, 401: CheckRefused, **errors(400, 404)},
    )
    def post(self, request: Request, provider_id: str) -> Response:
        provider = provider_selectors.provider_get(organization=self.organization, provider_id=provider_id)
        return _checked(provider.provider_type, lambda: provider_services.provider_check_stored(provider=provider))


class ProviderRefreshView(OrgScopedAPIView):
    @extend_schema(
        operation_id="providers_refresh",
        description=(
            "List the provider's models again (new ones added, gone ones removed). A provider that does not "
            "answer keeps its models, marked unavailable, and says why in status_reason."
        ),
        request=None,
        responses={200: Provider, **errors(404)},
    )
    def patch(self, request: Request, provider_id: str) -> Response:
        provider = provider_selectors.provider_get(organization=self.organization, provider_id=provider_id)
        return Response(provider_json(provider_services.provider_refresh(provider=provider)))
