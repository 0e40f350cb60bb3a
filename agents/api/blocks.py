"""Core memory over ``/v1``: an agent's blocks (``core-memory``) and the organization's ``/v1/blocks``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView, QueryFilter, filter_parameters
from agents.api.fields import validated
from agents.api.memory_serializers import BlockCreateInput, BlockUpdateInput
from agents.api.openapi import cursor_parameters, errors
from agents.api.states import agent_state_of, agent_state_response
from agents.memory import selectors, services
from agents.wire.memory import Block, Memory, block_json, blocks_json, memory_json
from agents.wire.resources import AgentState

if TYPE_CHECKING:
    from rest_framework.request import Request

    from agents.models import Block as BlockRow

ERRORS = errors(400, 404, 409, 422)
PAGES = cursor_parameters("block", limit=100, order="asc")
EDITABLE = ("label", "value", "limit", "description", "read_only", "metadata", "tags")


def _block(view: OrgScopedAPIView, block_id: str) -> BlockRow:
    return selectors.block_get(organization=view.organization, block_id=block_id)


def _update_fields(request: Request) -> dict[str, Any]:
    data = validated(BlockUpdateInput, request.data)
    return {key: value for key, value in data.items() if key in EDITABLE and value is not None}


class AgentCoreMemoryView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_core_memory_retrieve", responses={200: Memory, **errors(404)})
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(memory_json(blocks_json(selectors.agent_blocks(self.get_agent(agent_id)))))


class AgentBlockListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_blocks_list",
        parameters=PAGES,
        responses={200: list[Block], **errors(404, 422)},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        if any(self.query_str(name) for name in ("after", "before", "limit", "order", "order_by")):
            blocks = selectors.agent_block_list(agent=agent, **self.cursor(limit=100, order="asc"))
        else:
            blocks = selectors.agent_block_list(agent=agent)  # prompt order, as 0.1.324 lists them
        return Response([block_json(block) for block in blocks])


class AgentBlockDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_blocks_retrieve", responses={200: Block, **errors(404)})
    def get(self, request: Request, agent_id: str, block_label: str) -> Response:
        block = selectors.agent_block_get(agent=self.get_agent(agent_id), label=block_label)
        return Response(block_json(block))

    @extend_schema(operation_id="agents_blocks_modify", request=BlockUpdateInput, responses={200: Block, **ERRORS})
    def patch(self, request: Request, agent_id: str, block_label: str) -> Response:
        block = selectors.agent_block_get(agent=self.get_agent(agent_id), label=block_label)
        return Response(block_json(services.block_update(block=block, **_update_fields(request))))


class AgentBlockAttachView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_blocks_attach", request=None, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str, block_id: str) -> Response:
        services.agent_attach_block(agent=self.get_agent(agent_id), block=_block(self, block_id))
        return agent_state_response(self, agent_id)


class AgentBlockDetachView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_blocks_detach", request=None, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str, block_id: str) -> Response:
        services.agent_detach_block(agent=self.get_agent(agent_id), block=_block(self, block_id))
        return agent_state_response(self, agent_id)


FILTERS = (
    QueryFilter("label", "text", "Only blocks with exactly this label."),
    QueryFilter("label_search", "text", "Only blocks whose label contains this text."),
    QueryFilter("value_search", "text", "Only blocks whose value contains this text."),
    QueryFilter("description_search", "text", "Only blocks whose description contains this."),
    QueryFilter("tags", "list", "Only blocks with any of these tags."),
    QueryFilter("match_all_tags", "flag", "Require every tag instead of any."),
)


class BlockListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="blocks_list",
        parameters=[
            *filter_parameters(FILTERS),
            OpenApiParameter("connected_to_agents_count_gt", int, description="Attached to more agents than this."),
            OpenApiParameter("connected_to_agents_count_lt", int, description="Attached to fewer agents than this."),
            OpenApiParameter("connected_to_agents_count_eq", int, description="Attached to exactly this many agents."),
            *PAGES,
        ],
        responses={200: list[Block], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        def count(name: str) -> int | None:
            return self.query_int(name, default=0, minimum=0, maximum=2**31 - 1) if self.query_str(name) else None

        blocks = selectors.block_list(
            organization=self.organization,
            **self.query_filters(FILTERS),
            connected_to_agents_count_gt=count("connected_to_agents_count_gt"),
            connected_to_agents_count_lt=count("connected_to_agents_count_lt"),
            connected_to_agents_count_eq=[c for c in [count("connected_to_agents_count_eq")] if c is not None],
            **self.cursor(limit=100, order="asc"),
        )
        return Response([block_json(block) for block in blocks])

    @extend_schema(operation_id="blocks_create", request=BlockCreateInput, responses={200: Block, **ERRORS})
    def post(self, request: Request) -> Response:
        fields = validated(BlockCreateInput, request.data)
        block = services.block_create(organization=self.organization, **fields)  # type: ignore[arg-type]
        return Response(block_json(block))


class BlockCountView(OrgScopedAPIView):
    @extend_schema(operation_id="blocks_count", responses={200: int})
    def get(self, request: Request) -> Response:
        return Response(selectors.block_count(organization=self.organization))


class BlockDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="blocks_retrieve", responses={200: Block, **errors(404)})
    def get(self, request: Request, block_id: str) -> Response:
        return Response(block_json(_block(self, block_id)))

    @extend_schema(operation_id="blocks_modify", request=BlockUpdateInput, responses={200: Block, **ERRORS})
    def patch(self, request: Request, block_id: str) -> Response:
        block = _block(self, block_id)
        return Response(block_json(services.block_update(block=block, **_update_fields(request))))

    @extend_schema(operation_id="blocks_delete", responses={200: Block, **errors(404)})
    def delete(self, request: Request, block_id: str) -> Response:
        block = _block(self, block_id)
        answer = block_json(block)
        services.block_delete(block=block)
        return Response(answer)


class BlockAgentsView(OrgScopedAPIView):
    @extend_schema(operation_id="blocks_agents_list", responses={200: list[AgentState], **errors(404)})
    def get(self, request: Request, block_id: str) -> Response:
        agents = selectors.block_agent_list(block=_block(self, block_id))
        return Response([agent_state_of(agent) for agent in agents])
