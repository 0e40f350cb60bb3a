"""``/v1/agents``: create, list, retrieve, modify, delete, and an agent's tools and approval policy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from typing_extensions import TypedDict

from agents import selectors, services
from agents.api import serializers as s
from agents.api.base import OrgScopedAPIView, QueryFilter, filter_parameters
from agents.api.fields import validated
from agents.api.openapi import cursor_parameters, errors
from agents.api.states import agent_state_of, agent_state_response, providers_of
from agents.errors import ValidationFailed
from agents.wire.resources import AgentState
from agents.wire.tools import Tool, tool_json

if TYPE_CHECKING:
    from rest_framework.request import Request


ERRORS = errors(400, 404, 422)


class Deleted(TypedDict):
    message: str


PAGINATION = cursor_parameters("agent", limit=50, order="desc")


# 1.x's ``include`` values. Every relationship is always in the answer; ``agent.pending_approval``
# also fills ``pending_approval`` (null otherwise, as Letta).
INCLUDE = (
    "agent.blocks",
    "agent.identities",
    "agent.managed_group",
    "agent.pending_approval",
    "agent.secrets",
    "agent.sources",
    "agent.tags",
    "agent.tools",
)
INCLUDE_PARAMETER = OpenApiParameter(
    "include", str, many=True, enum=list(INCLUDE), description="Relationships to include (repeat the parameter)."
)


def _env_vars(data: dict[str, Any]) -> dict[str, str] | None:
    # ``secrets`` replaced ``tool_exec_environment_variables`` in the SDK; accept both.
    for key in ("secrets", "tool_exec_environment_variables"):
        if data.get(key) is not None:
            return dict(data[key])
    return None


def _pending_approval_included(view: OrgScopedAPIView) -> bool:
    """Whether ``include`` asks for ``agent.pending_approval``; an unknown value is a 422."""
    include = view.query_list("include")
    unknown = [value for value in include if value not in INCLUDE]
    if unknown:
        message = f"Input should be one of {', '.join(repr(c) for c in INCLUDE)}"
        raise ValidationFailed([{"loc": ["query", "include"], "msg": message, "type": "enum"}])
    return "agent.pending_approval" in include


FILTERS = (
    QueryFilter("name", "text", "Only agents with exactly this name."),
    QueryFilter("query_text", "text", "Only agents whose name contains this text."),
    QueryFilter("tags", "list", "Only agents with any of these tags."),
    QueryFilter("match_all_tags", "flag", "Require every tag instead of any."),
)


class AgentListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_list",
        parameters=[
            *filter_parameters(FILTERS),
            OpenApiParameter("ascending", bool, description="Oldest first (legacy form of order=asc)."),
            INCLUDE_PARAMETER,
            *PAGINATION,
        ],
        responses={200: list[AgentState], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        ascending = self.query_bool("ascending")
        default_order = "asc" if ascending else "desc"
        agents = selectors.agent_list(
            organization=self.organization,
            filters=selectors.AgentFilters(**self.query_filters(FILTERS)),
            **self.cursor(limit=50, order=default_order),
        )
        pending = _pending_approval_included(self)
        message_ids = selectors.in_context_message_ids(agents)
        providers = providers_of(agents)
        return Response(
            [
                agent_state_of(agent, pending=pending, message_ids=message_ids[agent.pk], providers=providers)
                for agent in agents
            ]
        )

    @extend_schema(operation_id="agents_create", request=s.AgentCreateInput, responses={200: AgentState, **ERRORS})
    def post(self, request: Request) -> Response:
        data: dict[str, Any] = validated(s.AgentCreateInput, request.data)
        reasoning = data.get("reasoning")
        agent = services.agent_create(
            organization=self.organization,  # type: ignore[arg-type]
            created_by=self.acting_user,
            name=data.get("name"),
            model=data.get("model"),
            system=data.get("system"),
            description=data.get("description") or "",
            tool_ids=data.get("tool_ids") or (),
            tool_names=data.get("tools") or (),
            tool_rules=data.get("tool_rules") or (),
            tags=data.get("tags") or (),
            embedding=data.get("embedding"),
            metadata=data.get("metadata"),
            llm_config=data.get("llm_config"),
            context_window=data.get("context_window_limit"),
            max_tokens=data.get("max_tokens"),
            max_reasoning_tokens=data.get("max_reasoning_tokens") if reasoning is not False else 0,
            enable_reasoner=data.get("enable_reasoner") if reasoning is None else reasoning,
            tool_env_vars=_env_vars(data),
            include_base_tools=data.get("include_base_tools") is not False,
            agent_type=data.get("agent_type"),
            memory_blocks=data.get("memory_blocks"),
            block_ids=data.get("block_ids"),
            model_settings=data.get("model_settings"),
            compaction_settings=data.get("compaction_settings"),
            parallel_tool_calls=data.get("parallel_tool_calls"),
            initial_message_sequence=_initial_messages(data.get("initial_message_sequence")),
        )
        return agent_state_response(self, agent.public_id)


class AgentCountView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_count",
        parameters=filter_parameters(FILTERS),
        responses={200: int, **errors(422)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            selectors.agent_count(
                organization=self.organization,
                filters=selectors.AgentFilters(**self.query_filters(FILTERS)),
            )
        )


def _initial_messages(items: list[dict[str, Any]] | None) -> list[tuple[str, str]] | None:
    return None if items is None else [(item["role"], item["content"]) for item in items]


def _overrides(sent: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """A PATCH's top-level model settings, as ``llm_config`` names them: ``max_tokens`` sent as null clears it."""
    overrides = {
        "context_window": data.get("context_window_limit"),
        "parallel_tool_calls": data.get("parallel_tool_calls"),
    }
    chosen = {name: value for name, value in overrides.items() if value is not None}
    if "max_tokens" in sent:
        chosen["max_tokens"] = data.get("max_tokens")
    return chosen


class AgentDetailView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_retrieve",
        parameters=[
            OpenApiParameter("include_relationships", str, many=True, description="Accepted; all are included."),
            INCLUDE_PARAMETER,
        ],
        responses={200: AgentState, **errors(404, 422)},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(agent_state_of(self.get_agent(agent_id), pending=_pending_approval_included(self)))

    @extend_schema(operation_id="agents_modify", request=s.AgentUpdateInput, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        data: dict[str, Any] = validated(s.AgentUpdateInput, request.data)
        services.agent_update(
            agent=agent,
            **s.present(data, "name", "description", "system", "tags", "tool_ids", "tool_rules", "model"),
            **s.present(data, "embedding", "llm_config", "metadata", "reasoning", "model_settings"),
            **s.present(data, "compaction_settings"),
            overrides=_overrides(request.data if isinstance(request.data, dict) else {}, data),
            tool_env_vars=_env_vars(data),
        )
        return agent_state_response(self, agent_id)

    @extend_schema(operation_id="agents_delete", responses={200: Deleted, **errors(404)})
    def delete(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        services.agent_delete(agent=agent)
        return Response({"message": f"Agent id={agent_id} successfully deleted"})


class AgentToolListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_tools_list",
        parameters=cursor_parameters("tool", limit=1000, order="asc"),
        responses={200: list[Tool], **errors(404)},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        """In attachment order; ``after`` / ``before`` are tool ids."""
        agent = self.get_agent(agent_id)
        tools = selectors.agent_tool_list(agent=agent, **self.cursor(limit=1000, order="asc"))
        return Response([tool_json(tool) for tool in tools])


class AgentToolAttachView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_tools_attach", request=None, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str, tool_id: str) -> Response:
        agent = services.agent_attach_tool(agent=self.get_agent(agent_id), tool=self.get_tool(tool_id))
        return agent_state_response(self, agent.public_id)


class AgentToolDetachView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_tools_detach", request=None, responses={200: AgentState, **ERRORS})
    def patch(self, request: Request, agent_id: str, tool_id: str) -> Response:
        agent = services.agent_detach_tool(agent=self.get_agent(agent_id), tool=self.get_tool(tool_id))
        return agent_state_response(self, agent.public_id)


class AgentToolApprovalView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_tools_modify_approval",
        request=s.ToolApprovalInput,
        parameters=[
            OpenApiParameter(
                "requires_approval",
                OpenApiTypes.BOOL,
                description="Whether calls wait for a human (0.1.324); 1.x sends it in the body. One is required.",
            )
        ],
        responses={200: AgentState, **ERRORS},
    )
    def patch(self, request: Request, agent_id: str, tool_name: str) -> Response:
        agent = self.get_agent(agent_id)
        requires_approval = self.body_or_query_bool("requires_approval", required=True)
        agent = services.agent_set_tool_approval(
            agent=agent, tool_name=tool_name, requires_approval=bool(requires_approval)
        )
        return agent_state_response(self, agent.public_id)
