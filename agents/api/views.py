from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from rest_framework.request import Request

SERVER_VERSION = "0.13.0"


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
