"""Shared archives over ``/v1/archives``, attaching them to agents, and ``POST /v1/passages/search``.

Letta 0.16.8's routes and shapes: an archive is created, listed, retrieved, modified and deleted
(204); passages are added one at a time or in a batch and deleted (204), and there is no list of
an archive's passages (search without a query lists the newest). Another organization's
archive, agent or passage is a 404 everywhere, attach and detach included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.api.fields import optional, validated
from agents.api.openapi import LIMIT, cursor_parameters, errors
from agents.api.states import agent_state_of
from agents.memory import archival, archives
from agents.wire.archives import Archive, Passage, PassageSearchResult, archive_json, passage_json, search_hit_json
from agents.wire.resources import AgentState

if TYPE_CHECKING:
    from rest_framework.request import Request

    from agents.models import Archive as ArchiveRow
    from agents.models import Passage as PassageRow

ERRORS = errors(400, 404, 422)


class ArchiveCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    embedding = optional(serializers.CharField, max_length=200)
    embedding_config = optional(serializers.DictField)


class ArchiveUpdateInput(serializers.Serializer):
    name = optional(serializers.CharField, max_length=200)
    description = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)


class ArchivePassageInput(serializers.Serializer):
    text = serializers.CharField(trim_whitespace=False)
    metadata = optional(serializers.DictField)
    tags = optional(serializers.ListField, child=serializers.CharField())
    created_at = optional(serializers.DateTimeField)


class ArchivePassageBatchInput(serializers.Serializer):
    passages = serializers.ListField(child=ArchivePassageInput(), max_length=1000)


class PassageSearchInput(serializers.Serializer):
    query = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    agent_id = optional(serializers.CharField)
    archive_id = optional(serializers.CharField)
    tags = optional(serializers.ListField, child=serializers.CharField())
    tag_match_mode = serializers.ChoiceField(choices=["any", "all"], default="any")
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)
    start_date = optional(serializers.DateTimeField)
    end_date = optional(serializers.DateTimeField)


def _valid(serializer: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    return validated(serializer, data)


class ArchiveAPIView(OrgScopedAPIView):
    def archive(self, archive_id: str) -> ArchiveRow:
        return archives.archive_get(organization=self.organization, archive_id=archive_id)


class ArchiveListView(ArchiveAPIView):
    @extend_schema(
        operation_id="archives_list",
        parameters=[
            OpenApiParameter("name", str, description="Only archives of exactly this name."),
            OpenApiParameter("agent_id", str, description="Only archives attached to this agent."),
            *cursor_parameters("archive", limit=50, order="desc"),
        ],
        responses={200: list[Archive], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        agent_id = self.query_str("agent_id")
        rows = archives.archive_list(
            organization=self.organization,
            name=self.query_str("name"),
            agent=self.get_agent(agent_id, with_tools=False) if agent_id else None,
            **self.cursor(limit=50, order="desc"),
        )
        return Response([archive_json(archive) for archive in rows])

    @extend_schema(operation_id="archives_create", request=ArchiveCreateInput, responses={200: Archive, **ERRORS})
    def post(self, request: Request) -> Response:
        data = _valid(ArchiveCreateInput, request.data)
        assert self.organization is not None
        archive = archives.archive_create(organization=self.organization, user=self.acting_user, **data)
        return Response(archive_json(archive))


class ArchiveDetailView(ArchiveAPIView):
    @extend_schema(operation_id="archives_retrieve", responses={200: Archive, **errors(404)})
    def get(self, request: Request, archive_id: str) -> Response:
        return Response(archive_json(self.archive(archive_id)))

    @extend_schema(operation_id="archives_modify", request=ArchiveUpdateInput, responses={200: Archive, **ERRORS})
    def patch(self, request: Request, archive_id: str) -> Response:
        archive = self.archive(archive_id)
        return Response(
            archive_json(archives.archive_update(archive=archive, **_valid(ArchiveUpdateInput, request.data)))
        )

    @extend_schema(operation_id="archives_delete", responses={204: None, **errors(404)})
    def delete(self, request: Request, archive_id: str) -> Response:
        archives.archive_delete(archive=self.archive(archive_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ArchiveAgentsView(ArchiveAPIView):
    @extend_schema(
        operation_id="archives_agents_list",
        parameters=[
            OpenApiParameter("limit", LIMIT, description="At most this many (default 50)."),
            OpenApiParameter("order", str, enum=["asc", "desc"], description="Newest first by default."),
            OpenApiParameter("include", str, many=True, description="Accepted; every agent is answered in full."),
        ],
        responses={200: list[AgentState], **errors(404, 422)},
    )
    def get(self, request: Request, archive_id: str) -> Response:
        agents = archives.archive_agent_list(
            archive=self.archive(archive_id),
            limit=self.query_int("limit", default=50),
            order=self.query_choice("order", ("asc", "desc"), default="desc"),  # type: ignore[arg-type]
        )
        return Response([agent_state_of(agent) for agent in agents])


def _insert(archive: ArchiveRow, data: dict[str, Any]) -> PassageRow:
    return archival.archive_passage_insert(archive=archive, **data)


class ArchivePassagesView(ArchiveAPIView):
    @extend_schema(
        operation_id="archives_passages_create", request=ArchivePassageInput, responses={200: Passage, **ERRORS}
    )
    def post(self, request: Request, archive_id: str) -> Response:
        archive = self.archive(archive_id)
        return Response(passage_json(_insert(archive, _valid(ArchivePassageInput, request.data))))


class ArchivePassagesBatchView(ArchiveAPIView):
    @extend_schema(
        operation_id="archives_passages_create_many",
        request=ArchivePassageBatchInput,
        responses={200: list[Passage], **ERRORS},
    )
    def post(self, request: Request, archive_id: str) -> Response:
        archive = self.archive(archive_id)
        batch = _valid(ArchivePassageBatchInput, request.data)["passages"]
        return Response([passage_json(_insert(archive, dict(item))) for item in batch])


class ArchivePassageDetailView(ArchiveAPIView):
    @extend_schema(operation_id="archives_passages_delete", responses={204: None, **errors(404)})
    def delete(self, request: Request, archive_id: str, passage_id: str) -> Response:
        passage = archives.archive_passage_get(archive=self.archive(archive_id), passage_id=passage_id)
        archival.passage_delete(passage=passage)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AgentArchiveAttachView(ArchiveAPIView):
    attach = True

    @extend_schema(operation_id="agents_archives_attach", request=None, responses={200: None, **errors(404)})
    def patch(self, request: Request, agent_id: str, archive_id: str) -> JsonResponse:
        agent = self.get_agent(agent_id, with_tools=False)
        archive = self.archive(archive_id)
        change = archives.archive_attach if self.attach else archives.archive_detach
        change(agent=agent, archive=archive)
        return JsonResponse(None, safe=False)  # Letta's ``null``


class AgentArchiveDetachView(AgentArchiveAttachView):
    attach = False

    @extend_schema(operation_id="agents_archives_detach", request=None, responses={200: None, **errors(404)})
    def patch(self, request: Request, agent_id: str, archive_id: str) -> JsonResponse:
        return super().patch(request, agent_id, archive_id)


class PassageSearchView(ArchiveAPIView):
    @extend_schema(
        operation_id="passages_search", request=PassageSearchInput, responses={200: list[PassageSearchResult], **ERRORS}
    )
    def post(self, request: Request) -> Response:
        data = _valid(PassageSearchInput, request.data)
        agent_id, archive_id = data.get("agent_id"), data.get("archive_id")
        found = archival.rows_search(
            archives.search_scope(
                organization=self.organization,
                agent=self.get_agent(agent_id, with_tools=False) if agent_id else None,
                archive=self.archive(archive_id) if archive_id and not agent_id else None,
            ),
            organization=self.organization,
            query=data.get("query"),
            tags=data.get("tags") or (),
            tag_match_mode=data["tag_match_mode"],
            limit=data["limit"],
            start=data.get("start_date"),
            end=data.get("end_date"),
        )
        return Response([search_hit_json(passage) for passage in found])
