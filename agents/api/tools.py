"""``/v1/tools``: create, upsert (what ``upsert_from_function`` sends), list, retrieve, modify, delete, base tools.

The tool logic (schema from source, name conflicts, built-in tools) lives in
``tools.services``; these views only parse, call and render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from agents.api import serializers as s
from agents.api.base import OrgScopedAPIView, QueryFilter, filter_parameters
from agents.api.fields import validated
from agents.api.openapi import cursor_parameters, errors
from agents.errors import Conflict, InvalidArgument
from agents.wire.tools import Tool, ToolSearchResult, tool_json, tool_search_result
from tools import selectors as tool_selectors
from tools import services as tool_services
from tools.models import ToolKind
from tools.schema import ToolSourceError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.request import Request

    from tools.models import Tool as ToolRow

ERRORS = errors(400, 404, 409, 422)
_SOURCE_FIELDS = ("description", "tags", "return_char_limit", "default_requires_approval", "args_json_schema")


def _calling_tool_services(action: Callable[[], Any]) -> Any:
    """Run a ``tools.services`` call, turning its domain errors into ours."""
    try:
        return action()
    except tool_services.ToolNameTaken as exc:
        raise Conflict(str(exc)) from exc
    except ToolSourceError as exc:
        raise InvalidArgument(str(exc), field="source_code") from exc
    except tool_services.ToolValidationError as exc:
        raise InvalidArgument(str(exc)) from exc


def _tool_body(request: Request, serializer: type[s.ToolCreateInput] | type[s.ToolUpdateInput]) -> dict[str, Any]:
    return validated(serializer, request.data)


FILTERS = (
    QueryFilter("name", "text", "Only the tool with this name."),
    QueryFilter("names", "list", "Only tools with these names."),
    QueryFilter("tool_ids", "list", "Only tools with these ids."),
    QueryFilter("search", "text", "Only tools whose name contains this text."),
    QueryFilter("tool_types", "list", "Only tools of these types."),
    QueryFilter("exclude_tool_types", "list", "No tools of these types."),
    QueryFilter("return_only_letta_tools", "flag", "Only built-in (letta_*) tools."),
)


class ToolListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="tools_list",
        parameters=[
            *filter_parameters(FILTERS),
            *cursor_parameters("tool", limit=50, order="desc"),
        ],
        responses={200: list[Tool], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        tools = tool_selectors.tool_list(
            organization=self.organization,
            filters=tool_selectors.ToolFilters(**self.query_filters(FILTERS)),
            **self.cursor(limit=50, order="desc"),
        )
        return Response([tool_json(tool) for tool in tools])

    @extend_schema(operation_id="tools_create", request=s.ToolCreateInput, responses={200: Tool, **ERRORS})
    def post(self, request: Request) -> Response:
        return self._from_source(tool_services.tool_create, *_SOURCE_FIELDS, "json_schema", "source_type")

    @extend_schema(
        operation_id="tools_upsert",
        description="Create or update the tool defined by `source_code` (its name comes from the function).",
        request=s.ToolCreateInput,
        responses={200: Tool, **ERRORS},
    )
    def put(self, request: Request) -> Response:
        return self._from_source(tool_services.tool_upsert_from_source, *_SOURCE_FIELDS)

    def _from_source(self, service: Callable[..., ToolRow], *fields: str) -> Response:
        """The tool ``service`` makes of the body's ``source_code`` and those of ``fields`` it sends."""
        data = _tool_body(self.request, s.ToolCreateInput)
        tool: ToolRow = _calling_tool_services(
            lambda: service(
                organization=self.organization,
                created_by=self.acting_user,
                source_code=data["source_code"],
                **s.present(data, *fields),
            )
        )
        return Response(tool_json(tool))


class ToolDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="tools_retrieve", responses={200: Tool, **errors(404)})
    def get(self, request: Request, tool_id: str) -> Response:
        return Response(tool_json(self.get_tool(tool_id)))

    @extend_schema(operation_id="tools_modify", request=s.ToolUpdateInput, responses={200: Tool, **ERRORS})
    def patch(self, request: Request, tool_id: str) -> Response:
        tool = self.get_tool(tool_id)
        data = _tool_body(request, s.ToolUpdateInput)
        fields = s.present(data, "description", "tags", "source_code", "source_type", "json_schema")
        fields |= s.present(data, "args_json_schema", "return_char_limit", "default_requires_approval")
        if data.get("metadata_") is not None:
            fields["metadata"] = data["metadata_"]
        if tool.kind == ToolKind.BUILTIN:
            # The service takes only these for a built-in (anything else is a programming error there).
            refused = sorted(set(fields) - tool_services.BUILTIN_EDITABLE_FIELDS)
            if refused:
                raise InvalidArgument(
                    f"Built-in tool {tool.name} cannot change: {', '.join(refused)}.", field=refused[0]
                )
        tool = _calling_tool_services(lambda: tool_services.tool_update(tool=tool, **fields))
        return Response(tool_json(tool))

    @extend_schema(operation_id="tools_delete", responses={200: None, **errors(404)})
    def delete(self, request: Request, tool_id: str) -> JsonResponse:
        tool_services.tool_delete(tool=self.get_tool(tool_id))
        # Letta answers a JSON ``null`` body; DRF's renderer would send an empty one.
        return JsonResponse(None, safe=False)


class BaseToolsView(OrgScopedAPIView):
    @extend_schema(operation_id="tools_upsert_base_tools", request=None, responses={200: list[Tool]})
    def post(self, request: Request) -> Response:
        tools = tool_services.base_tools_upsert(organization=self.organization)  # type: ignore[arg-type]  # never None: HasOrganization
        return Response([tool_json(tool) for tool in tools])


class ToolCountView(OrgScopedAPIView):
    @extend_schema(
        operation_id="tools_count",
        parameters=[
            *filter_parameters(FILTERS),
            OpenApiParameter("exclude_letta_tools", bool, description="No built-in (letta_*) tools."),
        ],
        responses={200: int, **errors(422)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            tool_selectors.tool_count(
                organization=self.organization,
                filters=tool_selectors.ToolFilters(**self.query_filters(FILTERS)),
                exclude_letta_tools=bool(self.query_bool("exclude_letta_tools", default=False)),
            )
        )


class ToolSearchInput(serializers.Serializer):
    query = serializers.CharField(required=False, allow_null=True, allow_blank=True, help_text="Text to look for.")
    search_mode = serializers.ChoiceField(
        choices=["vector", "fts", "hybrid"], default="hybrid", help_text="Only fts and hybrid (text) here."
    )
    tool_types = serializers.ListField(
        child=serializers.CharField(), required=False, allow_null=True, help_text="Only tools of these types."
    )
    tags = serializers.ListField(
        child=serializers.CharField(), required=False, allow_null=True, help_text="Tools with any of these tags."
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)


class ToolSearchView(OrgScopedAPIView):
    @extend_schema(
        operation_id="tools_search",
        description=(
            "Tools whose name, tags or description hold the query's words, best first. Tools are not "
            "embedded here, so `search_mode` `vector` is a 400 and `hybrid` is the text ranking alone."
        ),
        request=ToolSearchInput,
        responses={200: list[ToolSearchResult], **errors(400, 422)},
    )
    def post(self, request: Request) -> Response:
        data = validated(ToolSearchInput, request.data)
        if data["search_mode"] == "vector":
            raise InvalidArgument(
                'Tool vector search needs tool embeddings, which this server does not keep; use search_mode "fts" '
                'or "hybrid".',
                field="search_mode",
            )
        matches = tool_selectors.tool_search(
            organization=self.organization,
            query=data.get("query"),
            tool_types=data.get("tool_types") or (),
            tags=data.get("tags") or (),
            limit=data["limit"],
        )
        return Response(
            [tool_search_result(match.tool, fts_rank=match.fts_rank, score=match.combined_score) for match in matches]
        )
