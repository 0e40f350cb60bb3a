"""The chat's pages: the chat itself, its history and memory JSON, saving a block from the panel, and a
file dropped into the message box.

Every agent is looked up with ``agents.selectors.agent_get_or_404`` in the request's
organization, so an agent of another organization is a 404.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.decorators import membership_required
from agents import selectors
from agents import services as agent_services
from agents.approvals.inbox import approval_tools
from agents.chat import actions as chat
from agents.errors import ApplicationError, NotFound
from agents.llm.base import ToolSchema
from agents.llm.intents import example_call
from agents.llm.registry import model_choices, model_info
from agents.memory import services as memory_services
from agents.models import Agent, AgentBlock
from folders.drops import agent_file_drop
from folders.wire import file_json
from tools.models import AgentTool

if TYPE_CHECKING:
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest


def demo_suggestions(agent: Agent) -> list[str]:
    """What to type to see each feature of the demo model with this agent's tools."""
    if not agent.model.startswith("demo/"):
        return []
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
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    info = model_info(agent.model, organization=request.organization)
    config = {
        "agentId": agent.public_id,
        "agentName": agent.name,
        "socketPath": f"/ws/agents/{agent.public_id}/",
        "historyUrl": reverse("agents:chat_history", kwargs={"agent_id": agent.public_id}),
        "memoryUrl": reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id}),
        "uploadUrl": reverse("agents:chat_upload", kwargs={"agent_id": agent.public_id}),
        "suggestions": demo_suggestions(agent),
        "tools": approval_tools(agent),
        "inboxUrl": reverse("agents:approvals"),
        "userEmail": request.user.email,  # a row sent by this person is shown as "You"
    }
    return render(
        request,
        "agents/chat.html",
        {
            "agent": agent,
            "config": config,
            "is_demo": bool(info and info.is_demo),
            "model_info": info,
            "model_options": model_choices(organization=request.organization, current=agent.model),
        },
    )


@membership_required
@require_POST
def chat_model(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    """Switch the agent to another model in one step (``model``: a handle); the chat page again."""
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    handle = (request.POST.get("model") or "").strip()
    if handle and handle != agent.model:
        try:
            agent = agent_services.agent_update(agent=agent, model=handle)
        except ApplicationError as exc:
            messages.error(request, str(exc).removeprefix("INVALID_ARGUMENT: "))
        else:
            messages.success(request, f"{agent.name} now uses {agent.model}.")
    return redirect("agents:chat", agent_id=agent.public_id)


@membership_required
@require_GET
def chat_history(request: OrganizationHttpRequest, agent_id: str) -> JsonResponse:
    """A page of the chat's rows for the page (``?before=<message id>`` pages upward)."""
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    try:
        page: dict[str, Any] = chat.chat_history(agent=agent, before=request.GET.get("before") or None)
    except NotFound as exc:
        return JsonResponse({"detail": str(exc)}, status=404)
    return JsonResponse(page)


@membership_required
@require_GET
def chat_memory(request: OrganizationHttpRequest, agent_id: str) -> JsonResponse:
    """The memory panel's state: the agent's blocks and its context meter."""
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    return JsonResponse(chat.chat_memory(agent=agent))


@membership_required
@require_POST
def chat_block_save(request: OrganizationHttpRequest, agent_id: str, block_id: str) -> JsonResponse:
    """Save a block's value from the memory panel (``{"value": "..."}``); 400 with a ``detail`` when refused."""
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
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


@membership_required
@require_POST
def chat_upload(request: OrganizationHttpRequest, agent_id: str) -> JsonResponse:
    """A file dropped into the message box (multipart ``file``): stored in the agent's folder
    (``folders.drops``); answers the file as the API shows it and the note the page sends the agent
    once the file is processed; a refused file is its status (400, 413, 415) with a ``detail``."""
    agent = selectors.agent_get_or_404(organization=request.organization, agent_id=agent_id)
    upload = request.FILES.get("file")
    if upload is None:
        return JsonResponse({"detail": "Send the file as the multipart field 'file'."}, status=400)
    try:
        drop = agent_file_drop(agent=agent, upload=upload, user=request.user)
    except ApplicationError as exc:
        return JsonResponse({"detail": str(exc.detail).removeprefix("INVALID_ARGUMENT: ")}, status=exc.status_code)
    return JsonResponse({"file": file_json(drop.file, full_name=True), "folder": drop.folder.name, "note": drop.note})
