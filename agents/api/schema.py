"""The OpenAPI 3 document (``/v1/openapi.json``) and its docs page (``/v1/docs/``); both public.

The docs page is Swagger UI served from ``drf-spectacular-sidecar``: no CDN. The
document is built once per process (it takes about a second and only changes with the
code) and served from memory after that; ``?lang=`` and ``?version=`` are ignored so no
caller can make the server build, or keep, more than one.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

if TYPE_CHECKING:
    from rest_framework.request import Request

_schema_lock = threading.Lock()
_schema: dict[str, Any] = {}


def clear_schema_cache() -> None:
    """Forget the built document (tests that change the URLconf or settings)."""
    with _schema_lock:
        _schema.clear()


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

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with _schema_lock:
            if "document" not in _schema:
                generator = self.generator_class(urlconf=self.urlconf, api_version=self.api_version)
                # drf-spectacular is untyped.
                _schema["document"] = generator.get_schema(request=request, public=self.serve_public)  # type: ignore[no-untyped-call]
            document = _schema["document"]
        return Response(data=document, headers={"Content-Disposition": 'inline; filename="openapi.json"'})


class DocsView(SpectacularSwaggerView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = ()
    url_name = "api:schema"
