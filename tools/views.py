"""Tool pages: list, create from Python source (with a live schema preview), edit, delete.

Tools are looked up with ``get_for_org`` in the request's organization (another
organization's tool is a 404); writes go through ``tools.services``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import get_for_org
from accounts.decorators import membership_required
from accounts.pages import confirm_delete, search_query
from tools import selectors as tool_selectors
from tools import services
from tools.forms import ToolForm, ToolSearchForm, source_error_text
from tools.models import Tool, ToolKind
from tools.sandbox.selection import source_tools_notice
from tools.schema import ToolSourceError, derive_tool_schema

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from accounts.http import OrganizationHttpRequest

TOOL_LIST_LIMIT = 500
MAX_PREVIEW_SOURCE_CHARS = 200_000


@membership_required
@require_GET
def tool_list(request: OrganizationHttpRequest) -> HttpResponse:
    search = ToolSearchForm(request.GET)
    query = search_query(search)
    tools = tool_selectors.tool_list(
        organization=request.organization,
        filters=tool_selectors.ToolFilters(search=query or None),
        limit=TOOL_LIST_LIMIT,
        order="asc",
    )
    tools.sort(key=lambda tool: tool.name)
    context = {"tools": tools, "search": search, "query": query, "sandbox_notice": source_tools_notice()}
    return render(request, "tools/list.html", context)


def _save(request: OrganizationHttpRequest, form: ToolForm, tool: Tool | None) -> Tool | None:
    """Create or update the tool from a valid form; ``None`` (with the form's errors set) when refused."""
    fields: dict[str, Any] = {
        "source_code": form.cleaned_data["source_code"],
        "default_requires_approval": form.cleaned_data["default_requires_approval"],
    }
    if form.cleaned_data["description"].strip():
        fields["description"] = form.cleaned_data["description"].strip()
    try:
        if tool is None:
            return services.tool_create(organization=request.organization, created_by=request.user, **fields)
        return services.tool_update(tool=tool, **fields)
    except services.ToolValidationError as exc:  # a name taken, a schema the tool kind refuses
        form.add_error("source_code", str(exc))
    except ToolSourceError as exc:
        form.add_error("source_code", source_error_text(exc))
    return None


@membership_required
@require_http_methods(["GET", "POST"])
def tool_form(request: OrganizationHttpRequest, tool_id: str | None = None) -> HttpResponse:
    """A new tool from Python source, or the tool ``tool_id`` to edit (a built-in's page only shows it)."""
    tool = get_for_org(Tool, request.organization, tool_id) if tool_id is not None else None
    initial = None
    if tool is not None:
        derived = (tool.json_schema or {}).get("description", "")
        initial = {
            "source_code": tool.source_code,
            "description": tool.description if tool.description != derived else "",
            "default_requires_approval": tool.default_requires_approval,
        }
    form = ToolForm(request.POST or None, initial=initial)
    editable = tool is None or tool.kind == ToolKind.SOURCE
    if request.method == "POST" and editable and form.is_valid():
        saved = _save(request, form, tool)
        if saved is not None:
            messages.success(request, f"Saved tool {saved.name}.")
            return redirect("tools:list")
    schema_json = json.dumps(tool.json_schema, indent=2) if tool is not None else ""
    context = {"form": form, "tool": tool, "editable": editable, "schema_json": schema_json}
    return render(request, "tools/form.html", context)


@membership_required
@require_http_methods(["GET", "POST"])
def tool_delete(request: OrganizationHttpRequest, tool_id: str) -> HttpResponse:
    tool = get_for_org(Tool, request.organization, tool_id)
    return confirm_delete(
        request,
        "tools/confirm_delete.html",
        {"tool": tool, "agents": tool.agents.all()},
        delete=lambda: services.tool_delete(tool=tool),
        done=f"Deleted tool {tool.name}.",
        then="tools:list",
    )


@membership_required
@require_POST
def schema_preview(request: HttpRequest) -> JsonResponse:
    """The schema ``tools.schema`` derives from ``{"source_code": "..."}``, or its error and line.

    Session-authenticated and CSRF-checked like any form post; nothing is saved.
    """
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return JsonResponse({"detail": "The body must be JSON."}, status=400)
    source = body.get("source_code") if isinstance(body, dict) else None
    if not isinstance(source, str) or len(source) > MAX_PREVIEW_SOURCE_CHARS:
        return JsonResponse({"detail": "source_code must be a string of Python source."}, status=400)
    try:
        schema = derive_tool_schema(source)
    except ToolSourceError as exc:
        return JsonResponse({"ok": False, "error": exc.message, "line": exc.line})
    return JsonResponse({"ok": True, "schema": schema})
