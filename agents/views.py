"""Agent pages: list with search, create, edit, delete, the chat (its page, its history and memory JSON)
and the agent's archival memory.

Every agent is looked up with ``get_for_org`` in the request's organization, so an
agent of another organization is a 404. Writes go through ``agents.services``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import get_for_org
from accounts.decorators import membership_required
from agents import chat, selectors, services
from agents.approval_inbox import approval_tools, inbox_state
from agents.errors import ApplicationError, NotFound
from agents.forms import AgentForm, AgentSearchForm, PassageForm, PassageSearchForm
from agents.llm.intents import example_call
from agents.llm.registry import model_info
from agents.memory import archival
from agents.memory import selectors as memory_selectors
from agents.memory import services as memory_services
from agents.models import Agent, AgentBlock
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
        for tool_name, (policy, condition) in form.approval_policies().items():
            services.agent_set_tool_policy(agent=agent, tool_name=tool_name, policy=policy, condition=condition)
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
    blocks = dict(
        AgentBlock.objects.filter(agent=agent).order_by("position", "id").values_list("block__label", "block__value")
    )
    calls = [example_call(schema, blocks) for schema in schemas]
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
        "memoryUrl": reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id}),
        "suggestions": demo_suggestions(agent),
        "tools": approval_tools(agent),
        "inboxUrl": reverse("agents:approvals"),
        "userEmail": request.user.email,  # a row sent by this person is shown as "You"
    }
    return render(
        request,
        "agents/chat.html",
        {"agent": agent, "config": config, "is_demo": bool(info and info.is_demo), "model_info": info},
    )


@membership_required
@require_GET
def approvals_inbox(request: OrganizationHttpRequest) -> HttpResponse:
    """Every approval request of the organization waiting for a person, newest first, answered in place."""
    state = inbox_state(request.organization)
    return render(request, "agents/approvals.html", {"inbox": state, "items": state["items"]})


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


@membership_required
@require_GET
def chat_memory(request: OrganizationHttpRequest, agent_id: str) -> JsonResponse:
    """The memory panel's state: the agent's blocks and its context meter."""
    agent = get_for_org(Agent, request.organization, agent_id)
    return JsonResponse(chat.chat_memory(agent=agent))


@membership_required
@require_POST
def chat_block_save(request: OrganizationHttpRequest, agent_id: str, block_id: str) -> JsonResponse:
    """Save a block's value from the memory panel (``{"value": "..."}``); 400 with a ``detail`` when refused."""
    agent = get_for_org(Agent, request.organization, agent_id)
    try:
        value = json.loads(request.body or b"{}").get("value")
    except (ValueError, AttributeError):
        value = None
    if not isinstance(value, str):
        return JsonResponse({"detail": "Send the block's new value as a string."}, status=400)
    try:
        block = memory_services.agent_block_set_value(agent=agent, block_id=block_id, value=value)
    except ApplicationError as exc:
        return JsonResponse({"detail": str(exc)}, status=exc.status_code)
    return JsonResponse({"block": memory_services.panel_block(block)})


ARCHIVAL_PAGE_ROWS = 100


@membership_required
@require_http_methods(["GET", "POST"])
def agent_archival(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    """The agent's archival memory: newest passages first, or the best matches of a search; add one."""
    agent = get_for_org(Agent, request.organization, agent_id)
    form = PassageForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            archival.passage_insert(agent=agent, text=form.cleaned_data["text"], tags=form.cleaned_data["tags"])
        except ApplicationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Added to archival memory.")
            return redirect("agents:archival", agent_id=agent.public_id)
    search = PassageSearchForm(request.GET)
    query = search.cleaned_data["q"].strip() if search.is_valid() else ""
    if query:
        passages = archival.passage_search(agent=agent, query=query, top_k=ARCHIVAL_PAGE_ROWS)
    else:
        passages = memory_selectors.passage_list(agent=agent, ascending=False, limit=ARCHIVAL_PAGE_ROWS)
    context = {
        "agent": agent,
        "form": form,
        "search": search,
        "query": query,
        "passages": passages,
        "total": archival.passage_count(organization_id=agent.organization_id, agent_id=agent.pk),
    }
    return render(request, "agents/archival.html", context)


@membership_required
@require_POST
def agent_archival_delete(request: OrganizationHttpRequest, agent_id: str, passage_id: str) -> HttpResponse:
    agent = get_for_org(Agent, request.organization, agent_id)
    try:
        passage = memory_selectors.passage_get(agent=agent, passage_id=passage_id)
    except NotFound:
        raise Http404("Passage not found") from None
    archival.passage_delete(passage=passage)
    messages.success(request, "Deleted the passage.")
    return redirect("agents:archival", agent_id=agent.public_id)
