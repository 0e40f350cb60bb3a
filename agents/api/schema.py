"""The OpenAPI 3 document (``/v1/openapi.json``) and its docs page (``/v1/docs/``); both public.

The docs page is Swagger UI served from ``drf-spectacular-sidecar``: no CDN.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """Documents ``Authorization: Bearer <api key>`` (registered by being defined)."""

    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer", "description": "An API key of your organization."}


class SchemaView(SpectacularJSONAPIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = ()


class DocsView(SpectacularSwaggerView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = ()
    url_name = "api:schema"
