"""``POST /v1/agents/import`` and ``GET``/``POST /v1/agents/{id}/export``, with Letta's fields and shapes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from typing_extensions import TypedDict

from agentfiles.exporter import agentfile_export
from agentfiles.importer import ImportOptions, ImportResult, agentfile_import, check_size
from agentfiles.schema import AgentFileError, Document
from agents.api.base import OrgScopedAPIView
from agents.api.fields import validated
from agents.api.openapi import errors
from agents.errors import ValidationFailed

if TYPE_CHECKING:
    from rest_framework.request import Request

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class Unresolved(TypedDict):
    mcp_servers: list[str]
    folders: list[str]


class ExportBody(serializers.Serializer):
    """``POST /v1/agents/{id}/export``'s body: skills to include (the file's ``skills``)."""

    skills = serializers.ListField(child=serializers.DictField(), required=False, allow_null=True)
    conversation_id = serializers.CharField(required=False, allow_null=True)
    scrub_messages = serializers.BooleanField(required=False, default=False)


class ImportedAgents(TypedDict):
    """Letta's ``ImportedAgentsResponse``, plus what the import changed or could not follow."""

    agent_ids: list[str]
    warnings: list[str]
    unresolved: Unresolved


def imported_agents(result: ImportResult) -> ImportedAgents:
    return {
        "agent_ids": [agent.public_id for agent in result.agents],
        "warnings": result.warnings,
        "unresolved": {"mcp_servers": result.unresolved["mcp_servers"], "folders": result.unresolved["folders"]},
    }


def _first(data: Any, *names: str) -> str | None:
    """The first of ``names`` given (Letta's field, then its deprecated aliases)."""
    for name in names:
        value = data.get(name)
        if value not in (None, ""):
            return str(value)
    return None


def _flag(data: Any, name: str, *, default: bool) -> bool:
    value = data.get(name)
    if value in (None, ""):
        return default
    text = str(value).lower()
    if text not in _TRUE | _FALSE:
        raise ValidationFailed(
            [{"loc": ["body", name], "msg": "Input should be a valid boolean", "type": "bool_parsing"}]
        )
    return text in _TRUE


def _secrets(data: Any) -> dict[str, str]:
    raw = _first(data, "secrets", "env_vars_json")
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise AgentFileError("secrets must be a valid JSON string")
    return {str(key): str(item) for key, item in value.items()}


def import_options(data: Any, headers: Any) -> ImportOptions:
    """Letta's form fields, with its precedence between a field and its deprecated aliases."""
    return ImportOptions(
        name=_first(data, "name", "override_name"),
        append_copy_suffix=_flag(data, "append_copy_suffix", default=True),
        override_existing_tools=_flag(data, "override_existing_tools", default=True),
        strip_messages=_flag(data, "strip_messages", default=False),
        secrets=_secrets(data),
        model=_first(data, "model", "override_model_handle"),
        embedding=_first(data, "embedding", "override_embedding_handle") or headers.get("x-override-embedding-model"),
    )


class AgentImportView(OrgScopedAPIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="agents_import_file",
        request={
            "multipart/form-data": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}
        },
        responses={200: ImportedAgents, **errors(400, 422)},
    )
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationFailed([{"loc": ["body", "file"], "msg": "Field required", "type": "missing"}])
        check_size(upload.size or 0)
        result = agentfile_import(
            organization=self.organization,  # type: ignore[arg-type]
            created_by=self.acting_user,
            raw=upload.read(),
            options=import_options(request.data, request.headers),
            file_name=upload.name or "",
        )
        return Response(imported_agents(result))


def _document_response(document: dict[str, Any]) -> HttpResponse:
    """The file as Letta sends it: JSON, indented by two spaces."""
    return HttpResponse(json.dumps(document, indent=2), content_type="application/json")


class AgentExportView(OrgScopedAPIView):
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="agents_export_file",
        parameters=[
            OpenApiParameter("scrub_messages", bool, description="Leave the messages out."),
            OpenApiParameter("use_legacy_format", bool, description="Refused: the legacy format is not written."),
            OpenApiParameter("max_steps", int, description="Accepted and ignored, as Letta."),
            OpenApiParameter("conversation_id", str, description="Accepted; the agent's default conversation."),
        ],
        responses={200: Document, **errors(400, 404)},
    )
    def get(self, request: Request, agent_id: str) -> HttpResponse:
        agent = self.get_agent(agent_id)
        if self.query_bool("use_legacy_format", default=False):
            raise AgentFileError("Legacy format is not supported")
        scrub = bool(self.query_bool("scrub_messages", default=False))
        return _document_response(agentfile_export(agent=agent, scrub_messages=scrub))

    @extend_schema(
        operation_id="agents_export_file_with_skills", request=ExportBody, responses={200: Document, **errors(400, 404)}
    )
    def post(self, request: Request, agent_id: str) -> HttpResponse:
        agent = self.get_agent(agent_id)
        body = validated(ExportBody, request.data if isinstance(request.data, dict) else {})
        document = agentfile_export(agent=agent, scrub_messages=body["scrub_messages"])
        document["skills"] = body.get("skills") or []
        return _document_response(document)
