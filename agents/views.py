"""Agent pages: list with search, create, edit, delete, and the agent's archival memory.

Every agent is looked up with ``agents.selectors.agent_get_or_404`` in the request's
organization, so an agent of another organization is a 404. Writes go through ``agents.services``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import membership_required
from accounts.pages import confirm_delete, search_query
from agents import selectors, services
from agents.errors import ApplicationError, NotFound
from agents.forms import AgentForm, AgentSearchForm, PassageForm, PassageSearchForm
from agents.memory import archival
from agents.memory import selectors as memory_selectors
from agents.models import Agent
from folders.attachments import agent_set_folders

if TYPE_CHECKING:
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest

AGENT_LIST_LIMIT = 200


@membership_required
@require_GET
def agent_list(request: OrganizationHttpRequest) -> HttpResponse:
    search = AgentSearchForm(request.GET)
    query = search_query(search)
    agents = selectors.agent_list(
        organization=request.organization,
        filters=selectors.AgentFilters(query_text=query or None),
        limit=AGENT_LIST_LIMIT,
        order="desc",
    )
    return render(request, "agents/list.html", {"agents": agents, "search": search, "query": query})


def _save_agent(request: OrganizationHttpRequest, form: AgentForm, agent: Agent | None) -> Agent:
    """Create or update the agent from a valid form: fields, tools, each tool's approval policy, then its
    folders (through the service the API uses, which attaches the file tools with the first folder)."""
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
        agent_set_folders(agent=agent, folders=form.chosen_folders())
    return agent


@membership_required
@require_http_methods(["GET", "POST"])
def agent_form(request: OrganizationHttpRequest, agent_id: str | None = None) -> HttpResponse:
    """A new agent, or the agent ``agent_id`` to edit."""
    agent = (
        selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
        if agent_id is not None
        else None
    )
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
def agent_delete(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    return confirm_delete(
        request,
        "agents/confirm_delete.html",
        {"agent": agent},
        delete=lambda: services.agent_delete(agent=agent),
        done=f"Deleted {agent.name}.",
        then="agents:list",
    )


ARCHIVAL_PAGE_ROWS = 100


@membership_required
@require_http_methods(["GET", "POST"])
def agent_archival(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    """The agent's archival memory: newest passages first, or the best matches of a search; add one."""
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
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
    query = search_query(search)
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
        "total": archival.passage_count(agent=agent),
    }
    return render(request, "agents/archival.html", context)


@membership_required
@require_POST
def agent_archival_delete(request: OrganizationHttpRequest, agent_id: str, passage_id: str) -> HttpResponse:
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    try:
        passage = memory_selectors.passage_get(agent=agent, passage_id=passage_id)
    except NotFound:
        raise Http404("Passage not found") from None
    archival.passage_delete(passage=passage)
    messages.success(request, "Deleted the passage.")
    return redirect("agents:archival", agent_id=agent.public_id)
