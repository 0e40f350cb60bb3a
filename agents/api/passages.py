"""Archival memory over ``/v1/agents/{id}/archival-memory``: list, insert, search, delete."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from typing_extensions import TypedDict

from agents.api.base import OrgScopedAPIView
from agents.api.fields import validated
from agents.api.memory_serializers import PassageCreateInput
from agents.api.openapi import LIMIT, errors
from agents.errors import ValidationFailed
from agents.memory import archival, selectors
from agents.wire.archives import Passage, passage_json
from agents.wire.memory import ArchivalSearchResult

if TYPE_CHECKING:
    from rest_framework.request import Request

ERRORS = errors(400, 404, 422)


class ArchivalSearch(TypedDict):
    results: list[ArchivalSearchResult]
    count: int


def _datetime(view: OrgScopedAPIView, name: str) -> datetime | None:
    raw = view.query_str(name)
    if raw is None:
        return None
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationFailed(
            [{"loc": ["query", name], "msg": "Input should be a valid datetime", "type": "datetime_parsing"}]
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class AgentPassageListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_passages_list",
        parameters=[
            OpenApiParameter("search", str, description="Only passages containing this text."),
            OpenApiParameter("after", str, description="Cursor: a passage id; passages after it."),
            OpenApiParameter("before", str, description="Cursor: a passage id; passages before it."),
            OpenApiParameter("limit", LIMIT, description="At most this many passages (default 100)."),
            OpenApiParameter("ascending", bool, description="Oldest first (the default)."),
        ],
        responses={200: list[Passage], **errors(404, 422)},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        passages = selectors.passage_list(
            agent=self.get_agent(agent_id),
            after=self.query_str("after"),
            before=self.query_str("before"),
            limit=self.query_int("limit", default=100),
            ascending=bool(self.query_bool("ascending", default=True)),
            search=self.query_str("search"),
        )
        return Response([passage_json(passage) for passage in passages])

    @extend_schema(
        operation_id="agents_passages_create",
        request=PassageCreateInput,
        responses={200: list[Passage], **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        data = validated(PassageCreateInput, request.data)
        passages = archival.passage_insert(
            agent=agent, text=data["text"], tags=data.get("tags"), created_at=data.get("created_at")
        )
        return Response([passage_json(passage) for passage in passages])


class AgentPassageSearchView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_passages_search",
        parameters=[
            OpenApiParameter("query", str, required=True, description="What to look for (text and meaning)."),
            OpenApiParameter("tags", str, many=True, description="Only passages with these tags."),
            OpenApiParameter("tag_match_mode", str, enum=["any", "all"], description="Any (default) or all tags."),
            OpenApiParameter(
                "top_k", LIMIT, description=f"At most this many results (default {archival.DEFAULT_TOP_K})."
            ),
            OpenApiParameter("start_datetime", str, description="Only passages created at or after this time."),
            OpenApiParameter("end_datetime", str, description="Only passages created at or before this time."),
        ],
        responses={200: ArchivalSearch, **errors(404, 422)},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        query = self.query_str("query")
        if query is None:
            raise ValidationFailed([{"loc": ["query", "query"], "msg": "Field required", "type": "missing"}])
        passages = archival.passage_search(
            agent=agent,
            query=query,
            tags=self.query_list("tags"),
            tag_match_mode=self.query_choice("tag_match_mode", ("any", "all"), default="any"),  # type: ignore[arg-type]
            top_k=self.query_int("top_k", default=archival.DEFAULT_TOP_K),
            start=_datetime(self, "start_datetime"),
            end=_datetime(self, "end_datetime"),
        )
        results = [archival.search_result(passage) for passage in passages]
        return Response({"results": results, "count": len(results)})


class AgentPassageDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_passages_delete", responses={200: Passage, **errors(404)})
    def delete(self, request: Request, agent_id: str, passage_id: str) -> Response:
        passage = selectors.passage_get(agent=self.get_agent(agent_id), passage_id=passage_id)
        answer = passage_json(passage)
        archival.passage_delete(passage=passage)
        return Response(answer)
