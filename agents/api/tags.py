"""``GET /v1/tags/``: the tags of the organization's agents and blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from agents import selectors
from agents.api.base import OrgScopedAPIView
from agents.api.openapi import errors

if TYPE_CHECKING:
    from rest_framework.request import Request


class TagListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="tags_list",
        parameters=[
            OpenApiParameter("name", str, description="Only tags containing this text (any case)."),
            OpenApiParameter("query_text", str, description="Deprecated alias of name."),
            OpenApiParameter("after", str, description="Only tags after this one in the order."),
            OpenApiParameter("before", str, description="Only tags before this one in the order."),
            OpenApiParameter("limit", int, description="At most this many (default 50)."),
            OpenApiParameter("order", str, enum=["asc", "desc"], description="Alphabetical (asc, default) or not."),
        ],
        responses={200: list[str], **errors(422)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            selectors.tag_list(
                organization=self.organization,
                name=self.query_str("name") or self.query_str("query_text"),
                after=self.query_str("after"),
                before=self.query_str("before"),
                limit=self.query_int("limit", default=50),
                order=self.query_choice("order", ("asc", "desc"), default="asc"),  # type: ignore[arg-type]
            )
        )
