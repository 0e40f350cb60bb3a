"""Agent pages: list with search, create, edit, delete, and the chat (its page and its history JSON).

Every agent is looked up with ``get_for_org`` in the request's organization, so an
agent of another organization is a 404. Writes go through ``agents.services``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.db import transaction
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.access import get_for_org
from accounts.decorators import membership_required
from agents import chat, selectors, services
from agents.errors import ApplicationError, NotFound
from agents.forms import AgentForm, AgentSearchForm
from agents.llm.intents import example_call
from agents.llm.registry import model_info
from agents.models import Agent
from tools.models import AgentTool

if TYPE_CHECKING:
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest

AGENT_LIST_LIMIT = 200


@membership_required
@require_GET
def agent_list(request: OrganizationHttpRequest) -> HttpResponse:
    search = AgentSearchForm(request.GET)
    query = search.cleaned_data["q"].strip() if search.is_valid() else ""
    agents = selectors.agent_list(
        organization=request.organization, query_text=query or None, limit=AGENT_LIST_LIMIT, order="desc"
    )
    return render(request, "agents/list.html", {"agents": agents, "search": search, "query": query})


def _save_agent(request: OrganizationHttpRequest, form: AgentForm, agent: Agent | None) -> Agent:
    """Create or update the agent from a valid form: fields, tools, then each tool's approval policy."""
    data = form.cleaned_data
    tool_ids = [tool.public_id for tool in form.chosen_tools()]
    with transaction.atomic():
        if agent is None:
            agent = services.agent_create(
                organization=request.organization,
                created_by=request.user,
                name=data["name"],
                model=data["model"],
                system=data["system"],
                tool_ids=tool_ids,
            )
        else:
            agent = services.agent_update(
                agent=agent, name=data["name"], model=data["model"], system=data["system"], tool_ids=tool_ids
            )
        for tool_name, override in form.approval_overrides().items():
            # ``None`` clears the override, so the tool's own default applies again.
            services.agent_set_tool_approval(agent=agent, tool_name=tool_name, requires_approval=override)  # type: ignore[arg-type]
    return agent


def _agent_form_page(request: OrganizationHttpRequest, agent: Agent | None) -> HttpResponse:
    form = AgentForm(request.POST or None, organization=request.organization, agent=agent)
    if request.method == "POST" and form.is_valid():
        try:
            saved = _save_agent(request, form, agent)
        except ApplicationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Saved {saved.name}.")
            return redirect("agents:chat", agent_id=saved.public_id)
    return render(request, "agents/form.html", {"form": form, "agent": agent})


@membership_required
@require_http_methods(["GET", "POST"])
def agent_create(request: OrganizationHttpRequest) -> HttpResponse:
    return _agent_form_page(request, None)


@membership_required
@require_http_methods(["GET", "POST"])
def agent_edit(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    return _agent_form_page(request, get_for_org(Agent, request.organization, agent_id))


@membership_required
@require_http_methods(["GET", "POST"])
def agent_delete(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    agent = get_for_org(Agent, request.organization, agent_id)
    if request.method == "POST":
        services.agent_delete(agent=agent)
        messages.success(request, f"Deleted {agent.name}.")
        return redirect("agents:list")
    return render(request, "agents/confirm_delete.html", {"agent": agent})


def demo_suggestions(agent: Agent) -> list[str]:
    """What to type to see each feature of the demo model with this agent's tools."""
    if not agent.model.startswith("demo/"):
        return []
    from agents.llm.base import ToolSchema

    attached = AgentTool.objects.filter(agent=agent).select_related("tool").order_by("created_at")
    schemas = [
        ToolSchema(
            name=at.tool.name,
            description=at.tool.description,
            parameters=(at.tool.json_schema or {}).get("parameters") or {},
        )
        for at in attached
    ]
    calls = [example_call(schema) for schema in schemas]
    suggestions = ["Hello! What can you do?", *calls]
    if len(calls) >= 2:
        suggestions.append(" and ".join(calls[:2]))
    elif calls:
        suggestions.append(f"{calls[0]} and {calls[0]}")
    return suggestions


@membership_required
@require_GET
def agent_chat(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    agent = get_for_org(Agent, request.organization, agent_id)
    info = model_info(agent.model)
    config = {
        "agentId": agent.public_id,
        "agentName": agent.name,
        "socketPath": f"/ws/agents/{agent.public_id}/",
        "historyUrl": reverse("agents:chat_history", kwargs={"agent_id": agent.public_id}),
        "suggestions": demo_suggestions(agent),
    }
    return render(
        request,
        "agents/chat.html",
        {"agent": agent, "config": config, "is_demo": bool(info and info.is_demo), "model_info": info},
    )


@membership_required
@require_GET
def chat_history(request: OrganizationHttpRequest, agent_id: str) -> JsonResponse:
    """A page of the chat's rows for the page (``?before=<message id>`` pages upward)."""
    agent = get_for_org(Agent, request.organization, agent_id)
    try:
        page: dict[str, Any] = chat.chat_history(agent=agent, before=request.GET.get("before") or None)
    except NotFound as exc:
        return JsonResponse({"detail": str(exc)}, status=404)
    return JsonResponse(page)
