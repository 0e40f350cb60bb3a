"""Folders and files over ``/v1``, with Letta's paths and shapes (LETTA_PLATFORM §3); ``/v1/sources`` is the
0.1.x twin (each ``Source…`` view is its ``Folder…`` view answering the ``Source`` shape).

The rows, rules and processing live in the ``folders`` app; these views stay thin: lookups through
``folders.selectors`` (another organization's id is a 404), writes through ``folders.services``
and ``folders.attachments``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from django.http import JsonResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.api.fields import optional, validated
from agents.api.openapi import errors
from agents.api.states import agent_state_response
from agents.wire.resources import AgentState
from core.errors import InvalidArgument
from folders import attachments, selectors, services
from folders.wire import (
    AgentFilesPage,
    FileClosed,
    FileJSON,
    FilePassage,
    FolderJSON,
    FoldersMetadata,
    SourceJSON,
    agent_file_json,
    file_json,
    file_passage_json,
    folder_json,
    source_json,
)

if TYPE_CHECKING:
    from rest_framework.request import Request

    from folders.models import Folder

ERRORS = errors(400, 404, 409, 422)


class FolderCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = optional(serializers.CharField, allow_blank=True)
    instructions = optional(serializers.CharField, allow_blank=True)
    metadata = optional(serializers.DictField)
    embedding = optional(serializers.CharField, max_length=200)
    embedding_chunk_size = optional(serializers.IntegerField, min_value=16, max_value=8192)
    embedding_config = optional(serializers.DictField)


class FolderUpdateInput(serializers.Serializer):
    name = optional(serializers.CharField, max_length=200)
    description = optional(serializers.CharField, allow_blank=True)
    instructions = optional(serializers.CharField, allow_blank=True)
    metadata = optional(serializers.DictField)
    embedding_config = optional(serializers.DictField)


def is_1x_client(request: Request) -> bool:
    """letta-client 1.x sends ``X-Stainless-Package-Version``; 0.1.x does not (LETTA_PLATFORM §0)."""
    return "x-stainless-package-version" in request.headers


class FolderAPIView(OrgScopedAPIView):
    sources: ClassVar[bool] = False
    """A ``/v1/sources`` twin: answers Letta's ``Source`` shape."""

    def shape(self, folder: Folder) -> FolderJSON | SourceJSON:
        return source_json(folder) if self.sources else folder_json(folder)

    def folder(self, folder_id: str) -> Folder:
        return selectors.folder_get(organization=self.organization, folder_id=folder_id)

    def body(self, serializer: type[serializers.Serializer]) -> dict[str, Any]:
        return {key: value for key, value in validated(serializer, self.request.data).items() if value is not None}


class FolderListView(FolderAPIView):
    @extend_schema(operation_id="folders_list", responses={200: list[FolderJSON], **errors(404, 422)})
    def get(self, request: Request) -> Response:
        folders = selectors.folder_list(
            organization=self.organization, name=self.query_str("name"), **self.cursor(limit=50, order="asc")
        )
        return Response([self.shape(folder) for folder in folders])

    @extend_schema(operation_id="folders_create", request=FolderCreateInput, responses={200: FolderJSON, **ERRORS})
    def post(self, request: Request) -> Response:
        fields = self.body(FolderCreateInput)
        config = fields.pop("embedding_config", None) or {}
        if not fields.get("embedding") and config.get("handle"):
            fields["embedding"] = config["handle"]
        if not fields.get("embedding_chunk_size") and config.get("embedding_chunk_size"):
            fields["embedding_chunk_size"] = int(config["embedding_chunk_size"])
        folder = services.folder_create(
            organization=self.organization,  # type: ignore[arg-type]  # never None: HasOrganization
            user=self.acting_user,
            **fields,
        )
        return Response(self.shape(folder))


class FolderCountView(FolderAPIView):
    @extend_schema(operation_id="folders_count", responses={200: int})
    def get(self, request: Request) -> Response:
        return Response(selectors.folder_count(organization=self.organization))


class FolderByNameView(FolderAPIView):
    @extend_schema(operation_id="folders_retrieve_by_name", responses={200: str, **errors(404)})
    def get(self, request: Request, folder_name: str) -> Response:
        return Response(selectors.folder_by_name(organization=self.organization, name=folder_name).public_id)


class FolderMetadataView(FolderAPIView):
    @extend_schema(operation_id="folders_metadata", responses={200: FoldersMetadata})
    def get(self, request: Request) -> Response:
        detailed = bool(self.query_bool("include_detailed_per_source_metadata", default=False))
        return Response(selectors.folders_metadata(organization=self.organization, detailed=detailed))


class FolderDetailView(FolderAPIView):
    @extend_schema(operation_id="folders_retrieve", responses={200: FolderJSON, **errors(404)})
    def get(self, request: Request, folder_id: str) -> Response:
        return Response(self.shape(self.folder(folder_id)))

    @extend_schema(operation_id="folders_modify", request=FolderUpdateInput, responses={200: FolderJSON, **ERRORS})
    def patch(self, request: Request, folder_id: str) -> Response:
        folder = self.folder(folder_id)
        return Response(self.shape(services.folder_update(folder=folder, **self.body(FolderUpdateInput))))

    @extend_schema(operation_id="folders_delete", responses={200: None, **errors(404)})
    def delete(self, request: Request, folder_id: str) -> JsonResponse:
        services.folder_delete(folder=self.folder(folder_id))
        return JsonResponse(None, safe=False)  # Letta's ``null``


class FolderAgentsView(FolderAPIView):
    @extend_schema(operation_id="folders_agents_list", responses={200: list[str], **errors(404)})
    def get(self, request: Request, folder_id: str) -> Response:
        return Response(selectors.folder_agent_ids(self.folder(folder_id)))


class FolderPassagesView(FolderAPIView):
    @extend_schema(operation_id="folders_passages_list", responses={200: list[FilePassage], **errors(404)})
    def get(self, request: Request, folder_id: str) -> Response:
        folder = self.folder(folder_id)
        limit = self.query_int("limit", default=100)
        return Response([file_passage_json(chunk) for chunk in selectors.folder_chunks(folder=folder, limit=limit)])


class FolderUploadView(FolderAPIView):
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    @extend_schema(
        operation_id="folders_upload_file", request=None, responses={200: FileJSON, **ERRORS, **errors(413, 415)}
    )
    def post(self, request: Request, folder_id: str) -> Response:
        folder = self.folder(folder_id)
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidArgument("A multipart field 'file' is required", field="file")
        result = services.file_upload(
            folder=folder,
            upload=upload,
            name=self.query_str("name"),
            duplicate_handling=self.query_choice("duplicate_handling", services.DUPLICATE_MODES, default="suffix"),
        )
        headers = {"X-Upload-Result": "skipped"} if result.skipped else None
        return Response(file_json(result.file, full_name=True), headers=headers)


class FolderFileListView(FolderAPIView):
    @extend_schema(operation_id="folders_files_list", responses={200: list[FileJSON], **errors(404, 422)})
    def get(self, request: Request, folder_id: str) -> Response:
        folder = self.folder(folder_id)
        content = bool(self.query_bool("include_content", default=False))
        files = selectors.file_list(folder=folder, **self.cursor(limit=1000, order="desc"))
        return Response([file_json(file, include_content=content) for file in files])


class FolderFileDetailView(FolderAPIView):
    @extend_schema(operation_id="folders_files_retrieve", responses={200: FileJSON, **errors(404)})
    def get(self, request: Request, folder_id: str, file_id: str) -> Response:
        file = selectors.file_get(folder=self.folder(folder_id), file_id=file_id)
        return Response(file_json(file, include_content=bool(self.query_bool("include_content", default=False))))


class FolderFileDeleteView(FolderAPIView):
    @extend_schema(operation_id="folders_files_delete", responses={204: None, **errors(404)})
    def delete(self, request: Request, folder_id: str, file_id: str) -> Response:
        services.file_delete(file=selectors.file_get(folder=self.folder(folder_id), file_id=file_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- an agent's folders and files ----------------------------------------------------------


class AgentFolderListView(FolderAPIView):
    sources = True

    @extend_schema(operation_id="agents_folders_list", responses={200: list[SourceJSON], **errors(404)})
    def get(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id, with_tools=False)
        folders = selectors.agent_folder_list(agent=agent, **self.cursor(limit=100, order="desc"))
        return Response([self.shape(folder) for folder in folders])


class AgentFolderAttachView(FolderAPIView):
    always_state: ClassVar[bool] = False
    """The deprecated ``sources/attach`` answers the agent's state to every client."""
    attach: ClassVar[bool] = True

    @extend_schema(operation_id="agents_folders_attach", request=None, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str, folder_id: str) -> Response | JsonResponse:
        return self.change(agent_id, folder_id)

    def change(self, agent_id: str, folder_id: str) -> Response | JsonResponse:
        """Attach or detach; 1.x clients get ``null``, 0.1.x ones (and the ``sources`` routes) the agent's state."""
        agent = self.get_agent(agent_id, with_tools=False)
        change = attachments.folder_attach if self.attach else attachments.folder_detach
        change(agent=agent, folder=self.folder(folder_id))
        if is_1x_client(self.request) and not self.always_state:
            return JsonResponse(None, safe=False)  # Letta's ``null``; DRF's renderer would send an empty body
        return agent_state_response(self, agent_id)


class AgentFolderDetachView(AgentFolderAttachView):
    attach = False

    @extend_schema(operation_id="agents_folders_detach", request=None, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str, folder_id: str) -> Response | JsonResponse:
        return self.change(agent_id, folder_id)


class AgentFileListView(FolderAPIView):
    @extend_schema(operation_id="agents_files_list", responses={200: AgentFilesPage, **errors(404, 422)})
    def get(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id, with_tools=False)
        rows, more = selectors.agent_file_page(
            agent=agent, is_open=self.query_bool("is_open"), **self.cursor(limit=100, order="desc")
        )
        return Response(
            {
                "files": [agent_file_json(row) for row in rows],
                "next_cursor": rows[-1].public_id if rows and more else None,
                "has_more": more,
            }
        )


class AgentFileOpenView(FolderAPIView):
    @extend_schema(operation_id="agents_files_open", request=None, responses={200: list[str], **errors(404)})
    def patch(self, request: Request, agent_id: str, file_id: str) -> Response:
        agent = self.get_agent(agent_id, with_tools=False)
        return Response(attachments.file_open(agent=agent, file=selectors.agent_file_get(agent=agent, file_id=file_id)))


class AgentFileCloseView(FolderAPIView):
    @extend_schema(operation_id="agents_files_close", request=None, responses={200: FileClosed, **errors(404)})
    def patch(self, request: Request, agent_id: str, file_id: str) -> Response:
        agent = self.get_agent(agent_id, with_tools=False)
        file = selectors.agent_file_get(agent=agent, file_id=file_id)
        attachments.file_close(agent=agent, file=file)
        return Response({"message": f"File id={file.public_id} successfully closed"})


class AgentFileCloseAllView(FolderAPIView):
    @extend_schema(operation_id="agents_files_close_all", request=None, responses={200: list[str], **errors(404)})
    def patch(self, request: Request, agent_id: str) -> Response:
        return Response(attachments.file_close_all(agent=self.get_agent(agent_id, with_tools=False)))


# --- /v1/sources: the same views, answering Letta's ``Source`` shape -------------------------


class SourceListView(FolderListView):
    sources = True


class SourceDetailView(FolderDetailView):
    sources = True


class SourceAttachView(AgentFolderAttachView):
    always_state = True


class SourceDetachView(AgentFolderDetachView):
    always_state = True
