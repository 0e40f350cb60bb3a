"""Health, and the JSON answers for ``/v1`` paths that name no route."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from django.http import HttpRequest
    from rest_framework.request import Request

# The Letta release whose surface /v1 serves; Letta Code warns about servers older than 0.16.6.
SERVER_VERSION = "0.16.8"
NOT_FOUND_DETAIL = "Not Found"


class Health(TypedDict):
    version: str
    status: str


class HealthView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = ()

    @extend_schema(operation_id="health_check", auth=[], responses={200: Health})
    def get(self, request: Request) -> Response:
        return Response({"version": SERVER_VERSION, "status": "ok"})


@csrf_exempt
def not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Any method on a ``/v1`` path no route serves: FastAPI's 404, never the site's HTML page."""
    return JsonResponse({"detail": NOT_FOUND_DETAIL}, status=404)
